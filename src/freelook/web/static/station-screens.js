// @ts-check
// The station's camera screens, from a frame off the wire to a decoded picture: one decode at a
// time per screen, the newest frame winning (a slow decode drops frames, never queues them).
// JPEGs are decoded in a worker: on the main thread a decode waits behind the room's drawing.
// Inter-frame video (VP8, VP9, H.264): each stream's chunks all go to its WebCodecs decoder
// (a delta needs every frame before it); its decoded pictures wait for the screen like a JPEG
// does, the newest replacing one not shown yet.
import { StreamDecoder } from "./video.js";

/**
 * A camera frame waiting for its screen: jpeg is an ArrayBuffer of its own (handed over to the
 * decoding worker), or picture an inter-frame stream's decoded picture (video.js); arrived and
 * decoded: this page's wall clock (ms), for the stage times.
 * @typedef {{ stream: number, layout: number, stamp: number, frameId: number, jpeg?: ArrayBuffer,
 *             picture?: VideoFrame, arrived?: number, decoded?: number }} Frame
 */

const SIDE_MS = 66;  // side screens at most ~15 frames/s: the stereo screen's decodes go first

/**
 * JPEG decoding, in a worker unless ``inWorker`` is false or the page cannot start one.
 * @param {boolean} inWorker
 * @returns {(jpeg: ArrayBuffer) => Promise<ImageBitmap>}
 */
function jpegDecoder(inWorker) {
  /** @type {Worker | null} */
  let worker = null;
  let lastId = 0;
  const waiting = new Map();
  if (inWorker) {
    try {
      worker = new Worker("/static/station-decode.js");
      worker.onmessage = (ev) => {
        const done = waiting.get(ev.data.id);
        waiting.delete(ev.data.id);
        if (done) ev.data.bitmap ? done.resolve(ev.data.bitmap) : done.reject(new Error(ev.data.error));
      };
    } catch (err) {
      worker = null;
    }
  }
  return (jpeg) => {
    if (!worker) return createImageBitmap(new Blob([jpeg], { type: "image/jpeg" }));
    return new Promise((resolve, reject) => {
      lastId += 1;
      waiting.set(lastId, { resolve, reject });
      worker.postMessage({ id: lastId, bytes: jpeg }, [jpeg]);
    });
  };
}

/**
 * The screens' decoding. ``show(name, picture, frame)`` paints a decoded frame on screen
 * ``name`` (main, driving or thermal); ``screenOf(stream)`` names the screen a stream is shown
 * on, null for none; ``askKeyframe(stream)`` asks the robot for a keyframe after a loss.
 * @param {{ show: (name: string, picture: ImageBitmap | VideoFrame, frame: Frame) => void,
 *           screenOf: (stream: number) => string | null,
 *           askKeyframe: (stream: number) => void, decodeInWorker: boolean }} parts
 */
export function createScreens({ show, screenOf, askKeyframe, decodeInWorker }) {
  const decodeJpeg = jpegDecoder(decodeInWorker);
  /** @type {Record<string, { busy: boolean, next: Frame | null, last?: number, timer?: any }>} */
  const screens = { main: { busy: false, next: null }, driving: { busy: false, next: null }, thermal: { busy: false, next: null } };
  /** @type {Map<number, StreamDecoder>} */
  const video = new Map();

  /** A frame for screen ``name``: decoded now, or when the screen's decode is free.
   * @param {string} name @param {Frame} frame */
  function queue(name, frame) {
    const d = screens[name];
    if (d.next && d.next.picture) d.next.picture.close();  // a decoded picture never shown
    d.next = frame;
    if (d.busy) return;
    const wait = name === "main" ? 0 : (d.last || 0) + SIDE_MS - performance.now();
    if (wait <= 0) decode(name);
    else if (!d.timer) d.timer = setTimeout(() => { d.timer = null; if (!d.busy) decode(name); }, wait);
  }

  /** @param {string} name */
  async function decode(name) {
    const d = screens[name];
    const frame = d.next;
    if (!frame) return;
    d.next = null;
    d.busy = true;
    try {
      const picture = frame.picture || await decodeJpeg(frame.jpeg);
      show(name, picture, frame);
      picture.close();
    } catch (err) {
      console.warn("bad camera frame", err);
    } finally {
      d.busy = false;
      d.last = performance.now();
      if (d.next) queue(name, d.next);
    }
  }

  /** Inter-frame stream ``stream``'s decoder, made on its first chunk. @param {number} stream */
  function videoDecoder(stream) {
    let decoder = video.get(stream);
    if (!decoder) {
      decoder = new StreamDecoder(
        (picture, meta) => {
          const name = screenOf(stream);  // a new hello may have moved it
          if (!name) { picture.close(); return; }
          const { layout, stamp, frameId, arrived } = meta;
          queue(name, { stream, layout, stamp, frameId, picture, arrived: name === "driving" ? undefined : arrived });
        },
        () => askKeyframe(stream),
      );
      video.set(stream, decoder);
    }
    return decoder;
  }

  return { queue, video, videoDecoder };
}
