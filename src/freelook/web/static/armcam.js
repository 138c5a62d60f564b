// @ts-check
// freelook cockpit: the arm camera (stream 1 and up, frame kind FRAME.STREAM, or FRAME.VIDEO
// when the robot sends it with an inter-frame codec) in the Arm pane. A stereo pair arrives as
// one side-by-side picture; the pane shows its left eye, or both eyes side by side with the
// toggle. JPEGs are decoded one at a time, the newest kept; an inter-frame stream's chunks all
// go to its WebCodecs decoder (video.js), and only its newest picture waits for the paint.
import { LAYOUT } from "./protocol.js";
import { StreamDecoder, pictureSize } from "./video.js";

/** @typedef {import("./protocol.js").CameraFrame} CameraFrame */
/** @typedef {{ stream: number, layout: number, stamp: number, frameId: number }} Shown */

/** What the pane shows (for tests and debugging). */
export const view = {
  camera: null, sideBySide: false, framesPainted: 0, lastFrameId: -1, lastStamp: 0,
  lastStream: -1, lastLayout: -1, frameWidth: 0, frameHeight: 0,
  /** @type {StreamDecoder | null} the arm camera's inter-frame decoder, when it sends one */
  video: null,
};
let decoding = false;
/** @type {CameraFrame | null} */
let pending = null;
/** @type {{ bitmap: ImageBitmap | VideoFrame, frame: Shown } | null} */
let ready = null;
let videoStream = -1;  // the stream view.video decodes

/** @param {string} id */
const $ = (id) => document.getElementById(id);

/** The toggle between one eye and both. */
export function setup() {
  const toggle = /** @type {HTMLInputElement} */ ($("armcam-sbs"));
  toggle.addEventListener("change", () => { view.sideBySide = toggle.checked; });
}

/** @param {import("./messages.js").Hello} msg the hello message */
export function onHello(msg) {
  // the arm's camera: the lowest stream of a visible camera on an arm link
  const cameras = (msg.cameras || [])
    .filter((c) => c.mount !== "pan_tilt" && c.kind !== "thermal")
    .sort((a, b) => a.stream - b.stream);
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

/** The arm camera's inter-frame chunk (kind 4): decoded with WebCodecs.
 * @param {import("./protocol.js").VideoChunkFrame} frame
 * @param {(stream: number) => void} askKeyframe asks the station for a keyframe of the stream */
export function onVideo(frame, askKeyframe) {
  if (!view.camera || frame.stream !== view.camera.stream) return;
  const stream = frame.stream;
  if (!view.video || videoStream !== stream) {
    if (view.video) view.video.reset();
    videoStream = stream;
    view.video = new StreamDecoder(
      (picture, meta) => show(picture, { stream, ...meta }),
      () => askKeyframe(stream),
    );
  }
  view.video.push(frame);
}

/** Only the newest decoded picture waits for the animation frame; never a queue of paints.
 * @param {ImageBitmap | VideoFrame} bitmap @param {Shown} frame */
function show(bitmap, frame) {
  if (ready) ready.bitmap.close();
  else requestAnimationFrame(paintReady);
  ready = { bitmap, frame };
}

async function decodeNext() {
  if (!pending) return;
  const frame = pending;
  pending = null;
  decoding = true;
  try {
    show(await createImageBitmap(new Blob([frame.jpeg], { type: "image/jpeg" })), frame);
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

/** @param {ImageBitmap | VideoFrame} bitmap @param {Shown} frame */
function paint(bitmap, frame) {
  const canvas = /** @type {HTMLCanvasElement} */ ($("armcam"));
  const stereo = frame.layout === LAYOUT.STEREO;
  const [width, height] = pictureSize(bitmap);
  const w = stereo && !view.sideBySide ? Math.floor(width / 2) : width;
  if (canvas.width !== w || canvas.height !== height) {
    canvas.width = w; canvas.height = height;
  }
  canvas.getContext("2d", { willReadFrequently: true }).drawImage(bitmap, 0, 0, w, height, 0, 0, w, height);
  view.framesPainted += 1;
  view.lastFrameId = frame.frameId;
  view.lastStamp = frame.stamp;
  view.lastStream = frame.stream;
  view.lastLayout = frame.layout;
  view.frameWidth = width;
  view.frameHeight = height;
}
