// How old is what the cockpit shows, and is the page behind (freshness.js): the computation
// behind the STALE marks and the "page: behind" chip. Times are ms of the page's clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  BEHIND_HOLD_MS, BEHIND_S, STALE_S, TICK_MS, cameraStale, delivery, isStale, linkChip, newFresh, noteBehind,
  noteTick, pageDelay, telemetryAge,
} from "../../src/freelook/web/static/freshness.js";

const near = (a, b) => Math.abs(a - b) < 1e-9;
const noPaint = { requested: 0, paintedAt: -1e9, delay: 0 };

test("no state taken in, or one without an age: the telemetry is infinitely old", () => {
  const fresh = newFresh();
  assert.equal(telemetryAge(0.1, fresh, 1000), Infinity);
  fresh.stateAt = 900;
  assert.equal(telemetryAge(null, fresh, 1000), Infinity);
  assert.equal(telemetryAge(undefined, fresh, 1000), Infinity);
});

test("the age grows with the time since the state came in, plus its delivery", () => {
  const fresh = newFresh();
  fresh.stateAt = 1000;
  fresh.rtt = 40;
  assert.ok(near(telemetryAge(0.2, fresh, 1000), 0.24));
  assert.ok(near(telemetryAge(0.2, fresh, 1600), 0.84));  // a frozen feed keeps ageing
});

test("a ping out longer than the last round trip counts as the delivery", () => {
  const fresh = newFresh();
  fresh.rtt = 30;
  fresh.pingSent = 1000;
  assert.equal(delivery(fresh, 1010), 30);
  assert.equal(delivery(fresh, 1700), 700);  // the socket is stuck: the page knows it is behind
  fresh.stateAt = 1000;
  assert.ok(near(telemetryAge(0, fresh, 1700), 1.4));
  fresh.pingSent = 0;
  assert.equal(delivery(fresh, 1700), 30);
});

test("stale: connected, with a state, older than STALE_S; never while disconnected", () => {
  assert.equal(isStale(true, true, STALE_S + 0.01), true);
  assert.equal(isStale(true, true, STALE_S), false);
  assert.equal(isStale(true, true, Infinity), true);
  assert.equal(isStale(false, true, Infinity), false);  // the link chip says disconnected
  assert.equal(isStale(true, false, Infinity), false);
});

test("the camera view is stale with the telemetry, or with no frame for 2 × STALE_S", () => {
  assert.equal(cameraStale(true, 0, 5000), true);
  assert.equal(cameraStale(false, 0, 5000), false);  // no frame yet: the no-video note says so
  assert.equal(cameraStale(false, 4000, 4000 + 2000 * STALE_S), false);
  assert.equal(cameraStale(false, 4000, 4001 + 2000 * STALE_S), true);
});

test("the page's delay is the longest of delivery, a late timer, a frame not painted, the last paint", () => {
  const fresh = newFresh();
  fresh.rtt = 20;
  assert.ok(near(pageDelay(fresh, 10_000, noPaint), 0.02));
  fresh.stall = 150;
  assert.ok(near(pageDelay(fresh, 10_000, noPaint), 0.15));
  assert.ok(near(pageDelay(fresh, 10_000, { requested: 9_600, paintedAt: -1e9, delay: 0 }), 0.4));
  assert.ok(near(pageDelay(fresh, 10_000, { requested: 0, paintedAt: 8_000, delay: 700 }), 0.7));
  // a slow paint long ago no longer counts
  assert.ok(near(pageDelay(fresh, 10_000, { requested: 0, paintedAt: 6_000, delay: 700 }), 0.15));
});

test("a timer tick that comes late notes the stall; one on time clears it", () => {
  const fresh = newFresh();
  noteTick(fresh, 1000);
  assert.equal(fresh.stall, 0);
  noteTick(fresh, 1000 + TICK_MS + 120);
  assert.equal(fresh.stall, 120);
  noteTick(fresh, 1170 + TICK_MS);
  assert.equal(fresh.stall, 0);
});

test("behind: said at once, held for BEHIND_HOLD_MS after the last time, with the most it fell behind", () => {
  const fresh = newFresh();
  assert.equal(noteBehind(fresh, BEHIND_S, 1000), false);  // at the threshold: not behind
  assert.equal(noteBehind(fresh, 0.9, 2000), true);
  assert.equal(noteBehind(fresh, 0.4, 2500), true);
  assert.equal(fresh.behindBy, 0.9);  // the most, not the last
  assert.equal(noteBehind(fresh, 0, 2500 + BEHIND_HOLD_MS - 1), true);
  assert.equal(noteBehind(fresh, 0, 2500 + BEHIND_HOLD_MS), false);
  // a new episode starts its own count
  assert.equal(noteBehind(fresh, 0.5, 10_000), true);
  assert.equal(fresh.behindBy, 0.5);
});

test("the link chip: unanswered and lost before stale, stale before up", () => {
  assert.deepEqual(linkChip({ session: "unanswered", connected: true }, false, 0.1)[1], "bad");
  assert.match(linkChip({ session: "unanswered", connected: false }, true, 9)[0], /no answer to session request/);
  assert.deepEqual(linkChip({ connected: false }, true, 9), ["link: lost", "bad"]);
  assert.deepEqual(linkChip({ connected: true }, true, 1.25), ["link: stale, 1.3 s old", "bad"]);
  assert.deepEqual(linkChip({ connected: true }, true, Infinity), ["link: stale, no report old", "bad"]);
  assert.deepEqual(linkChip({ connected: true }, false, 0.1), ["link: up", "ok"]);
});
