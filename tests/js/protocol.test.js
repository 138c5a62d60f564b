// The server → page frames as protocol.js parses them: the header's fields where the server
// puts them (freelook.web.encode_frame; tests/web/test_protocol_js.py compares the layouts),
// and hostile frames dropped, not thrown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { CODEC, DRIVING_HEADER, FRAME, LAYOUT, STREAM_HEADER, VIDEO_HEADER, parseFrame } from "../../src/freelook/web/static/protocol.js";

/** A frame as the server packs it: kind, header fields little-endian, then the payload. */
function frame(kind, fields, payload) {
  const size = kind === FRAME.DRIVING ? DRIVING_HEADER.size : STREAM_HEADER.size;
  const out = new Uint8Array(size + payload.length);
  const v = new DataView(out.buffer);
  v.setUint8(0, kind);
  const h = kind === FRAME.DRIVING ? DRIVING_HEADER : STREAM_HEADER;
  if (kind === FRAME.STREAM) { v.setUint8(h.stream, fields.stream); v.setUint8(h.layout, fields.layout); }
  v.setFloat64(h.stamp, fields.stamp, true);
  v.setUint32(h.frameId, fields.frameId, true);
  out.set(payload, size);
  return out.buffer;
}

test("a JSON frame gives its message", () => {
  const body = new TextEncoder().encode(JSON.stringify({ type: "state", age: 0.25, name: "ünï" }));
  const data = new Uint8Array(1 + body.length);
  data[0] = FRAME.JSON;
  data.set(body, 1);
  assert.deepEqual(parseFrame(data.buffer), { kind: FRAME.JSON, message: { type: "state", age: 0.25, name: "ünï" } });
});

test("a driving-camera frame gives stream 0, mono, its stamp, id and JPEG", () => {
  const jpeg = Uint8Array.from([0xff, 0xd8, 1, 2, 3, 0xff, 0xd9]);
  const parsed = parseFrame(frame(FRAME.DRIVING, { stamp: 1764201600.125, frameId: 0xfffffffe }, jpeg));
  assert.equal(parsed.kind, FRAME.DRIVING);
  assert.equal(parsed.stream, 0);
  assert.equal(parsed.layout, LAYOUT.MONO);
  assert.equal(parsed.stamp, 1764201600.125);
  assert.equal(parsed.frameId, 0xfffffffe);
  assert.deepEqual(Array.from(parsed.jpeg), Array.from(jpeg));
});

test("a further stream's frame gives its stream and layout", () => {
  const jpeg = Uint8Array.from([9, 8, 7]);
  const parsed = parseFrame(frame(FRAME.STREAM, { stream: 3, layout: LAYOUT.STEREO, stamp: -2.5, frameId: 7 }, jpeg));
  assert.deepEqual(
    { kind: parsed.kind, stream: parsed.stream, layout: parsed.layout, stamp: parsed.stamp, frameId: parsed.frameId },
    { kind: FRAME.STREAM, stream: 3, layout: LAYOUT.STEREO, stamp: -2.5, frameId: 7 },
  );
  assert.deepEqual(Array.from(parsed.jpeg), [9, 8, 7]);
});

test("the JPEG is a view into the frame, not a copy", () => {
  const data = frame(FRAME.DRIVING, { stamp: 0, frameId: 1 }, Uint8Array.from([5]));
  const parsed = parseFrame(data);
  assert.equal(parsed.jpeg.buffer, data);
  assert.equal(parsed.jpeg.byteOffset, DRIVING_HEADER.size);
});

test("a frame with no JPEG after its header is a frame with an empty JPEG", () => {
  const parsed = parseFrame(frame(FRAME.STREAM, { stream: 1, layout: 0, stamp: 1, frameId: 2 }, new Uint8Array(0)));
  assert.equal(parsed.jpeg.length, 0);
});

test("empty, short and unknown frames are dropped (null), never thrown", () => {
  assert.equal(parseFrame(new ArrayBuffer(0)), null);
  for (const kind of [FRAME.DRIVING, FRAME.STREAM]) {
    const size = kind === FRAME.DRIVING ? DRIVING_HEADER.size : STREAM_HEADER.size;
    for (let n = 1; n < size; n++) {
      const data = new Uint8Array(n);
      data[0] = kind;
      assert.equal(parseFrame(data.buffer), null, `kind ${kind}, ${n} bytes`);
    }
  }
  for (const kind of [0, 4, 0x7b, 255]) assert.equal(parseFrame(Uint8Array.from([kind, 1, 2, 3]).buffer), null);
});

test("a JSON frame that does not parse throws, as JSON.parse does", () => {
  assert.throws(() => parseFrame(Uint8Array.from([FRAME.JSON, 0x7b]).buffer), SyntaxError);
});

test("the constants cannot be changed by a page's code", () => {
  for (const table of [FRAME, DRIVING_HEADER, STREAM_HEADER, LAYOUT]) assert.ok(Object.isFrozen(table));
});

/** An inter-frame video frame as freelook.web.encode_video_frame packs it. */
function videoFrame(fields, payload) {
  const h = VIDEO_HEADER;
  const out = new Uint8Array(h.size + payload.length);
  const v = new DataView(out.buffer);
  v.setUint8(0, FRAME.VIDEO);
  v.setUint8(h.stream, fields.stream); v.setUint8(h.layout, fields.layout);
  v.setUint8(h.codec, fields.codec); v.setUint8(h.flags, fields.flags);
  v.setFloat64(h.stamp, fields.stamp, true);
  v.setUint32(h.frameId, fields.frameId, true);
  v.setUint16(h.width, fields.width, true); v.setUint16(h.height, fields.height, true);
  out.set(payload, h.size);
  return out.buffer;
}

test("a video frame gives its codec, keyframe flag, size and chunk", () => {
  const chunk = Uint8Array.from([0x90, 0x2c, 0, 7]);
  const parsed = parseFrame(videoFrame(
    { stream: 0, layout: LAYOUT.MONO, codec: CODEC.VP8, flags: 1, stamp: 12.5, frameId: 41, width: 320, height: 240 }, chunk,
  ));
  assert.deepEqual(
    { ...parsed, data: Array.from(parsed.data) },
    { kind: FRAME.VIDEO, stream: 0, layout: LAYOUT.MONO, codec: CODEC.VP8, keyframe: true, stamp: 12.5,
      frameId: 41, width: 320, height: 240, data: [0x90, 0x2c, 0, 7] },
  );
  const delta = parseFrame(videoFrame(
    { stream: 1, layout: 0, codec: CODEC.H264, flags: 0, stamp: 0, frameId: 42, width: 2, height: 2 }, chunk,
  ));
  assert.equal(delta.keyframe, false);
  assert.equal(delta.codec, CODEC.H264);
});

test("a video frame with an unknown codec or flag, or shorter than its header, is dropped", () => {
  const base = { stream: 0, layout: 0, codec: CODEC.VP8, flags: 1, stamp: 1, frameId: 1, width: 2, height: 2 };
  for (const bad of [{ codec: 0 }, { codec: 4 }, { codec: 255 }, { flags: 2 }, { flags: 0x81 }]) {
    assert.equal(parseFrame(videoFrame({ ...base, ...bad }, Uint8Array.from([1]))), null);
  }
  const whole = new Uint8Array(videoFrame(base, new Uint8Array(0)));
  for (let n = 1; n < VIDEO_HEADER.size; n += 1) assert.equal(parseFrame(whole.slice(0, n).buffer), null);
  assert.notEqual(parseFrame(whole.buffer), null);  // an empty chunk: the decoder's to judge
});
