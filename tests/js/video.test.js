// The page's keyframe gate (video.js): a gap in a stream's frame ids holds the deltas back
// until a keyframe and asks for one; ids wrap at 2³².
import { test } from "node:test";
import assert from "node:assert/strict";
import { CODEC_STRINGS, KeyframeGate, webCodecsAvailable } from "../../src/freelook/web/static/video.js";
import { CODEC } from "../../src/freelook/web/static/protocol.js";

const f = (frameId, keyframe = false) => ({ frameId, keyframe });

test("deltas pass in an unbroken run from a keyframe", () => {
  const gate = new KeyframeGate();
  assert.deepEqual([f(5, true), f(6), f(7)].map((x) => gate.admit(x)), [true, true, true]);
  assert.equal(gate.wantsKeyframe, false);
});

test("a lost frame holds the deltas until the next keyframe, which is asked for", () => {
  const gate = new KeyframeGate();
  gate.admit(f(0, true)); gate.admit(f(1));
  assert.equal(gate.admit(f(3)), false);  // 2 was lost
  assert.equal(gate.wantsKeyframe, true);
  assert.equal(gate.admit(f(4)), false);  // still no reference
  assert.equal(gate.admit(f(5, true)), true);
  assert.equal(gate.wantsKeyframe, false);
  assert.equal(gate.admit(f(6)), true);
  assert.deepEqual({ gaps: gate.gaps, held: gate.held }, { gaps: 1, held: 2 });
});

test("a delta before any keyframe is held; a decoder error waits for a keyframe", () => {
  const gate = new KeyframeGate();
  assert.equal(gate.admit(f(9)), false);
  gate.admit(f(10, true));
  gate.lost();
  assert.equal(gate.admit(f(11)), false);
  assert.equal(gate.admit(f(12, true)), true);
});

test("frame ids wrap around 2^32", () => {
  const gate = new KeyframeGate();
  gate.admit(f(0xffffffff, true));
  assert.equal(gate.admit(f(0)), true);
  assert.equal(gate.admit(f(2)), false);
});

test("every inter-frame codec has a WebCodecs string; node has no decoder", () => {
  assert.deepEqual(Object.keys(CODEC_STRINGS).map(Number).sort(), [CODEC.VP8, CODEC.VP9, CODEC.H264]);
  assert.equal(webCodecsAvailable(), typeof globalThis.VideoDecoder === "function");
});
