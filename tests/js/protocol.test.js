// The server → page frames as protocol.js parses them: the header's fields where the server
// puts them (freelook.web.encode_frame; tests/web/test_protocol_js.py compares the layouts),
// and hostile frames dropped, not thrown.
import { test } from "node:test";
import assert from "node:assert/strict";
import { DRIVING_HEADER, FRAME, LAYOUT, STREAM_HEADER, parseFrame } from "../../src/freelook/web/static/protocol.js";

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
