// How old the painted camera frame is (freshness.js): the station's clock from its pongs (the
// least delayed of the newest few), the robot's from the session's estimate of its offset.
// Times are ms of the page's clock, stamps s of the station's and the robot's.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  CLOCK_PONGS, delayText, frameAge, newFresh, notePong, stationNow,
} from "../../src/freelook/web/static/freshness.js";

const near = (a, b, tol = 1e-9) => Math.abs(a - b) < tol;

test("before a pong with the station's clock, nothing is known", () => {
  const fresh = newFresh();
  assert.equal(stationNow(fresh, 5), null);
  assert.equal(frameAge(99, { offset: 0 }, fresh, 1000), null);
  notePong(fresh, NaN, 10, 1000);
  notePong(fresh, 100, -1, 1000);
  assert.equal(stationNow(fresh, 1000), null);
  notePong(fresh, 100, 10, 1000);
  assert.equal(frameAge(99, { offset: null }, fresh, 1000), null);
  assert.equal(frameAge(NaN, { offset: 0 }, fresh, 1000), null);
});

test("the station's clock was read half the round trip before the pong came in, and runs on", () => {
  const fresh = newFresh();
  notePong(fresh, 100, 20, 1000);  // read at page time 990 ms
  assert.ok(near(stationNow(fresh, 1250), 100 + 0.26));
});

test("the least delayed of the newest pongs wins; a late pong does not move the clock", () => {
  const fresh = newFresh();
  notePong(fresh, 100, 4, 1000);  // station 100 s at page 998 ms
  notePong(fresh, 100.5, 400, 1700);  // stuck behind a burst: would say 100.5 at 1500
  assert.ok(near(stationNow(fresh, 2000), 101.002));
  for (let i = 0; i < CLOCK_PONGS; i++) notePong(fresh, 200 + i, 10, 100_000 + 1000 * i);
  // the early one has left the window: the newest's
  assert.ok(near(stationNow(fresh, 100_005), 200 + 0.01));
});

test("a frame's age is the station's now minus its capture on the station's clock", () => {
  const fresh = newFresh();
  notePong(fresh, 50, 0, 2000);
  // the robot's clock runs 1000 s ahead of the station's; captured 0.5 s before page 2000 ms
  const clock = { offset: 1000 };
  assert.ok(near(frameAge(1049.5, clock, fresh, 2100), 0.6));
  assert.ok(near(frameAge(1049.5, clock, fresh, 2600), 1.1));  // it ages while it stays up
});

test("the delay chip gives numbers, or a dash for what is not known", () => {
  assert.equal(delayText(0.523, 1.0449), "frame age 0.52 s · round trip 1.04 s");
  assert.equal(delayText(null, undefined), "frame age - · round trip -");
  assert.equal(delayText(Infinity, null), "frame age - · round trip -");
});
