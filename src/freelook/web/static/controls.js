// @ts-check
// freelook: what the held keys, a gamepad and a touch screen's sticks ask for, as the deflections the pages send (each
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
 * The drive axes of Free Look or Tank from held keys, the mouse (Free Look's turn and tilt), a
 * standard gamepad (its sticks only while LB is held) and the on-screen sticks of a touch
 * screen (`touch`: the four axes laid out as a gamepad's, touchSticks; a finger on a stick is
 * its own deadman). Both sets of sticks go through stickAxes: the left stick translates, the
 * right one turns and tilts. Tank: A/D turn the chassis and Q/E pan the camera.
 * @param {ReadonlySet<string>} keys
 * @param {string} mode "free_look" or "tank"
 * @param {{ turn: number, tilt: number }} mouse
 * @param {Pad | null} pad
 * @param {ArrayLike<number> | null} [touch]
 * @returns {Axes}
 */
export function driveAxes(keys, mode, mouse, pad, touch = null) {
  const a = keyAxes(keys);
  if (mode === "tank") { a.pan = a.turn; a.turn = a.left; a.left = 0; }
  a.turn += mouse.turn; a.tilt += mouse.tilt;
  for (const axes of [deadmanHeld(pad) ? pad.axes : null, touch]) {
    if (!axes) continue;
    const s = stickAxes(axes, mode);
    a.forward += s.forward; a.left += s.left; a.turn += s.turn; a.pan += s.pan; a.tilt += s.tilt;
  }
  return { forward: clamp(a.forward), left: clamp(a.left), turn: clamp(a.turn), pan: clamp(a.pan), tilt: clamp(a.tilt) };
}

/**
 * What two sticks ask for, a gamepad's axes order [lx, ly, rx, ry] (+x right, +y down, each in
 * [−1, 1]), past the dead zone: the left stick forward and, in Free Look, sideways (Tank: it
 * turns the chassis); the right stick turns (Tank: pans the camera) and tilts.
 * @param {ArrayLike<number>} axes @param {string} mode
 * @returns {Axes}
 */
export function stickAxes(axes, mode) {
  const lx = -deadzone(axes[0] || 0), rx = -deadzone(axes[2] || 0);
  const forward = -deadzone(axes[1] || 0), tilt = -deadzone(axes[3] || 0);
  if (mode === "tank") return { forward, left: 0, turn: lx, pan: rx, tilt };
  return { forward, left: lx, turn: rx, pan: 0, tilt };
}

/**
 * A finger's offset from where it touched a stick down (screen px, +y down) as the stick's
 * deflection: the offset over the stick's reach, held inside the unit circle (a finger past the
 * rim is full deflection in its direction).
 * @param {number} dx @param {number} dy @param {number} reach px for a full deflection
 * @returns {[number, number]}
 */
export function stickDeflection(dx, dy, reach) {
  if (!(reach > 0)) return [0, 0];
  const x = dx / reach, y = dy / reach, r = Math.hypot(x, y);
  return r > 1 ? [x / r, y / r] : [x, y];
}

/**
 * The on-screen sticks as a gamepad's four axes [lx, ly, rx, ry], or null when no finger is on
 * either (the page then adds nothing of them).
 * @param {[number, number] | null} move the left stick's deflection, null with no finger on it
 * @param {[number, number] | null} turn the right stick's
 * @returns {number[] | null}
 */
export function touchSticks(move, turn) {
  if (!move && !turn) return null;
  return [...(move || [0, 0]), ...(turn || [0, 0])];
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
