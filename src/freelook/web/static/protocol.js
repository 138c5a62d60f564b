// @ts-check
// freelook: the WebSocket protocol between the operator station's web server and its pages (the
// cockpit and the virtual operator station), in one place. Server → page frames are binary and
// start with a kind byte; page → server messages are JSON text. The server's side is
// freelook.web (encode_json, encode_frame); tests/web/test_protocol_js.py holds the two equal.
// No DOM here: node's test runner imports this module as the pages do.

/** The kind byte that starts every server → page frame. */
export const FRAME = Object.freeze(/** @type {const} */ ({
  JSON: 1,  // a JSON message (UTF-8) follows
  DRIVING: 2,  // the driving camera (stream 0): header, then a JPEG
  STREAM: 3,  // a further camera stream: header, then a JPEG
  VIDEO: 4,  // any camera's inter-frame video (VP8, VP9, H.264): header, then the chunk
}));

/** Byte offsets in a driving-camera frame (all little-endian): float64 stamp, uint32 frame id. */
export const DRIVING_HEADER = Object.freeze({ stamp: 1, frameId: 9, size: 13 });

/** Byte offsets in a further stream's frame: uint8 stream, uint8 layout, float64 stamp, uint32
 * frame id. */
export const STREAM_HEADER = Object.freeze({ stream: 1, layout: 2, stamp: 3, frameId: 11, size: 15 });

/** Byte offsets in an inter-frame video frame: uint8 stream, layout, codec, flags (bit 0: a
 * keyframe), float64 stamp, uint32 frame id, uint16 width, uint16 height. */
export const VIDEO_HEADER = Object.freeze({
  stream: 1, layout: 2, codec: 3, flags: 4, stamp: 5, frameId: 13, width: 17, height: 19, size: 21,
});

/** The codec byte of a video frame (the link's VideoCodec). */
export const CODEC = Object.freeze({ JPEG: 0, VP8: 1, VP9: 2, H264: 3 });

/** A camera frame's layout byte: one image, or a stereo pair side by side in one image. */
export const LAYOUT = Object.freeze({ MONO: 0, STEREO: 1 });

/** The JSON messages' "type" the server sends. */
export const SERVER_MESSAGES = Object.freeze(["hello", "state", "error", "pong", "fleet"]);

/** The JSON messages' "type" a page sends. */
export const PAGE_MESSAGES = Object.freeze([
  "mode", "axes", "key", "arm", "gripper", "estop", "relocalize", "linear", "trajectory",
  "transmission", "painted", "ping", "fleet_select", "keyframe", "video", "goal",
]);

/**
 * @typedef {{ kind: 1, message: any }} JsonFrame
 * @typedef {{ kind: 2 | 3, stream: number, layout: number, stamp: number, frameId: number,
 *             jpeg: Uint8Array<ArrayBuffer> }} CameraFrame
 *   stamp: the capture time (s, the robot's clock); jpeg: a view into the frame, not a copy
 * @typedef {{ kind: 4, stream: number, layout: number, codec: number, keyframe: boolean,
 *             stamp: number, frameId: number, width: number, height: number,
 *             data: Uint8Array<ArrayBuffer> }} VideoChunkFrame
 *   an encoded chunk for a WebCodecs decoder; frame ids of a stream count up by one (a gap is a
 *   lost frame); a frame with an unknown codec or flag bits is dropped (null)
 */

const decoder = new TextDecoder();

/**
 * One server → page frame, parsed; null for a frame of an unknown kind or shorter than its
 * header (dropped, never thrown). A JSON frame that does not parse throws, as JSON.parse does.
 * @param {ArrayBuffer} data
 * @returns {JsonFrame | CameraFrame | VideoChunkFrame | null}
 */
export function parseFrame(data) {
  const bytes = new Uint8Array(data);
  if (bytes.length < 1) return null;
  const kind = bytes[0];
  if (kind === FRAME.JSON) return { kind, message: JSON.parse(decoder.decode(bytes.subarray(1))) };
  const view = new DataView(data);
  if (kind === FRAME.DRIVING) {
    const h = DRIVING_HEADER;
    if (bytes.length < h.size) return null;
    return {
      kind, stream: 0, layout: LAYOUT.MONO, stamp: view.getFloat64(h.stamp, true),
      frameId: view.getUint32(h.frameId, true), jpeg: bytes.subarray(h.size),
    };
  }
  if (kind === FRAME.STREAM) {
    const h = STREAM_HEADER;
    if (bytes.length < h.size) return null;
    return {
      kind, stream: view.getUint8(h.stream), layout: view.getUint8(h.layout),
      stamp: view.getFloat64(h.stamp, true), frameId: view.getUint32(h.frameId, true),
      jpeg: bytes.subarray(h.size),
    };
  }
  if (kind === FRAME.VIDEO) {
    const h = VIDEO_HEADER;
    if (bytes.length < h.size) return null;
    const codec = view.getUint8(h.codec), flags = view.getUint8(h.flags);
    if (codec < CODEC.VP8 || codec > CODEC.H264 || (flags & ~1) !== 0) return null;
    return {
      kind, stream: view.getUint8(h.stream), layout: view.getUint8(h.layout), codec,
      keyframe: (flags & 1) === 1, stamp: view.getFloat64(h.stamp, true),
      frameId: view.getUint32(h.frameId, true), width: view.getUint16(h.width, true),
      height: view.getUint16(h.height, true), data: bytes.subarray(h.size),
    };
  }
  return null;
}
