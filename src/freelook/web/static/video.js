// @ts-check
// freelook: inter-frame camera video in the pages (VP8, VP9, H.264 frames, kind 4 in
// protocol.js) decoded with WebCodecs' VideoDecoder. A delta frame decodes only after every
// frame since its keyframe: a gap in a stream's frame ids (a frame lost on the link, or one the
// server replaced before this page took it) drops the deltas until the next keyframe, and the
// page asks for one. Only the newest decoded picture is kept for painting; an older one not
// painted yet is closed. The keyframe gate is DOM-free (node's test runner imports it).
import { CODEC } from "./protocol.js";

/** The WebCodecs codec string of each codec byte. */
export const CODEC_STRINGS = Object.freeze({
  [CODEC.VP8]: "vp8",
  [CODEC.VP9]: "vp09.00.10.08",
  [CODEC.H264]: "avc1.42E01E",  // constrained baseline, Annex B (the robot's libx264 profile)
});

/** Whether this browser can decode inter-frame video (else the station sends JPEG). */
export function webCodecsAvailable() {
  return typeof globalThis.VideoDecoder === "function";
}

/**
 * Which frames of one stream a decoder can take: a keyframe always, a delta only right after
 * the frame before it. `admit` says whether to decode, `wantsKeyframe` whether to ask.
 */
export class KeyframeGate {
  constructor() {
    /** @type {number | null} */
    this.lastId = null;
    this.synced = false;
    this.wantsKeyframe = false;
    this.gaps = 0;
    this.held = 0;
  }

  /** @param {{ frameId: number, keyframe: boolean }} frame @returns {boolean} */
  admit(frame) {
    const previous = this.lastId;
    this.lastId = frame.frameId;
    const consecutive = previous !== null && ((frame.frameId - previous) >>> 0) === 1;
    if (previous !== null && !consecutive) this.gaps += 1;
    if (frame.keyframe) {
      this.synced = true;
      this.wantsKeyframe = false;
      return true;
    }
    if (this.synced && consecutive) return true;
    this.synced = false;
    this.wantsKeyframe = true;
    this.held += 1;
    return false;
  }

  /** The decoder failed: nothing decodes until the next keyframe. */
  lost() {
    this.synced = false;
    this.wantsKeyframe = true;
  }
}

/**
 * What a decoded picture came from: its frame id, capture stamp (s) and layout (a stereo pair
 * is one side-by-side picture), and when its chunk arrived here (wall-clock ms).
 * @typedef {{ frameId: number, stamp: number, layout: number, arrived: number }} PictureMeta
 */

/** A decoded picture's width and height (a VideoFrame's display size, else an image's).
 * @param {VideoFrame | ImageBitmap} picture @returns {[number, number]} */
export function pictureSize(picture) {
  return "displayWidth" in picture
    ? [picture.displayWidth, picture.displayHeight]
    : [picture.width, picture.height];
}

/**
 * One camera stream's WebCodecs decoder. `onPicture(frame, meta)` gets each decoded picture
 * (the caller owns it and must close it); `askKeyframe()` is called when one is needed (the
 * station rate-limits what it passes on to the robot). The cockpit and the station page both
 * decode with it.
 */
export class StreamDecoder {
  /**
   * @param {(picture: VideoFrame, meta: PictureMeta) => void} onPicture
   * @param {() => void} askKeyframe
   */
  constructor(onPicture, askKeyframe) {
    this.onPicture = onPicture;
    this.askKeyframe = askKeyframe;
    this.gate = new KeyframeGate();
    /** @type {VideoDecoder | null} */
    this.decoder = null;
    this.config = "";
    /** @type {Map<number, PictureMeta>} */
    this.meta = new Map();
    this.decoded = 0;
    this.errors = 0;
    this.lastAsk = -Infinity;
  }

  /** @param {import("./protocol.js").VideoChunkFrame} frame */
  push(frame) {
    // a page without WebCodecs gets JPEG once the station hears so; what came before is dropped
    if (!webCodecsAvailable()) return;
    if (!this.gate.admit(frame)) { this.ask(); return; }
    const codec = CODEC_STRINGS[/** @type {1 | 2 | 3} */ (frame.codec)];
    const config = `${codec} ${frame.width}x${frame.height}`;
    if (frame.keyframe && (config !== this.config || !this.decoder || this.decoder.state === "closed")) {
      this.reset();
      const decoder = new VideoDecoder({
        output: (picture) => this.output(picture),
        error: () => { this.errors += 1; this.gate.lost(); this.decoder = null; this.ask(); },
      });
      decoder.configure({ codec, codedWidth: frame.width, codedHeight: frame.height, optimizeForLatency: true });
      this.decoder = decoder;
      this.config = config;
    }
    if (!this.decoder) { this.gate.lost(); this.ask(); return; }
    // the frame id (µs apart) names the chunk: the output picture carries it back
    const timestamp = frame.frameId;
    const arrived = performance.timeOrigin + performance.now();
    this.meta.set(timestamp, { frameId: frame.frameId, stamp: frame.stamp, layout: frame.layout, arrived });
    if (this.meta.size > 64) this.meta.delete(this.meta.keys().next().value ?? 0);
    this.decoder.decode(new EncodedVideoChunk({
      type: frame.keyframe ? "key" : "delta", timestamp, data: frame.data,
    }));
  }

  /** @param {VideoFrame} picture */
  output(picture) {
    const meta = this.meta.get(picture.timestamp) || { frameId: picture.timestamp, stamp: 0, layout: 0, arrived: 0 };
    this.meta.delete(picture.timestamp);
    this.decoded += 1;
    this.onPicture(picture, meta);
  }

  ask() {
    const now = performance.now();
    if (now - this.lastAsk < 250) return;  // the station bounds it again
    this.lastAsk = now;
    this.askKeyframe();
  }

  reset() {
    if (this.decoder && this.decoder.state !== "closed") this.decoder.close();
    this.decoder = null;
    this.meta.clear();
  }
}
