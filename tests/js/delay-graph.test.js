// The cockpit's delay graph (panels.js): the painted frame's age and the round trip over the
// link graph's span, on the link graph's drawing. Its points, its scale, and where its lines
// run, without a DOM; a value the page does not know yet has no point.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  DELAY_SERIES, GRAPH_MS, addSample, delaySample, delayScale, graphLines,
} from "../../src/freelook/web/static/panels.js";

const near = (a, b, eps = 1e-9) => Math.abs(a - b) < eps;

test("a point holds the age and the round trip; what is unknown is NaN", () => {
  assert.deepEqual(delaySample(1000, 0.61, 1.02), [1000, 0.61, 1.02]);
  const unknown = delaySample(1000, null, undefined);
  assert.equal(unknown[0], 1000);
  assert.ok(Number.isNaN(unknown[1]) && Number.isNaN(unknown[2]));
  assert.ok(Number.isNaN(delaySample(0, Infinity, 0.1)[1]));
});

test("the scale is the highest value with a tenth to spare, never under 0.2 s", () => {
  assert.ok(near(delayScale([]), 0.22));
  assert.ok(near(delayScale([[0, 0.01, 0.002]]), 0.22));
  assert.ok(near(delayScale([[0, 0.6, 1.1], [1, NaN, 0.9]]), 1.21));
  assert.ok(near(delayScale([[0, NaN, NaN]]), 0.22));
});

test("points older than the span are let go", () => {
  const g = [];
  addSample(g, delaySample(0, 0.1, 0.2));
  addSample(g, delaySample(GRAPH_MS / 2, 0.1, 0.2));
  addSample(g, delaySample(GRAPH_MS + 1, 0.1, 0.2));
  assert.deepEqual(g.map((r) => r[0]), [GRAPH_MS / 2, GRAPH_MS + 1]);
});

test("the lines: time across the span, seconds up to the scale, unknown values left out", () => {
  const end = 100000, t0 = end - GRAPH_MS;
  const g = [delaySample(t0, null, 0.5), delaySample(t0 + GRAPH_MS / 2, 0.55, 1.1), delaySample(end, 1.1, 0)];
  const scale = delayScale(g);
  const { lines } = graphLines(g, [DELAY_SERIES.frameAge, DELAY_SERIES.roundTrip], { width: 300, height: 60, top: 0, end }, scale);
  assert.equal(lines.length, 2);
  const [age, rtt] = lines;
  assert.equal(age.color, DELAY_SERIES.frameAge.color);
  assert.equal(age.points.length, 2);  // the first age was not known
  assert.equal(rtt.points.length, 3);
  assert.ok(near(age.points[0][0], 150) && near(age.points[0][1], 60 - (0.55 / scale) * 60));
  assert.ok(near(age.points[1][0], 300) && near(age.points[1][1], 60 - (1.1 / scale) * 60));
  assert.ok(near(rtt.points[0][0], 0) && near(rtt.points[2][1], 60));  // a zero round trip at the bottom
  assert.ok(age.points.every(([x, y]) => x >= 0 && x <= 300 && y >= 0 && y <= 60));
});
