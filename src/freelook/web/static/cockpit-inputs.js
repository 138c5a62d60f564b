// @ts-check
// freelook cockpit: the operator's inputs. The drive mode and its panel (only the modes the
// robot and the wire profile offer; the buttons show the mode the robot reports it is in, the
// one asked for apart, and a refused mode with its reason); held keys, the mouse (Free Look,
// while captured) and a gamepad turned into axes (controls.js) and sent on every change,
// repeated while not zero so the robot's watchdog stays fed; a touch screen's two sticks
// (touch-sticks.js) are read as a gamepad's, zero sent once on release; the
// arm's jogs; the e-stop, which latches (Space or a press on the button engages it in every
// mode and with the focus anywhere; only a click on the button releases it); the linear, trajectory and transmission
// panels' buttons. A frozen picture or a hidden page stops the page's motion (guard.js): zero
// once, the motion inputs dropped, until its button releases it.
import { armJog, axesIdle, driveAxes, offeredMode, standardPad } from "./controls.js";
import { TICK_MS } from "./freshness.js";
import { frozenLimit, mayMove, newGuard, noteCauses, release, releasable, stopCauses, stopText } from "./guard.js";
import { setupSticks } from "./touch-sticks.js";

/** @typedef {{ send: (obj: object) => void, repaintMap: () => void, tick: () => void }} Page */

/** @param {string} id */
const $ = (id) => document.getElementById(id);
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ ($(id));

// the cockpit's state and page, given by setupInputs
/** @type {any} */
let state = null;
/** @type {Page} */
let page = null;
/** the touch screen's sticks (touch-sticks.js), given by setupInputs
 * @type {{ axes: () => number[] | null, drop: () => void }} */
let sticks = null;

/** @type {Record<string, string>} */
const KEY_HELP = {
  keyboard: "↑/↓ ±20 mm/s · ←/→ ±2 °/s · Space E-stop: the thesis keyboard's stop, latched (the button releases it)",
  tank: "W/S forward/back · A/D turn · Q/E pan the camera · Space E-stop (the button releases it)",
  free_look: "W/S forward/back · A/D sideways (camera frame) · mouse or Q/E turns · R/F tilt · Esc or a click frees the mouse · Space E-stop (the button releases it)",
  linear: "shuttles between the two x points · arrow keys take over",
  trajectory: "ellipse or clicked waypoints · arrow keys take over",
  touch: "left stick moves the camera (forward, sideways) · right stick turns and tilts · the red E-STOP engages the stop; once engaged, a tap on it releases it",
  arm: "joints: Q/A, W/S, E/D, R/F, T/G jog joints 1–5 · C Cartesian: W/S forward/back, A/D left/right, R/F up/down · Z close, X open the gripper · Shift full speed · gamepad (LB held): sticks jog · Space E-stop (the button releases it)",
};
/** The modes the page does not offer (the wire profile or the robot cannot run them), each with
 * why: the station's, from the hello and each state. */
function unoffered() {
  return state.unoffered || {};
}

/** The page's drive mode: the page shows its panel and key help, and (notify) the station is
 * told. A mode not offered is not taken: the page says why, and keeps the mode it had.
 * @param {string} mode @param {boolean} [notify] */
export function setMode(mode, notify = true) {
  const why = unoffered()[mode];
  if (why) { state.pageRefusal = why; showModes(); return; }
  state.pageRefusal = null;
  if (mode !== state.mode) state.previousMode = state.mode;
  state.mode = mode;
  if (notify) state.askedAt = performance.now();
  if (mode !== "free_look" && document.pointerLockElement) document.exitPointerLock();
  showModes();
  $("linear-panel").classList.toggle("shown", mode === "linear");
  $("traj-panel").classList.toggle("shown", mode === "trajectory");
  const stickMode = mode === "free_look" || mode === "tank";
  const touch = stickMode && document.body.classList.contains("touch");
  $("keys-help").textContent = touch ? KEY_HELP.touch : KEY_HELP[mode] || "";
  document.body.classList.toggle("stick-mode", stickMode);
  if (!stickMode) sticks.drop();
  $("camera-hint").style.display = mode === "free_look" ? "" : "none";
  $("arm-panel").classList.toggle("shown", mode === "arm");
  document.body.classList.toggle("arm-mode", mode === "arm");
  if (notify) page.send({ type: "mode", mode });
  state.lastAxes = "";
  state.lastArm = "";
  sendAxes(true);
}

/** The mode buttons and the note under them: the button of the mode the robot reports is
 * lit (never the one only asked for, which is outlined until the robot is in it); a mode not
 * offered is greyed out, and the note says why; the newest refusal is said first. */
export function showModes() {
  const s = state.last, robot = s ? s.mode : null, not = unoffered();
  document.querySelectorAll("[data-mode]").forEach((el) => {
    const b = /** @type {HTMLButtonElement} */ (el), mode = b.dataset.mode;
    b.classList.toggle("active", robot === mode);
    b.classList.toggle("asked", mode === state.mode && robot !== mode);
    b.disabled = !!not[mode];
    if (b.dataset.title === undefined) b.dataset.title = b.title;
    b.title = not[mode] || b.dataset.title;
  });
  const refusal = s && s.modes ? s.modes.refusal : null;
  const lines = [];
  if (state.pageRefusal) lines.push(state.pageRefusal);
  if (refusal && !lines.includes(refusal.reason)) lines.push(refusal.reason);
  const shown = new Set(lines);
  /** @type {string[]} */
  const standing = [];
  document.querySelectorAll("[data-mode]").forEach((el) => {
    const b = /** @type {HTMLElement} */ (el), why = not[b.dataset.mode];
    if (why && !b.hidden && !shown.has(why)) { standing.push(why); shown.add(why); }
  });
  $("mode-refusal").textContent = lines.join(" · ");
  $("mode-refusal").hidden = !lines.length;
  $("mode-unoffered").textContent = standing.join(" · ");
  $("mode-unoffered").hidden = !standing.length;
  const robotSide = input("traj-robot");
  const carried = !state.hello || !state.hello.modes || state.hello.modes.robot_side_tracking !== false;
  robotSide.disabled = !carried;
  robotSide.parentElement.title = carried ? "" : "the thesis profile carries no trajectories: operator-side only";
  if (!carried && robotSide.checked) input("traj-operator").checked = true;
}

/** What the station says it offers, and what the robot refused, as each state or hello
 * brings it: the page leaves a mode it may no longer drive in for one it may, and a mode the
 * robot refused after it was asked for for the one before (or the first offered).
 * @param {import("./messages.js").Modes | undefined} modes the message's "modes" block
 * @param {boolean} fresh a new hello: a new socket or another robot, so the mode is sent again */
export function takeModes(modes, fresh) {
  state.unoffered = (modes && modes.unoffered) || {};
  const refusal = modes ? modes.refusal : null;
  const robot = state.last ? state.last.mode : null;
  const wanted = state.chosen ? state.mode : null;
  if (refusal && refusal.mode === state.mode && robot !== state.mode && state.askedAt
      && performance.now() - refusal.age * 1000 >= state.askedAt - 100) {
    // refused after it was asked for: back to the mode before it, or the first offered
    state.askedAt = 0;
    const back = state.previousMode && state.previousMode !== refusal.mode ? state.previousMode : null;
    setMode(offeredMode(back, { ...state.unoffered, [refusal.mode]: refusal.reason }), true);
    return;
  }
  const mode = offeredMode(wanted, state.unoffered);
  if (fresh || mode !== state.mode) setMode(mode, true);
  else showModes();
}

// the held keys and a gamepad: controls.js
function pad() {
  return standardPad(navigator.getGamepads ? navigator.getGamepads() : []);
}

function armFromInputs() {
  const n = state.hello && state.hello.arm ? state.hello.arm.joints.length : 0;
  return armJog(state.keys, n, input("arm-cartesian").checked, pad());
}

/** @param {boolean} [force] */
function sendArm(force = false) {
  const a = armFromInputs();
  if (!mayMove(guard, a.values.every((v) => v === 0))) a.values = a.values.map(() => 0);
  const key = JSON.stringify(a);
  const zero = a.values.every((v) => v === 0);
  if (force || key !== state.lastArm || !zero) {
    page.send(a.cartesian ? { type: "arm", cartesian: a.values } : { type: "arm", joints: a.values });
    state.lastArm = key;
  }
  $("input-state").textContent = zero ? "idle" : (a.cartesian ? "tool " : "joints ") + a.values.map((v) => v.toFixed(1)).join(" ");
}

function axesFromInputs() {
  // mouse-look: decays to zero when the mouse stops
  if (performance.now() - state.lastMouse > 120) { state.mouseTurn = 0; state.mouseTilt = 0; }
  const gp = pad();
  state.gamepad = gp ? gp.id : null;
  return driveAxes(state.keys, state.mode, { turn: state.mouseTurn, tilt: state.mouseTilt }, gp, sticks.axes());
}

/** @param {boolean} [force] */
function sendAxes(force = false) {
  if (state.mode === "arm" && state.hello && state.hello.arm) { sendArm(force); return; }
  if (state.mode !== "free_look" && state.mode !== "tank") return;
  const a = axesFromInputs();
  if (!mayMove(guard, axesIdle(a))) for (const k of Object.keys(a)) a[/** @type {keyof typeof a} */ (k)] = 0;
  const key = JSON.stringify(a);
  const zero = axesIdle(a);
  // Send on every change at once; repeat while non-zero so the robot's watchdog stays fed.
  if (force || key !== state.lastAxes || !zero) {
    page.send({ type: "axes", mode: state.mode, ...a });
    state.lastAxes = key;
  }
  $("input-state").textContent = zero ? "idle" : `fwd ${a.forward.toFixed(2)} left ${a.left.toFixed(2)} turn ${a.turn.toFixed(2)}`;
}

// The e-stop latches: Space only ever engages it. Releasing it is a click on the button, which
// shows the robot's state; a key never releases it (a click the keyboard made on the focused
// button, detail 0, is refused), and the keys held when it engaged stay released after it.
// A press on the button engages it at once (pointerdown): a touch screen makes no click of a
// tap while another finger holds a stick, and the click that ends the press that engaged it is
// no release. On a touch screen a release is a tap at least RELEASE_AFTER_MS after the engaging
// one: the second tap of a double tap is no release.
const RELEASE_AFTER_MS = 600;
/** engaging: the press on the button now engaged it (its click, if any, is not a release)
 * @type {{ engaging: boolean, engagedAt: number, touch: boolean }} */
const estopPress = { engaging: false, engagedAt: -Infinity, touch: false };
function engageEstop() {
  estopPress.engagedAt = performance.now();
  page.send({ type: "estop", engaged: true });
  state.keys.clear();
  sticks.drop();  // a finger on a stick drives again only once lifted and put down again
  if (document.pointerLockElement) document.exitPointerLock();  // the mouse is free to click
  sendAxes(true);
}
/** @param {PointerEvent} ev */
function onEstopDown(ev) {
  estopPress.touch = ev.pointerType === "touch";
  estopPress.engaging = !state.estop;  // engaged already: this press's click is the release
  if (estopPress.engaging) engageEstop();
}
/** @param {MouseEvent} ev */
function onEstopButton(ev) {
  /** @type {HTMLElement} */ (ev.currentTarget).blur();
  if (estopPress.engaging) { estopPress.engaging = false; return; }  // the press that engaged it
  if (!state.estop) { engageEstop(); return; }
  if (ev.detail === 0) return;  // Space or Enter on the focused button: not a release
  if (estopPress.touch && performance.now() - estopPress.engagedAt < RELEASE_AFTER_MS) return;
  state.keys.clear();
  sendAxes(true);
  page.send({ type: "estop", engaged: false });
}

// ---------------------------------------------------------------- the page's motion stop
// guard.js decides; here it is fed (the page's visibility, the last painted frame, the set
// freeze time) on every poll and at once on a visibility change, and shown.
const guard = newGuard();
let pageGone = false;  // pagehide or freeze seen, not yet shown again
function causesNow() {
  return stopCauses({
    hidden: document.hidden || pageGone,
    // a picture from before this socket's hello counts from the hello (a reconnection, another
    // robot: its first frame is on its way); a closed socket sends nothing and is said apart
    framePaintedAt: state.connected && state.framePaintedAt ? Math.max(state.framePaintedAt, state.helloAt || 0) : 0,
    limit: frozenLimit(input("freeze-s").value),
  }, performance.now());
}
/** The stop's causes now: engaged on the first, zero sent once and the held inputs dropped. */
function checkGuard() {
  const causes = causesNow();
  if (noteCauses(guard, causes, performance.now())) {
    state.keys.clear();
    sticks.drop();
    state.mouseTurn = 0; state.mouseTilt = 0;
    if (state.mode === "keyboard") page.send({ type: "key", key: "space" });  // the thesis keyboard's stop
    sendAxes(true);
  }
  const note = $("guard-note");
  note.hidden = !guard.cause;
  if (guard.cause) {
    $("guard-text").textContent = stopText(guard, causes);
    /** @type {HTMLButtonElement} */ ($("guard-resume")).disabled = !releasable(guard, causes);
  }
  state.guard = { cause: guard.cause, engaged: guard.engaged, at: guard.at, causes };
}
/** @param {MouseEvent} ev */
function onResume(ev) {
  /** @type {HTMLElement} */ (ev.currentTarget).blur();
  if (ev.detail === 0) return;  // a key on the focused button: not the deliberate click
  if (release(guard, causesNow())) checkGuard();
}
/** Whether a motion input is dropped now (the stop holds). */
const dropped = () => !!guard.cause;

/** @type {Record<string, string>} */
const ARROWS = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
/**
 * Wire the page's inputs to the cockpit's state and socket.
 * @param {any} cockpitState the cockpit's state (window.freelook)
 * @param {Page} cockpitPage
 */
export function setupInputs(cockpitState, cockpitPage) {
  state = cockpitState;
  page = cockpitPage;
  sticks = setupSticks(() => sendAxes());
  document.querySelectorAll("[data-mode]").forEach((b) => b.addEventListener("click", () => {
    state.chosen = true;  // the operator's own choice, kept while it is offered
    setMode(/** @type {HTMLElement} */ (b).dataset.mode);
  }));
  $("estop").addEventListener("pointerdown", onEstopDown);
  $("estop").addEventListener("click", onEstopButton);
  $("relocalize").addEventListener("click", () => page.send({ type: "relocalize" }));
  $("grip-open").addEventListener("click", () => page.send({ type: "gripper", open: 1 }));
  $("grip-close").addEventListener("click", () => page.send({ type: "gripper", open: 0 }));
  $("arm-cartesian").addEventListener("change", () => { state.keys.clear(); sendAxes(true); });
  // Space is the e-stop in every mode and wherever the focus is (a number field, a button, a
  // checkbox): seen first (capture), its default (typing, clicking the focused control) never
  // happens, on the key's way down nor up. In Keyboard mode it is the thesis keyboard's stop
  // too (the station zeroes the keyboard's speeds): it latches like everywhere else.
  window.addEventListener("keydown", (ev) => {
    if (ev.code !== "Space") return;
    ev.preventDefault();
    ev.stopPropagation();
    engageEstop();
  }, true);
  window.addEventListener("keyup", (ev) => {
    if (ev.code === "Space") { ev.preventDefault(); ev.stopPropagation(); }
  }, true);
  window.addEventListener("keypress", (ev) => { if (ev.code === "Space") ev.preventDefault(); }, true);
  window.addEventListener("keydown", (ev) => {
    if (ev.code === "Space") return;  // the e-stop, above
    if (ev.target && /** @type {HTMLElement} */ (ev.target).tagName === "INPUT") return;
    // Escape gives the mouse back (Free Look) and does nothing else: it is no e-stop key
    if (ev.code === "Escape") { if (document.pointerLockElement) document.exitPointerLock(); return; }
    if (ARROWS[ev.code]) {
      ev.preventDefault();
      if (dropped()) return;
      // Arrow keys take over from any automatic mode at once, as in the thesis.
      if (state.mode !== "keyboard") { state.chosen = true; setMode("keyboard"); }
      page.send({ type: "key", key: ARROWS[ev.code] });
      return;
    }
    if (state.mode === "arm" && (ev.code === "KeyZ" || ev.code === "KeyX")) {
      page.send({ type: "gripper", open: ev.code === "KeyX" ? 1 : 0 });
      return;
    }
    if (state.mode === "arm" && ev.code === "KeyC" && !ev.repeat) {
      input("arm-cartesian").checked = !input("arm-cartesian").checked;
      state.keys.clear();
      sendAxes(true);
      return;
    }
    if (!ev.repeat && !dropped()) { state.keys.add(ev.code); sendAxes(); }
  });
  window.addEventListener("keyup", (ev) => { state.keys.delete(ev.code); sendAxes(); });
  window.addEventListener("blur", () => { state.keys.clear(); sticks.drop(); state.mouseTurn = 0; state.mouseTilt = 0; sendAxes(true); });
  const cam = /** @type {HTMLCanvasElement} */ ($("camera"));
  // a click captures the mouse (Free Look); while it is captured every click lands here, so a
  // click frees it again (as Esc does) and the buttons are the mouse's once more
  let freedByClick = false;
  cam.addEventListener("mousedown", () => {
    freedByClick = state.pointerLocked;
    if (state.pointerLocked) document.exitPointerLock();
  });
  cam.addEventListener("click", () => {
    if (freedByClick) { freedByClick = false; return; }
    if (state.goal && state.goal.armed) return;  // click-to-go's click (goal.js), not the mouse's
    if (state.mode === "free_look" && cam.requestPointerLock) cam.requestPointerLock();
  });
  document.addEventListener("pointerlockchange", () => {
    state.pointerLocked = document.pointerLockElement === cam;
    if (!state.pointerLocked) { state.mouseTurn = 0; state.mouseTilt = 0; sendAxes(true); }
  });
  document.addEventListener("mousemove", (ev) => {
    if (!state.pointerLocked || dropped()) return;
    state.mouseTurn = Math.max(-1, Math.min(1, -ev.movementX / 25));
    state.mouseTilt = Math.max(-1, Math.min(1, -ev.movementY / 25));
    state.lastMouse = performance.now();
    sendAxes();
  });
  $("lin-start").addEventListener("click", () => page.send({ type: "linear", action: "start", x0: +input("lin-x0").value, x1: +input("lin-x1").value }));
  $("lin-stop").addEventListener("click", () => page.send({ type: "linear", action: "stop" }));
  const side = () => /** @type {HTMLInputElement} */ (document.querySelector("input[name=traj-side]:checked")).value;
  $("traj-ellipse").addEventListener("click", () => { state.trail = []; page.send({ type: "trajectory", action: "start", preset: "ellipse", side: side() }); });
  $("traj-waypoints").addEventListener("click", () => {
    if (state.waypoints.length < 2) return;
    state.trail = [];
    page.send({ type: "trajectory", action: "start", preset: "waypoints", waypoints: state.waypoints, side: side() });
  });
  $("traj-clear").addEventListener("click", () => { state.waypoints = []; $("wp-count").textContent = "0"; page.repaintMap(); });
  $("traj-stop").addEventListener("click", () => page.send({ type: "trajectory", action: "stop" }));
  $("rtx-toggle").addEventListener("click", () => page.send({ type: "transmission", side: "robot", enabled: !state.robotTx }));
  $("otx-toggle").addEventListener("click", () => page.send({ type: "transmission", side: "operator", enabled: !state.operatorTx }));
  $("rtx-set").addEventListener("click", () => page.send({ type: "transmission", side: "robot", spacing_ms: +input("rtx-ms").value }));
  $("otx-set").addEventListener("click", () => page.send({ type: "transmission", side: "operator", spacing_ms: +input("otx-ms").value }));
  // a hidden page stops at once (a locked screen hides it too); pagehide and freeze may come
  // without a visibility change, and the page is back only when it is shown again
  document.addEventListener("visibilitychange", () => { if (!document.hidden) pageGone = false; checkGuard(); });
  window.addEventListener("pagehide", () => { pageGone = true; checkGuard(); });
  document.addEventListener("freeze", () => { pageGone = true; checkGuard(); });
  window.addEventListener("pageshow", () => { pageGone = false; checkGuard(); });
  $("guard-resume").addEventListener("click", onResume);
  // Poll held inputs and the gamepad; repeat non-zero commands, send zero once on release.
  setInterval(() => { checkGuard(); sendAxes(); page.tick(); }, TICK_MS);
}

