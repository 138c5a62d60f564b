// @ts-check
// freelook cockpit: the arm camera (stream 1 and up, frame kind FRAME.STREAM) in the Arm pane.
// A stereo pair arrives as one side-by-side JPEG; the pane shows its left eye, or both eyes
// side by side with the toggle. Frames are decoded one at a time, the newest kept.
import { LAYOUT } from "./protocol.js";

/** @typedef {import("./protocol.js").CameraFrame} CameraFrame */

/** What the pane shows (for tests and debugging). */
export const view = {
  camera: null, sideBySide: false, framesPainted: 0, lastFrameId: -1, lastStamp: 0,
  lastStream: -1, lastLayout: -1, frameWidth: 0, frameHeight: 0,
};
let decoding = false;
/** @type {CameraFrame | null} */
let pending = null;
/** @type {{ bitmap: ImageBitmap, frame: CameraFrame } | null} */
let ready = null;

/** @param {string} id */
const $ = (id) => document.getElementById(id);

/** The toggle between one eye and both. */
export function setup() {
  const toggle = /** @type {HTMLInputElement} */ ($("armcam-sbs"));
  toggle.addEventListener("change", () => { view.sideBySide = toggle.checked; });
}

/** @param {any} msg the hello message */
export function onHello(msg) {
  // the arm's camera: the lowest stream of a visible camera on an arm link
  const cameras = (msg.cameras || [])
    .filter((/** @type {any} */ c) => c.mount !== "pan_tilt" && c.kind !== "thermal")
    .sort((/** @type {any} */ a, /** @type {any} */ b) => a.stream - b.stream);
  view.camera = cameras.length ? cameras[0] : null;
  $("armcam-box").hidden = !view.camera;
  if (!view.camera) return;
  const stereo = view.camera.layout === LAYOUT.STEREO;
  $("armcam-sbs").hidden = !stereo;
  $("armcam-name").textContent = view.camera.name + (stereo ? " (stereo)" : "");
}

/** A further stream's frame: kept when it is the arm camera's.
 * @param {CameraFrame} frame */
export function onFrame(frame) {
  if (!view.camera || frame.stream !== view.camera.stream) return;
  pending = frame;
  if (!decoding) decodeNext();
}

async function decodeNext() {
  if (!pending) return;
  const frame = pending;
  pending = null;
  decoding = true;
  try {
    const bitmap = await createImageBitmap(new Blob([frame.jpeg], { type: "image/jpeg" }));
    // only the newest decoded frame waits for the animation frame; never a queue of paints
    if (ready) ready.bitmap.close();
    else requestAnimationFrame(paintReady);
    ready = { bitmap, frame };
  } catch (err) {
    console.warn("bad arm camera frame", err);
  } finally {
    decoding = false;
    if (pending) decodeNext();
  }
}

function paintReady() {
  const { bitmap, frame } = ready;
  ready = null;
  paint(bitmap, frame);
  bitmap.close();
}

/** @param {ImageBitmap} bitmap @param {CameraFrame} frame */
function paint(bitmap, frame) {
  const canvas = /** @type {HTMLCanvasElement} */ ($("armcam"));
  const stereo = frame.layout === LAYOUT.STEREO;
  const w = stereo && !view.sideBySide ? Math.floor(bitmap.width / 2) : bitmap.width;
  if (canvas.width !== w || canvas.height !== bitmap.height) {
    canvas.width = w; canvas.height = bitmap.height;
  }
  canvas.getContext("2d", { willReadFrequently: true }).drawImage(bitmap, 0, 0, w, bitmap.height, 0, 0, w, bitmap.height);
  view.framesPainted += 1;
  view.lastFrameId = frame.frameId;
  view.lastStamp = frame.stamp;
  view.lastStream = frame.stream;
  view.lastLayout = frame.layout;
  view.frameWidth = bitmap.width;
  view.frameHeight = bitmap.height;
}
