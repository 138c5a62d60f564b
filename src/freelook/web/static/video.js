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

/** No side of a frame beyond this (the station bounds each stream by the robot's description;
 * VP9's own limit is 16384): a header claiming more, or 0, is refused before the decoder is
 * configured. */
export const MAX_FRAME_SIDE = 8192;

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
    this.errors = 0;  // the decoder failed: an error it reported, or a configure or decode that threw
    this.refused = 0;  // keyframes whose header claimed a size of 0 or beyond MAX_FRAME_SIDE
    this.lastAsk = -Infinity;
  }

  /** One frame of the stream. Nothing a malformed frame does escapes: it is counted, the
   * stream waits for a keyframe (asked for), and the page's other streams go on.
   * @param {import("./protocol.js").VideoChunkFrame} frame */
  push(frame) {
    // a page without WebCodecs gets JPEG once the station hears so; what came before is dropped
    if (!webCodecsAvailable()) return;
    if (!this.gate.admit(frame)) { this.ask(); return; }
    if (frame.keyframe && !(frame.width > 0 && frame.width <= MAX_FRAME_SIDE
      && frame.height > 0 && frame.height <= MAX_FRAME_SIDE)) {
      this.refused += 1;
      this.gate.lost();
      this.ask();
      return;
    }
    try {
      this.decode(frame);
    } catch {  // configure() or decode() threw: an unsupported config, a decoder gone
      this.fail();
    }
  }

  /** A decoder failed: nothing decodes until the next keyframe, which reconfigures it. */
  fail() {
    this.errors += 1;
    this.gate.lost();
    this.reset();
    this.config = "";
    this.ask();
  }

  /** @param {import("./protocol.js").VideoChunkFrame} frame */
  decode(frame) {
    const codec = CODEC_STRINGS[/** @type {1 | 2 | 3} */ (frame.codec)];
    const config = `${codec} ${frame.width}x${frame.height}`;
    if (frame.keyframe && (config !== this.config || !this.decoder || this.decoder.state === "closed")) {
      this.reset();
      const decoder = new VideoDecoder({
        output: (picture) => this.output(picture),
        // an old decoder's late error must not take down the one that replaced it
        error: () => { if (this.decoder === decoder) this.fail(); },
      });
      this.decoder = decoder;
      this.config = config;
      decoder.configure({ codec, codedWidth: frame.width, codedHeight: frame.height, optimizeForLatency: true });
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
    const decoder = this.decoder;
    this.decoder = null;
    if (decoder && decoder.state !== "closed") decoder.close();
    this.meta.clear();
  }
}
