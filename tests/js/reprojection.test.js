// The picture moved to the prediction (reprojection.js): the ground's homography moves a ground
// point where prediction.js projects it from the predicted pose, the heading's moves a point at
// any depth where it shows after a turn in place, the reticle lands where the predicted camera
// looks, and the mesh's affine pieces stay near the exact warp. The Pioneer 3-DX's camera.
import { test } from "node:test";
import assert from "node:assert/strict";
import { groundToPixel, pointToPixel, reticlePixel } from "../../src/freelook/web/static/prediction.js";
import {
  affineOf, applyHomography, predictedSeen, warpMesh, warpOf, warpPoint,
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

/** The worst distance (px) between the mesh's affine pieces and the exact warp, at each
 * triangle's centre and its edges' middles that land on the page. @param {any} warp */
function meshError(warp) {
  let worst = 0;
  for (const { src, dst } of warpMesh(warp, 640, 480)) {
    const [a, b, c, d, e, f] = affineOf(src, dst);
    for (let k = 0; k < 3; k++) near([a * src[k][0] + c * src[k][1] + e, b * src[k][0] + d * src[k][1] + f], dst[k], "corner");
    for (const [wa, wb, wc] of [[1 / 3, 1 / 3, 1 / 3], [0.5, 0.5, 0], [0, 0.5, 0.5], [0.5, 0, 0.5]]) {
      const u = wa * src[0][0] + wb * src[1][0] + wc * src[2][0], v = wa * src[0][1] + wb * src[1][1] + wc * src[2][1];
      const exact = warpPoint(warp, u, v);
      if (!exact || exact[0] < 0 || exact[0] > 640 || exact[1] < 0 || exact[1] > 480) continue;  // off the page
      worst = Math.max(worst, Math.hypot(a * u + c * v + e - exact[0], b * u + d * v + f - exact[1]));
    }
  }
  return worst;
}

test("the mesh's affine pieces: within 2 px of the exact warp for a 20 degree turn, 8 px with 0.3 m ahead too", (t) => {
  const from = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: -0.2 };
  const turn = meshError(warpOf(ROBOT, SIZE, from, { ...from, pan: 0.35 }));
  const both = meshError(warpOf(ROBOT, SIZE, from, { t: 0.6, x: 0.3, y: 0.05, theta: 0.35, pan: 0, tilt: -0.2 }));
  assert.ok(turn < 2.0, `${turn} px`);
  assert.ok(both < 8.0, `${both} px`);  // the ground 0.55 m ahead at the picture's foot, 0.25 m after
  t.diagnostic(`mesh off the exact warp: ${turn.toFixed(2)} px turning, ${both.toFixed(2)} px turning and moving`);
});
