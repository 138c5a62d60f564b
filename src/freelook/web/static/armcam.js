// freelook cockpit: the arm camera (stream 1 and up, WebSocket kind 0x03) in the Arm pane.
// A stereo pair arrives as one side-by-side JPEG; the pane shows its left eye, or both eyes
// side by side with the toggle. Frames are decoded one at a time, the newest kept.
"use strict";

(() => {
  const $ = (id) => document.getElementById(id);
  const view = {
    camera: null, sideBySide: false, framesPainted: 0, lastFrameId: -1, lastStamp: 0,
    lastStream: -1, lastLayout: -1, frameWidth: 0, frameHeight: 0,
  };
  let decoding = false, pending = null;

  function onHello(msg) {
    // the arm's camera: the lowest stream of a visible camera on an arm link
    const cameras = (msg.cameras || [])
      .filter((c) => c.mount !== "pan_tilt" && c.kind !== "thermal")
      .sort((a, b) => a.stream - b.stream);
    view.camera = cameras.length ? cameras[0] : null;
    $("armcam-box").hidden = !view.camera;
    if (!view.camera) return;
    const stereo = view.camera.layout === 1;
    $("armcam-sbs").hidden = !stereo;
    $("armcam-name").textContent = view.camera.name + (stereo ? " (stereo)" : "");
  }

  function onFrame(data) {
    const v = new DataView(data);
    const stream = v.getUint8(1);
    if (!view.camera || stream !== view.camera.stream) return;
    pending = {
      stream, layout: v.getUint8(2), stamp: v.getFloat64(3, true), frameId: v.getUint32(11, true),
      blob: new Blob([new Uint8Array(data, 15)], { type: "image/jpeg" }),
    };
    if (!decoding) decodeNext();
  }

  async function decodeNext() {
    if (!pending) return;
    const frame = pending;
    pending = null;
    decoding = true;
    try {
      const bitmap = await createImageBitmap(frame.blob);
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

  let ready = null;
  function paintReady() {
    const { bitmap, frame } = ready;
    ready = null;
    paint(bitmap, frame);
    bitmap.close();
  }

  function paint(bitmap, frame) {
    const canvas = $("armcam");
    const stereo = frame.layout === 1;
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

  window.addEventListener("DOMContentLoaded", () => {
    $("armcam-sbs").addEventListener("change", (ev) => { view.sideBySide = ev.target.checked; });
  });
  window.freelookArmCamera = { view, onHello, onFrame };
})();
