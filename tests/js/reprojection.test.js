// The picture moved to the prediction (reprojection.js): the ground's homography moves a ground
// point where prediction.js projects it from the predicted pose, the heading's moves a point at
// any depth where it shows after a turn in place, the reticle lands where the predicted camera
// looks, and the CSS transforms the page's compositor draws the picture's two parts with move each
// pixel's centre as the homographies do. The Pioneer 3-DX's camera.
import { test } from "node:test";
import assert from "node:assert/strict";
import { groundToPixel, pointToPixel, reticlePixel } from "../../src/freelook/web/static/prediction.js";
import {
  applyHomography, cssTransform, predictedSeen, skyRows, warpOf, warpPoint,
} from "../../src/freelook/web/static/reprojection.js";

const ROBOT = /** @type {any} */ ({
  camera_mount: [0.15, 0.0],
  camera: { width: 640, height: 480, fov_deg: 60, mount_height: 0.35 },
  footprint: { length: 0.445, width: 0.393, center_forward: -0.04 },
});
const SIZE = { width: 640, height: 480 };

/** A seeded stream of numbers in [0, 1) (a linear congruential generator). @param {number} seed */
function random(seed) {
  let s = seed >>> 0;
  return () => { s = (Math.imul(s, 1664525) + 1013904223) >>> 0; return s / 2 ** 32; };
}

/** @param {[number, number] | null} got @param {[number, number] | null} want @param {string} what */
function near(got, want, what, tol = 1e-6) {
  assert.ok(got && want, what);
  assert.ok(Math.abs(got[0] - want[0]) < tol && Math.abs(got[1] - want[1]) < tol, `${what}: ${got} against ${want}`);
}

test("a ground point moves where the predicted camera projects it", () => {
  const next = random(7);
  let checked = 0;
  for (let n = 0; n < 200; n++) {
    const tilt = -0.5 + 0.6 * next();
    const from = { t: 0, x: next() * 2, y: next() * 2 - 1, theta: next() * 6 - 3, pan: next() - 0.5, tilt };
    const to = { t: 0.6, x: from.x + next() * 0.6 - 0.3, y: from.y + next() * 0.6 - 0.3,
      theta: from.theta + next() * 0.6 - 0.3, pan: from.pan + next() * 0.4 - 0.2, tilt };
    const warp = warpOf(ROBOT, SIZE, from, to);
    const c = Math.cos(from.theta + from.pan), s = Math.sin(from.theta + from.pan);
    const ahead = 0.5 + 6 * next(), side = (next() - 0.5) * ahead;
    const x = from.x + 0.15 * Math.cos(from.theta) + c * ahead - s * side;
    const y = from.y + 0.15 * Math.sin(from.theta) + s * ahead + c * side;
    const seen = groundToPixel(ROBOT, from, SIZE, x, y), want = groundToPixel(ROBOT, to, SIZE, x, y);
    if (!seen || !want) continue;
    near(warpPoint(warp, ...seen), want, `ground point ${n}`);
    checked += 1;
  }
  assert.ok(checked > 150, `${checked}`);
});

test("a turn in place moves a point at any depth where it shows after the turn", () => {
  const next = random(11);
  for (let n = 0; n < 100; n++) {
    const from = { t: 0, x: 1, y: 2, theta: next() * 6 - 3, pan: next() - 0.5, tilt: -0.3 + 0.4 * next() };
    // the chassis turns by the same as the pan the other way: the camera stays where it is
    const to = { ...from, pan: from.pan + next() * 0.6 - 0.3 };
    const warp = warpOf(ROBOT, SIZE, from, to);
    const psi = from.theta + from.pan, r = 1 + 20 * next(), bearing = (next() - 0.5) * 0.8;
    const x = from.x + 0.15 * Math.cos(from.theta) + r * Math.cos(psi + bearing);
    const y = from.y + 0.15 * Math.sin(from.theta) + r * Math.sin(psi + bearing);
    const z = 3 * next();  // sky, wall, ground: a turn needs no depth
    const seen = pointToPixel(ROBOT, from, SIZE, x, y, z), want = pointToPixel(ROBOT, to, SIZE, x, y, z);
    if (!seen || !want) continue;
    near(applyHomography(warp.rotation, ...seen), want, `point ${n}`);
    if (z > 0.35) near(warpPoint(warp, ...seen), want, `above the horizon ${n}`);
  }
});

test("the reticle moves to where the predicted camera looks, the middle column", () => {
  const seen = { t: 0, x: 0, y: 0, theta: 0.2, pan: 0.1, tilt: -0.3 };
  const p = /** @type {any} */ ({ arrival: { t: 0.6, x: 0.1, y: 0.05, theta: 0.45 }, arrival_pan: 0.1 });
  const on = reticlePixel(ROBOT, seen, SIZE, p);
  assert.ok(on && on[0] < 300, `${on}`);  // the turn to come is to the left on the picture taken
  const to = predictedSeen(p, seen);
  near(warpPoint(warpOf(ROBOT, SIZE, seen, to), ...on), reticlePixel(ROBOT, to, SIZE, p), "reticle");
  near(reticlePixel(ROBOT, to, SIZE, p), [319.5, 239.5], "its place");  // on the axis, tilted down
});

test("the warp applies the turn and the move, in the first camera's frame", () => {
  const from = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: 0 };
  const warp = warpOf(ROBOT, SIZE, from, { t: 0.5, x: 0.3, y: 0, theta: 0, pan: 0.25, tilt: 0 });
  assert.ok(Math.abs(warp.yaw - 0.25) < 1e-12 && Math.abs(warp.forward - 0.3) < 1e-12 && Math.abs(warp.left) < 1e-12);
  // a left turn moves the picture right: the middle of the horizon goes right by f·tan(turn)
  const mid = warpPoint(warp, 319.5, 200);
  assert.ok(mid && Math.abs(mid[0] - (319.5 + 554.2562584220408 * Math.tan(0.25))) < 1e-6, `${mid}`);
  const still = warpOf(ROBOT, SIZE, from, from);
  near(warpPoint(still, 100, 400), [100, 400], "no change, no warp");
});

/**
 * A CSS ``matrix3d`` (column by column) applied to an element's point (x, y): where it lands on
 * the page, or null where the browser draws nothing (its fourth sum not positive).
 * @param {string} css @param {number} x @param {number} y @returns {[number, number] | null}
 */
function throughCss(css, x, y) {
  const m = css.replace(/^matrix3d\(|\)$/g, "").split(",").map(Number);
  assert.equal(m.length, 16, css);
  const X = m[0] * x + m[4] * y + m[12], Y = m[1] * x + m[5] * y + m[13], W = m[3] * x + m[7] * y + m[15];
  return W > 0 ? [X / W, Y / W] : null;
}

test("the CSS transform moves a pixel's centre where the homography does, and shows nothing behind", () => {
  const next = random(5);
  const from = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: -0.2 };
  let behind = 0;
  for (let n = 0; n < 40; n++) {
    const to = { t: 0.6, x: next() * 1.2 - 0.4, y: next() * 0.6 - 0.3, theta: next() * 1.6 - 0.8, pan: next() - 0.5, tilt: from.tilt };
    const warp = warpOf(ROBOT, SIZE, from, to), rows = skyRows(warp, SIZE.height);
    for (let k = 0; k < 50; k++) {
      const u = Math.floor(next() * SIZE.width), v = Math.floor(next() * SIZE.height);
      const sky = v < rows, want = applyHomography(sky ? warp.rotation : warp.ground, u, v);
      // the layer's pixel (u, v − top), its centre half a pixel in, on the page's pixel centres
      const top = sky ? 0 : rows, css = cssTransform(sky ? warp.rotation : warp.ground, top);
      const got = throughCss(css, u + 0.5, v - top + 0.5);
      if (!want) { assert.equal(got, null, `case ${n}: (${u}, ${v}) behind the camera, drawn at ${got}`); behind += 1; continue; }
      near(got && [got[0] - 0.5, got[1] - 0.5], want, `case ${n}: (${u}, ${v})`, 1e-6);
      assert.deepEqual(warpPoint(warp, u, v), want, `case ${n}: (${u}, ${v}) split as warpPoint splits it`);
    }
  }
  assert.ok(behind > 0, "some cases move a point behind the camera");
});

test("the sky's rows are those at or above the horizon's row, within the picture", () => {
  const at = (/** @type {number} */ horizon) => skyRows(/** @type {any} */ ({ horizon }), 480);
  assert.equal(at(239.5), 240);  // rows 0..239 at or above 239.5, row 240 the ground's
  assert.equal(at(240), 241);
  assert.equal(at(-3), 0);  // the horizon above the picture (tilted down): all of it ground
  assert.equal(at(900), 480);
  const from = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: -0.2 };
  const warp = warpOf(ROBOT, SIZE, from, { ...from, x: 0.3 }), rows = skyRows(warp, SIZE.height);
  assert.ok(rows - 1 <= warp.horizon && warp.horizon < rows, `${rows} ${warp.horizon}`);
});
