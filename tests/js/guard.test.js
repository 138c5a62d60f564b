// The page's own motion stop (guard.js): a frozen picture or a hidden page engages it once, it
// holds while its cause lasts, a click releases it only once the cause is gone, and the
// controls drive again only after they were seen let go. Times are ms of the page's clock.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  FROZEN_MAX_S, FROZEN_MIN_S, FROZEN_S, frozenLimit, mayMove, newGuard, noteCauses, release,
  releasable, stopCauses, stopText,
} from "../../src/freelook/web/static/guard.js";

const page = (over = {}) => ({ hidden: false, framePaintedAt: 1000, limit: FROZEN_S, ...over });

test("the freeze time: 1 s by default, bounded, a bad value is the default", () => {
  assert.equal(FROZEN_S, 1.0);
  assert.equal(frozenLimit(""), FROZEN_S);
  assert.equal(frozenLimit("abc"), FROZEN_S);
  assert.equal(frozenLimit("0.5"), 0.5);
  assert.equal(frozenLimit("0"), FROZEN_MIN_S);
  assert.equal(frozenLimit("99"), FROZEN_MAX_S);
});

test("a picture older than the set time is frozen; one just under it is not", () => {
  assert.deepEqual(stopCauses(page(), 1999), []);
  assert.equal(stopCauses(page(), 2001).length, 1);
  assert.match(stopCauses(page(), 2001)[0], /picture froze.*1\.0 s/);
  assert.deepEqual(stopCauses(page({ limit: 3 }), 3999), []);
});

test("before any frame was painted a missing picture stops nothing; a hidden page does", () => {
  assert.deepEqual(stopCauses(page({ framePaintedAt: 0 }), 1e6), []);
  assert.deepEqual(stopCauses(page({ framePaintedAt: 0, hidden: true }), 1e6), ["the page was hidden"]);
});

test("the stop engages once, holds, and is released only by a click once its cause is gone", () => {
  const g = newGuard();
  assert.equal(mayMove(g, false), true);
  const hidden = stopCauses(page({ hidden: true }), 1500);
  assert.equal(noteCauses(g, hidden, 1500), true);  // zero is sent now, once
  assert.equal(noteCauses(g, hidden, 1550), false);  // not again while it holds
  assert.equal(g.engaged, 1);
  assert.equal(mayMove(g, true), false);
  assert.equal(releasable(g, hidden), false);
  assert.equal(release(g, hidden), false);  // the cause stands: the click does nothing
  assert.match(stopText(g, hidden), /^motion stopped: the page was hidden$/);
  // shown again: still stopped until the click
  assert.equal(noteCauses(g, [], 1600), false);
  assert.equal(mayMove(g, true), false);
  assert.match(stopText(g, []), /resume driving/);
  assert.equal(release(g, []), true);
  assert.equal(stopText(g, []), "");
});

test("after the release a control held through the stop does not drive until let go", () => {
  const g = newGuard();
  noteCauses(g, ["the page was hidden"], 0);
  release(g, []);
  assert.equal(mayMove(g, false), false);  // a stick still held
  assert.equal(mayMove(g, false), false);
  assert.equal(mayMove(g, true), true);  // let go
  assert.equal(mayMove(g, false), true);  // a new deliberate input drives
});

test("a new cause after the release engages it again", () => {
  const g = newGuard();
  noteCauses(g, ["a"], 0);
  release(g, []);
  assert.equal(noteCauses(g, ["b"], 10), true);
  assert.equal(g.cause, "b");
  assert.equal(g.engaged, 2);
  assert.equal(g.needIdle, false);
});
