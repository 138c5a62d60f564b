// What the held keys, a gamepad and a touch screen's sticks ask for (controls.js): the deflections the cockpit and the
// station send, each in [−1, 1].
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  ARM_KEYS, armJog, axesIdle, boost, clamp, deadzone, driveAxes, keyAxes, keyAxis, keyCartesian, standardPad,
  stickAxes, stickDeflection, touchSticks, xrControllers,
} from "../../src/freelook/web/static/controls.js";

const held = (...codes) => new Set(codes);
const still = { turn: 0, tilt: 0 };
const ZERO = { forward: 0, left: 0, turn: 0, pan: 0, tilt: 0 };
/** A standard gamepad: axes [lx, ly, rx, ry], LB (button 4) held or not, triggers. */
function pad(axes, lb, { lt = 0, rt = 0, mapping = "standard" } = {}) {
  const buttons = Array.from({ length: 16 }, () => ({ pressed: false, value: 0 }));
  buttons[4] = { pressed: lb, value: lb ? 1 : 0 };
  buttons[6] = { pressed: lt > 0, value: lt };
  buttons[7] = { pressed: rt > 0, value: rt };
  return { axes, buttons, mapping, id: "pad" };
}

test("a key pair gives +1, −1, or 0 for both or neither", () => {
  assert.equal(keyAxis(held("KeyW"), "KeyW", "KeyS"), 1);
  assert.equal(keyAxis(held("KeyS"), "KeyW", "KeyS"), -1);
  assert.equal(keyAxis(held("KeyW", "KeyS"), "KeyW", "KeyS"), 0);
  assert.equal(keyAxis(held(), "KeyW", "KeyS"), 0);
});

test("no key held: every axis zero, and idle", () => {
  const a = driveAxes(held(), "free_look", still, null);
  assert.deepEqual(a, ZERO);
  assert.ok(axesIdle(a));
  assert.ok(!axesIdle({ ...ZERO, tilt: -0.1 }));
});

test("Free Look: W/S and A/D are slowed without Shift, Q/E and R/F are not", () => {
  assert.deepEqual(driveAxes(held("KeyW", "KeyA", "KeyQ", "KeyR"), "free_look", still, null),
    { forward: 0.6, left: 0.6, turn: 1, pan: 0, tilt: 1 });
  assert.deepEqual(driveAxes(held("KeyS", "KeyD", "KeyE", "KeyF", "ShiftLeft"), "free_look", still, null),
    { forward: -1, left: -1, turn: -1, pan: 0, tilt: -1 });
  assert.equal(boost(held("ShiftRight")), 1);
  assert.equal(boost(held("ControlLeft")), 0.6);
});

test("Tank: A/D turn the chassis, Q/E pan the camera, nothing moves sideways", () => {
  assert.deepEqual(driveAxes(held("KeyW", "KeyA", "KeyE"), "tank", still, null),
    { forward: 0.6, left: 0, turn: 0.6, pan: -1, tilt: 0 });
});

test("the mouse adds to turn and tilt, and the sum stays within ±1", () => {
  assert.deepEqual(driveAxes(held("KeyQ"), "free_look", { turn: 0.5, tilt: -0.25 }, null),
    { forward: 0, left: 0, turn: 1, pan: 0, tilt: -0.25 });
  assert.equal(driveAxes(held("KeyE"), "free_look", { turn: 0.5, tilt: 0 }, null).turn, -0.5);
});

test("a gamepad drives only while LB (the deadman) is held", () => {
  const sticks = [0.5, -1, 1, 0.15];
  assert.deepEqual(driveAxes(held(), "free_look", still, pad(sticks, false)), ZERO);
  const a = driveAxes(held(), "free_look", still, pad(sticks, true));
  assert.equal(a.forward, 1);  // stick up is negative
  assert.ok(Math.abs(a.left - -(0.35 / 0.85)) < 1e-12);
  assert.equal(a.turn, -1);
  assert.equal(a.tilt, 0);  // inside the dead zone
  const t = driveAxes(held(), "tank", still, pad(sticks, true));
  assert.ok(Math.abs(t.turn - -(0.35 / 0.85)) < 1e-12);
  assert.equal(t.pan, -1);
  assert.equal(t.left, 0);
});

test("keys and a stick together stay within ±1", () => {
  const a = driveAxes(held("KeyW", "ShiftLeft"), "free_look", still, pad([0, -1, 0, 0], true));
  assert.equal(a.forward, 1);
});

test("the touch sticks drive as a gamepad's sticks do, with no deadman button", () => {
  const sticks = [0.5, -1, 1, 0.15];
  // the same deflections: what LB held gives the gamepad, a finger on each stick gives
  assert.deepEqual(driveAxes(held(), "free_look", still, null, sticks),
    driveAxes(held(), "free_look", still, pad(sticks, true)));
  assert.deepEqual(driveAxes(held(), "tank", still, null, sticks),
    driveAxes(held(), "tank", still, pad(sticks, true)));
  assert.deepEqual(driveAxes(held(), "free_look", still, null, null), ZERO);
  // left stick up and right: forward and to the right; right stick left: turn left
  const a = driveAxes(held(), "free_look", still, null, [0.6, -0.6, -1, 0]);
  assert.ok(a.forward > 0.5 && a.left < -0.5 && a.turn === 1 && a.tilt === 0, JSON.stringify(a));
  // a gamepad and the touch sticks together add up, within ±1
  const both = driveAxes(held(), "free_look", still, pad([0, -1, 0, 0], true), [0, -1, 1, 0]);
  assert.equal(both.forward, 1);
  assert.equal(both.turn, -1);
});

test("stickAxes: inside the dead zone nothing, Tank turns the chassis with the left stick", () => {
  for (const mode of ["free_look", "tank"])
    assert.ok(axesIdle(stickAxes([0.1, -0.1, 0.14, 0], mode)), mode);
  const t = stickAxes([-1, 0, 1, -1], "tank");
  assert.equal(t.turn, 1);
  assert.equal(t.pan, -1);
  assert.equal(t.tilt, 1);
  assert.equal(t.left, 0);
});

test("a finger's offset is the stick's deflection, held inside the unit circle", () => {
  assert.deepEqual(stickDeflection(30, -15, 60), [0.5, -0.25]);
  const [x, y] = stickDeflection(300, -400, 60);  // far past the rim: full, in its direction
  assert.ok(Math.abs(x - 0.6) < 1e-12 && Math.abs(y - -0.8) < 1e-12);
  assert.deepEqual(stickDeflection(10, 10, 0), [0, 0]);
  assert.deepEqual(stickDeflection(10, 10, NaN), [0, 0]);
});

test("the touch sticks as a gamepad's four axes, null with no finger on either", () => {
  assert.equal(touchSticks(null, null), null);
  assert.deepEqual(touchSticks([0.5, -1], null), [0.5, -1, 0, 0]);
  assert.deepEqual(touchSticks(null, [-1, 0.25]), [0, 0, -1, 0.25]);
  assert.deepEqual(touchSticks([0, 0], [0, 0]), [0, 0, 0, 0]);
});

test("the dead zone: nothing inside it, ±1 at the end of travel, continuous at its edge", () => {
  for (const v of [0, 0.1, -0.149]) assert.equal(Math.abs(deadzone(v)), 0);
  assert.equal(deadzone(1), 1);
  assert.equal(deadzone(-1), -1);
  assert.ok(Math.abs(deadzone(0.15)) < 1e-12);
  assert.ok(deadzone(0.16) > 0 && deadzone(0.16) < 0.02);
  assert.equal(clamp(3), 1);
  assert.equal(clamp(-Infinity), -1);
});

test("only a standard-mapping gamepad counts", () => {
  assert.equal(standardPad(null), null);
  assert.equal(standardPad([null, pad([0, 0, 0, 0], true, { mapping: "" })]), null);
  const p = pad([0, 0, 0, 0], true);
  assert.equal(standardPad([null, pad([0, 0, 0, 0], true, { mapping: "xr-standard" }), p]), p);
});

test("the arm, joint by joint: each joint's key pair, slowed without Shift", () => {
  const jog = armJog(held("KeyQ", "KeyS", "KeyH"), 6, false, null);
  assert.deepEqual(jog, { cartesian: false, values: [0.6, -0.6, 0, 0, 0, -0.6] });
  assert.equal(armJog(held("KeyQ", "ShiftLeft"), 6, false, null).values[0], 1);
  // an arm with more joints than key pairs: the rest hold still
  assert.deepEqual(armJog(held("KeyY"), 8, false, null).values, [0, 0, 0, 0, 0, 0.6, 0, 0]);
  assert.equal(ARM_KEYS.length, 6);
});

test("the arm, Cartesian: W/S forward, A/D left, R/F up, whatever the joints", () => {
  assert.deepEqual(armJog(held("KeyW", "KeyD", "KeyR"), 5, true, null), { cartesian: true, values: [0.6, -0.6, 0.6] });
  assert.deepEqual(keyCartesian(held("KeyS", "ShiftLeft")), [-1, 0, 0]);
});

test("the arm's gamepad: sticks and triggers while LB is held, clamped", () => {
  const p = pad([1, -1, 0, 0.5], true, { lt: 0.25, rt: 1 });
  const joints = armJog(held("KeyQ"), 5, false, p).values;
  assert.ok(Math.abs(joints[0] - -0.4) < 1e-12);  // Q's 0.6 and the left stick full right
  assert.equal(joints[1], 1);  // −(−1)
  assert.ok(Math.abs(joints[2] - -(0.35 / 0.85)) < 1e-12);
  assert.equal(joints[3], 0);
  assert.equal(joints[4], 0.75);  // right trigger minus left
  const tool = armJog(held(), 5, true, p).values;
  assert.deepEqual(tool.map((v) => Math.round(v * 1e9) / 1e9), [1, -1, Math.round(-(0.35 / 0.85) * 1e9) / 1e9]);
  assert.deepEqual(armJog(held(), 5, true, pad([1, 1, 1, 1], false)).values.map(Math.abs), [0, 0, 0]);
});

test("keyAxes is Free Look's keys before any clamp (the station adds its controllers)", () => {
  assert.deepEqual(keyAxes(held("KeyW", "KeyQ")), { forward: 0.6, left: 0, turn: 1, pan: 0, tilt: 0 });
});

/** A headset controller: WebXR's xr-standard gamepad, sticks on axes 2 and 3. */
function hand(handedness, [sx, sy], pressed = [], mapping = "xr-standard") {
  const buttons = Array.from({ length: 6 }, (_, i) => ({ pressed: pressed.includes(i), value: pressed.includes(i) ? 1 : 0 }));
  return { handedness, gamepad: { axes: [0, 0, sx, sy], buttons, mapping } };
}

test("headset controllers: the left stick drives and jogs x, y; the right turns, tilts, jogs z", () => {
  const out = xrControllers([hand("left", [-1, -1]), hand("right", [1, 0.5], [1])]);
  assert.equal(out.forward, 1);  // stick pushed away (−y) is forward
  assert.equal(out.left, 1);
  assert.equal(out.turn, -1);
  assert.ok(Math.abs(out.tilt - -(0.5 - 0.15) / 0.85) < 1e-12);  // past the dead zone, rescaled
  assert.deepEqual(out.cartesian, [1, 1, out.tilt]);
  assert.equal(out.deadman, true);  // the right grip (button 1)
});

test("headset controllers: inside the dead zone, no grip, other mappings: nothing asked", () => {
  const out = xrControllers([hand("left", [0.1, -0.14]), hand("right", [0.9, 0.9], [], "standard")]);
  for (const v of [out.forward, out.left, out.turn, out.tilt, ...out.cartesian]) assert.ok(v === 0, `${v}`);
  assert.equal(out.deadman, false);
});

test("headset controllers: buttons by name on each hand", () => {
  const out = xrControllers([hand("left", [0, 0], [0, 4]), hand("right", [0, 0], [5])]);
  assert.deepEqual(out.buttons, { x: true, y: false, open: true, a: false, b: true, close: false });
});
