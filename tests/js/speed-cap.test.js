// The speed cap chip's text (freshness.js): the robot's delay rule's cap and the round trip it
// measured, or nothing when the robot has no delay rule or says what cannot be one.
import { test } from "node:test";
import assert from "node:assert/strict";
import { speedCapText } from "../../src/freelook/web/static/freshness.js";

test("the cap and its round trip, as the cockpit shows them", () => {
  assert.equal(speedCapText({ cap: 0.4213, rtt: 0.8049 }), "speed cap 0.42 m/s (round trip 0.8 s)");
  assert.equal(speedCapText({ cap: 0, rtt: 2 }), "speed cap 0.00 m/s (round trip 2.0 s)");
});

test("no delay rule, or a value that cannot be one: no chip", () => {
  assert.equal(speedCapText(null), null);
  assert.equal(speedCapText(undefined), null);
  for (const bad of [
    { cap: NaN, rtt: 1 }, { cap: 1, rtt: Infinity }, { cap: -0.1, rtt: 1 }, { cap: 1, rtt: -1 },
  ]) assert.equal(speedCapText(bad), null);
});
