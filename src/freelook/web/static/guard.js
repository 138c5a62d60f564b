// @ts-check
// freelook cockpit: the page's own motion stop. A frozen picture (no new frame painted for the
// set time) or a hidden page (another tab, a minimised window, a locked screen) stops the
// page's motion commands: zero is sent once, then nothing moves the robot from this page. The
// stop latches, as the e-stop does: when its cause is gone (a fresh frame painted, the page
// shown again) it is released only by a deliberate click on its button, and even then the
// controls drive again only after they were seen let go (a key or a stick held through the
// stop never drives on its own). Pure: times (ms, the page's performance.now()) are passed in,
// so node's test runner checks it (tests/js/).

export const FROZEN_S = 1.0;  // the default: a picture this old (no new frame) stops motion
export const FROZEN_MIN_S = 0.2;
export const FROZEN_MAX_S = 10;

/**
 * The stop's state. cause: why it engaged ("" while it is not engaged); at: when (ms);
 * needIdle: released, waiting to see the controls let go; engaged: how often it engaged.
 * @typedef {{ cause: string, at: number, needIdle: boolean, engaged: number }} Guard
 */

/** @returns {Guard} */
export function newGuard() {
  return { cause: "", at: 0, needIdle: false, engaged: 0 };
}

/** The set freeze time (s) from its field's text: the default for an empty or bad value,
 * clamped to [FROZEN_MIN_S, FROZEN_MAX_S] otherwise. @param {string} text */
export function frozenLimit(text) {
  const s = Number.parseFloat(text);
  if (!Number.isFinite(s)) return FROZEN_S;
  return Math.min(FROZEN_MAX_S, Math.max(FROZEN_MIN_S, s));
}

/**
 * What stops the page's motion now: a hidden page, and a picture not renewed for `limit` s
 * (only once one was painted: a robot without a camera is not stopped for it).
 * @param {{ hidden: boolean, framePaintedAt: number, limit: number }} page
 * @param {number} now
 * @returns {string[]} the causes, each said as the page shows it; empty when none
 */
export function stopCauses(page, now) {
  /** @type {string[]} */
  const causes = [];
  if (page.hidden) causes.push("the page was hidden");
  const age = (now - page.framePaintedAt) / 1000;
  if (page.framePaintedAt > 0 && age > page.limit)
    causes.push(`the picture froze (no new frame for ${page.limit.toFixed(1)} s)`);
  return causes;
}

/**
 * Notes the causes now; true when the stop engages now (the caller sends zero once).
 * @param {Guard} guard @param {string[]} causes @param {number} now
 */
export function noteCauses(guard, causes, now) {
  if (!causes.length || guard.cause) return false;
  guard.cause = causes[0];
  guard.at = now;
  guard.needIdle = false;
  guard.engaged += 1;
  return true;
}

/** Whether a click may release the stop: engaged, with its causes gone.
 * @param {Guard} guard @param {string[]} causes */
export const releasable = (guard, causes) => !!guard.cause && !causes.length;

/** Releases the stop when it may be (releasable); the controls then drive again only once seen
 * let go. @param {Guard} guard @param {string[]} causes @returns {boolean} released */
export function release(guard, causes) {
  if (!releasable(guard, causes)) return false;
  guard.cause = "";
  guard.needIdle = true;
  return true;
}

/** Whether the page may send the controls' motion now; `idle`: the controls are let go.
 * @param {Guard} guard @param {boolean} idle */
export function mayMove(guard, idle) {
  if (guard.cause) return false;
  if (guard.needIdle) {
    if (!idle) return false;
    guard.needIdle = false;
  }
  return true;
}

/** The note the page shows while the stop holds: why, and what releases it; "" when none.
 * @param {Guard} guard @param {string[]} causes */
export function stopText(guard, causes) {
  if (!guard.cause) return "";
  const why = `motion stopped: ${guard.cause}`;
  return causes.length ? why : `${why} · click "resume driving" to drive again`;
}
