// @ts-check
// freelook: what the held keys and a gamepad ask for, as the deflections the pages send (each
// in [−1, 1]). Pure: the pages pass in what is held, this module reads no DOM and no clock, so
// node's test runner checks it (tests/js/).

/**
 * @typedef {{ forward: number, left: number, turn: number, pan: number, tilt: number }} Axes
 * @typedef {{ axes: ArrayLike<number>, buttons: ArrayLike<{ pressed: boolean, value: number }>,
 *             mapping: string, id?: string }} Pad
 * @typedef {{ forward: number, left: number, turn: number, tilt: number, deadman: boolean,
 *             cartesian: number[], buttons: Record<string, boolean> }} XrControls
 */

/** Arm mode, joint by joint: the keys that jog joint k up and down. */
export const ARM_KEYS = Object.freeze([
  ["KeyQ", "KeyA"], ["KeyW", "KeyS"], ["KeyE", "KeyD"], ["KeyR", "KeyF"], ["KeyT", "KeyG"], ["KeyY", "KeyH"],
]);
const SLOW = 0.6;  // a key's deflection without Shift
const DEAD = 0.15;  // a stick's dead zone
const DEADMAN = 4;  // LB on a standard gamepad: held, the sticks drive

/** @param {number} v */
export const clamp = (v) => Math.max(-1, Math.min(1, v));

/** A stick's deflection past its dead zone, rescaled to reach ±1 at the end of its travel.
 * @param {number} v */
export const deadzone = (v) => (Math.abs(v) < DEAD ? 0 : (v - Math.sign(v) * DEAD) / (1 - DEAD));

/** +1 while `plus` is held, −1 while `minus` is, 0 for both or neither.
 * @param {ReadonlySet<string>} keys @param {string} plus @param {string} minus */
export const keyAxis = (keys, plus, minus) => (keys.has(plus) ? 1 : 0) - (keys.has(minus) ? 1 : 0);

/** Full speed with a Shift held, else SLOW.
 * @param {ReadonlySet<string>} keys */
export const boost = (keys) => (keys.has("ShiftLeft") || keys.has("ShiftRight") ? 1 : SLOW);

/** The first gamepad with the standard mapping, or null.
 * @param {ArrayLike<Pad | null> | null | undefined} pads
 * @returns {Pad | null} */
export function standardPad(pads) {
  return Array.from(pads || []).find((p) => p && p.mapping === "standard") || null;
}

/** @param {Pad | null} pad @returns {pad is Pad} */
const deadmanHeld = (pad) => !!(pad && pad.buttons[DEADMAN] && pad.buttons[DEADMAN].pressed);

/**
 * Free Look's keys, not clamped: W/S forward, A/D sideways (both slowed without Shift), Q/E
 * turn, R/F tilt.
 * @param {ReadonlySet<string>} keys
 * @returns {Axes}
 */
export function keyAxes(keys) {
  const b = boost(keys);
  return {
    forward: keyAxis(keys, "KeyW", "KeyS") * b, left: keyAxis(keys, "KeyA", "KeyD") * b,
    turn: keyAxis(keys, "KeyQ", "KeyE"), pan: 0, tilt: keyAxis(keys, "KeyR", "KeyF"),
  };
}

/**
 * The drive axes of Free Look or Tank from held keys, the mouse (Free Look's turn and tilt)
 * and a standard gamepad (left stick translates, right stick turns and tilts, only while LB is
 * held). Tank: A/D turn the chassis and Q/E pan the camera.
 * @param {ReadonlySet<string>} keys
 * @param {string} mode "free_look" or "tank"
 * @param {{ turn: number, tilt: number }} mouse
 * @param {Pad | null} pad
 * @returns {Axes}
 */
export function driveAxes(keys, mode, mouse, pad) {
  let { forward, left, turn, pan, tilt } = keyAxes(keys);
  if (mode === "tank") { pan = turn; turn = left; left = 0; }
  turn += mouse.turn; tilt += mouse.tilt;
  if (deadmanHeld(pad)) {
    forward += -deadzone(pad.axes[1]);
    if (mode === "tank") { turn += -deadzone(pad.axes[0]); pan += -deadzone(pad.axes[2]); }
    else { left += -deadzone(pad.axes[0]); turn += -deadzone(pad.axes[2]); }
    tilt += -deadzone(pad.axes[3]);
  }
  return { forward: clamp(forward), left: clamp(left), turn: clamp(turn), pan: clamp(pan), tilt: clamp(tilt) };
}

/** The tool point's keys, slowed without Shift: W/S forward, A/D left, R/F up.
 * @param {ReadonlySet<string>} keys */
export function keyCartesian(keys) {
  const b = boost(keys);
  return [keyAxis(keys, "KeyW", "KeyS"), keyAxis(keys, "KeyA", "KeyD"), keyAxis(keys, "KeyR", "KeyF")].map((v) => v * b);
}

/**
 * The arm's jog: the tool point's three axes (Cartesian) or one value per joint (ARM_KEYS), from
 * keys and, while LB is held, a standard gamepad's sticks and triggers.
 * @param {ReadonlySet<string>} keys
 * @param {number} joints how many joints the arm has
 * @param {boolean} cartesian
 * @param {Pad | null} pad
 * @returns {{ cartesian: boolean, values: number[] }}
 */
export function armJog(keys, joints, cartesian, pad) {
  const b = boost(keys);
  let values = cartesian
    ? keyCartesian(keys)
    : Array.from({ length: joints }, (_, j) => (ARM_KEYS[j] ? keyAxis(keys, ARM_KEYS[j][0], ARM_KEYS[j][1]) : 0) * b);
  if (deadmanHeld(pad)) {
    const axes = pad.axes, buttons = pad.buttons;
    const trig = (buttons[7] ? buttons[7].value : 0) - (buttons[6] ? buttons[6].value : 0);
    const sticks = cartesian
      ? [-deadzone(axes[1]), -deadzone(axes[0]), -deadzone(axes[3])]
      : [-deadzone(axes[0]), -deadzone(axes[1]), -deadzone(axes[3]), -deadzone(axes[2]), trig];
    values = values.map((v, j) => v + (sticks[j] || 0));
  }
  return { cartesian, values: values.map(clamp) };
}

/** Whether every axis is zero (the page then sends once, not on every tick).
 * @param {Axes} a */
export const axesIdle = (a) => a.forward === 0 && a.left === 0 && a.turn === 0 && a.pan === 0 && a.tilt === 0;

/**
 * What a headset's two controllers (WebXR's "xr-standard" gamepads) ask for: the left stick
 * drives (forward, sideways) and jogs the gripper in x, y; the right one turns and tilts, and
 * jogs z; a grip held on either is the deadman. Buttons by name: x, y, open (left trigger) on
 * the left; a, b, close (right trigger) on the right.
 * @param {Iterable<{ handedness: string, gamepad?: Pad | null }>} sources
 * @returns {XrControls}
 */
export function xrControllers(sources) {
  /** @type {XrControls} */
  const out = { forward: 0, left: 0, turn: 0, tilt: 0, deadman: false, cartesian: [0, 0, 0], buttons: {} };
  for (const source of sources) {
    const gp = source.gamepad;
    if (!gp || gp.mapping !== "xr-standard") continue;
    /** @param {number} i */
    const b = (i) => (gp.buttons[i] ? gp.buttons[i].value : 0);
    const sx = deadzone(gp.axes[2] || 0), sy = deadzone(gp.axes[3] || 0);
    if (b(1) > 0.5) out.deadman = true;  // a grip (squeeze) held
    if (source.handedness === "left") {
      out.forward = -sy; out.left = -sx;
      out.cartesian[0] = -sy; out.cartesian[1] = -sx;
      out.buttons.x = b(4) > 0.5; out.buttons.y = b(5) > 0.5; out.buttons.open = b(0) > 0.5;
    } else {
      out.turn = -sx; out.tilt = -sy;
      out.cartesian[2] = -sy;
      out.buttons.a = b(4) > 0.5; out.buttons.b = b(5) > 0.5; out.buttons.close = b(0) > 0.5;
    }
  }
  return out;
}

/** The drive modes a page starts in, the first one the robot and the wire profile offer. */
export const START_MODES = Object.freeze(["free_look", "tank", "keyboard"]);

/**
 * The mode the page drives in: `wanted` while it is offered, else the first of START_MODES
 * that is (Keyboard, which both profiles carry, at the last).
 * @param {string | null} wanted
 * @param {Record<string, string>} unoffered the modes not offered, each with why
 * @returns {string}
 */
export function offeredMode(wanted, unoffered) {
  if (wanted && !unoffered[wanted]) return wanted;
  return START_MODES.find((m) => !unoffered[m]) || "keyboard";
}
