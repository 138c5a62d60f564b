// Click-to-go on the camera's picture (prediction.js pixelToGround): a click's pixel goes back
// to the ground point it shows, the inverse of the projection the committed path is drawn with,
// for seeded camera poses and pictures painted at any size; above the horizon there is none.
// And the offer (goal.js goalOffered): above the set round trip, off again only below 0.8 of it.
import { test } from "node:test";
import assert from "node:assert/strict";
import { groundToPixel, pixelToGround } from "../../src/freelook/web/static/prediction.js";
import { goalOffered } from "../../src/freelook/web/static/goal.js";

const ROBOT = /** @type {any} */ ({
  camera_mount: [0.15, 0.0],
  camera: { width: 640, height: 480, fov_deg: 60, mount_height: 0.35 },
});

/** @param {number} seed */
function random(seed) {
  let s = seed >>> 0;
  return () => { s = (s * 1664525 + 1013904223) >>> 0; return s / 2 ** 32; };
}

test("a clicked pixel goes back to the ground point it shows", () => {
  const rnd = random(7);
  for (let i = 0; i < 200; i++) {
    const seen = { t: 0, x: 10 * rnd() - 5, y: 10 * rnd() - 5, theta: 6 * rnd() - 3, pan: 2 * rnd() - 1, tilt: -0.5 * rnd() };
    const size = rnd() < 0.5 ? { width: 640, height: 480 } : { width: 320, height: 240 };
    const psi = seen.theta + seen.pan, ahead = 0.5 + 8 * rnd(), side = (rnd() - 0.5) * ahead;
    const x = seen.x + 0.15 * Math.cos(seen.theta) + ahead * Math.cos(psi) - side * Math.sin(psi);
    const y = seen.y + 0.15 * Math.sin(seen.theta) + ahead * Math.sin(psi) + side * Math.cos(psi);
    const at = groundToPixel(ROBOT, seen, size, x, y);
    assert.ok(at);
    const back = pixelToGround(ROBOT, seen, size, at[0], at[1]);
    assert.ok(back);
    assert.ok(Math.hypot(back[0] - x, back[1] - y) < 1e-6, `${back} against ${[x, y]}`);
  }
  const level = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: 0 };
  assert.equal(pixelToGround(ROBOT, level, { width: 640, height: 480 }, 320, 100), null);  // sky
  assert.equal(pixelToGround(ROBOT, level, { width: 640, height: 480 }, 320, 240.4), null);  // horizon
  assert.equal(pixelToGround(ROBOT, level, { width: 640, height: 480 }, 320, 245, 30), null);  // 57 m
});

test("click-to-go is offered above the set round trip, withdrawn below 0.8 of it", () => {
  assert.equal(goalOffered(false, 1.2, 1.0), true);
  assert.equal(goalOffered(false, 0.9, 1.0), false);
  assert.equal(goalOffered(true, 0.9, 1.0), true);  // not withdrawn at once: no flicker
  assert.equal(goalOffered(true, 0.7, 1.0), false);
  assert.equal(goalOffered(false, null, 1.0), false);  // no round trip measured yet
});
