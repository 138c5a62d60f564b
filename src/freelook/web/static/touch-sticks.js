// @ts-check
// freelook cockpit: a touch screen's two on-screen sticks (Free Look and Tank). The left one
// moves (forward, sideways in the camera's frame), the right one turns (and tilts); each takes
// one finger, both at once. A finger's offset from where it went down is the stick's
// deflection (controls.js: stickDeflection, held inside the unit circle); the page reads them as
// a gamepad's four axes (touchSticks) through the gamepad's own stick mapping, so a stick
// command is the same "axes" message a gamepad's is. A finger lifted, or taken by the browser
// (pointercancel: a system gesture, a call, the screen locked), lets its stick go to zero at
// once. drop() lets both go and ignores the fingers on them until they are lifted: the e-stop
// and the page's motion stop use it, so a stick held through a stop never drives on its own.
import { stickDeflection, touchSticks } from "./controls.js";

const REACH = 0.4;  // a full deflection: the finger this far from where it went down, in the stick's widths

/** @typedef {{ el: HTMLElement, knob: HTMLElement, id: number | null, x0: number, y0: number,
 *              value: [number, number], dropped: boolean }} Stick */

/** @param {HTMLElement} el @returns {Stick} */
function newStick(el) {
  return { el, knob: /** @type {HTMLElement} */ (el.querySelector(".knob")), id: null, x0: 0, y0: 0, value: [0, 0], dropped: false };
}

/** Where the knob is drawn: the deflection, in the stick's own size. @param {Stick} s */
function draw(s) {
  const r = s.el.clientWidth * REACH;
  const [x, y] = s.id !== null && !s.dropped ? s.value : [0, 0];
  s.knob.style.transform = `translate(${(x * r).toFixed(1)}px, ${(y * r).toFixed(1)}px)`;
  s.el.classList.toggle("held", s.id !== null && !s.dropped);
}

/** The stick's deflection while a finger that counts is on it, else null. @param {Stick} s */
const live = (s) => (s.id !== null && !s.dropped ? s.value : null);

/**
 * Whether the screen takes touches: a coarse pointer or touch points (a touch on the page shows
 * the sticks too, a laptop's touch screen among them).
 */
export function touchScreen() {
  return (window.matchMedia && window.matchMedia("(pointer: coarse)").matches) || navigator.maxTouchPoints > 0;
}

/**
 * Wire the two sticks (#stick-move, #stick-turn). `changed` is called on every change of
 * either (the page then sends its axes).
 * @param {() => void} changed
 * @returns {{ axes: () => number[] | null, drop: () => void }}
 */
export function setupSticks(changed) {
  const sticks = [newStick(/** @type {HTMLElement} */ (document.getElementById("stick-move"))),
    newStick(/** @type {HTMLElement} */ (document.getElementById("stick-turn")))];
  if (touchScreen()) document.body.classList.add("touch");
  window.addEventListener("pointerdown", (ev) => {
    if (ev.pointerType === "touch") document.body.classList.add("touch");
  }, true);
  for (const s of sticks) {
    s.el.addEventListener("pointerdown", (ev) => {
      ev.preventDefault();
      if (s.id !== null) return;  // one finger a stick: another one on it is ignored
      s.id = ev.pointerId; s.x0 = ev.clientX; s.y0 = ev.clientY; s.value = [0, 0]; s.dropped = false;
      try { s.el.setPointerCapture(ev.pointerId); } catch { /* the pointer is gone already */ }
      draw(s); changed();
    });
    s.el.addEventListener("pointermove", (ev) => {
      if (ev.pointerId !== s.id || s.dropped) return;
      ev.preventDefault();
      s.value = stickDeflection(ev.clientX - s.x0, ev.clientY - s.y0, s.el.clientWidth * REACH);
      draw(s); changed();
    });
    /** @param {PointerEvent} ev */
    const lifted = (ev) => {
      if (ev.pointerId !== s.id) return;
      s.id = null; s.value = [0, 0]; s.dropped = false;
      draw(s); changed();
    };
    for (const kind of ["pointerup", "pointercancel", "lostpointercapture"])
      s.el.addEventListener(kind, /** @type {EventListener} */ (lifted));
    s.el.addEventListener("contextmenu", (ev) => ev.preventDefault());  // a long press is no menu
  }
  return {
    axes: () => touchSticks(live(sticks[0]), live(sticks[1])),
    drop: () => {
      for (const s of sticks) { s.dropped = s.id !== null; s.value = [0, 0]; draw(s); }
    },
  };
}
