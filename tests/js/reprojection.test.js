// The picture moved to the prediction (reprojection.js): the ground's homography moves a ground
// point where prediction.js projects it from the predicted pose, the heading's moves a point at
// any depth where it shows after a turn in place, the reticle lands where the predicted camera
// looks, and each pixel of the warped picture takes the picture's pixel the exact warp moves onto
// it. The Pioneer 3-DX's camera.
import { test } from "node:test";
import assert from "node:assert/strict";
import { groundToPixel, pointToPixel, reticlePixel } from "../../src/freelook/web/static/prediction.js";
import {
  applyHomography, invert, predictedSeen, warpOf, warpPixels, warpPoint,
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

/** A picture whose every pixel names itself (its index and 1, opaque: none is black).
 * @param {number} w @param {number} h */
function named(w, h) {
  return Uint32Array.from({ length: w * h }, (_, i) => (0xff000000 | (i + 1)) >>> 0);
}

/**
 * Every pixel of the warped picture against ``warpPoint``: one that took the picture's pixel p
 * has a point within half a pixel of p that the warp moves onto it (1e-6 px), found by either
 * homography's inverse; a black one has none on the picture. Returns how many took a pixel.
 * @param {any} warp @param {string} what
 */
function checkWarped(warp, what) {
  const w = SIZE.width, h = SIZE.height, out = new Uint32Array(w * h).fill(1);
  warpPixels(named(w, h), out, w, h, warp);
  const backs = [invert(warp.ground), invert(warp.rotation)];
  let took = 0;
  for (let y = 0; y < h; y++) {
    for (let x = 0; x < w; x++) {
      // the points that warpPoint moves onto (x, y), on the picture and off the edges' roundings
      const onto = backs.map((b) => applyHomography(b, x, y)).filter((s) => {
        const at = s && warpPoint(warp, s[0], s[1]);
        return at && Math.hypot(at[0] - x, at[1] - y) < 1e-6;
      });
      const inside = onto.filter((s) => s[0] >= -0.5 && s[0] < w - 0.5 && s[1] >= -0.5 && s[1] < h - 0.5);
      const edge = onto.some((s) => [s[0] + 0.5, s[0] - w + 0.5, s[1] + 0.5, s[1] - h + 0.5, s[1] - warp.horizon].some((d) => Math.abs(d) < 1e-6));
      const pixel = out[y * w + x];
      if (edge) continue;
      if (pixel === 0xff000000) {
        assert.equal(inside.length, 0, `${what}: (${x}, ${y}) black, but ${inside[0]} moves onto it`);
        continue;
      }
      const index = (pixel & 0xffffff) - 1, u = index % w, v = (index - u) / w;
      assert.ok(inside.some((s) => Math.abs(s[0] - u) <= 0.5 && Math.abs(s[1] - v) <= 0.5),
        `${what}: (${x}, ${y}) took (${u}, ${v}), where ${onto.join(" or ")} moves onto it`);
      took += 1;
    }
  }
  return took;
}

test("each pixel of the warped picture takes the picture's pixel the warp moves onto it, black where none", () => {
  const from = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: -0.2 };
  const all = SIZE.width * SIZE.height;
  const cases = {
    still: from,
    "a 20 degree turn": { ...from, pan: 0.35 },
    "a 55 degree turn": { ...from, pan: 0.95 },
    "0.3 m ahead, turning": { t: 0.6, x: 0.3, y: 0.05, theta: 0.35, pan: 0, tilt: -0.2 },
    "0.3 m back": { ...from, x: -0.3 },
    "level, 0.6 m ahead and turning right": { ...from, tilt: 0, x: 0.6, y: -0.1, theta: -0.5 },
  };
  /** @type {Record<string, number>} */
  const took = {};
  for (const [what, to] of Object.entries(cases)) took[what] = checkWarped(warpOf(ROBOT, SIZE, from, { ...to, tilt: from.tilt }), what);
  assert.equal(took.still, all);  // no change: the picture itself
  assert.ok(took["a 20 degree turn"] < all && took["a 20 degree turn"] > 0.6 * all, `${took["a 20 degree turn"]}`);
  assert.ok(took["a 55 degree turn"] > 0 && took["a 55 degree turn"] < 0.2 * all, `${took["a 55 degree turn"]}`);
});

test("the picture unmoved is copied pixel for pixel; a turn leaves black the side it did not see", () => {
  const from = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: -0.2 };
  const w = SIZE.width, h = SIZE.height, source = named(w, h), out = new Uint32Array(w * h);
  warpPixels(source, out, w, h, warpOf(ROBOT, SIZE, from, from));
  assert.deepEqual(out, source);
  warpPixels(source, out, w, h, warpOf(ROBOT, SIZE, from, { ...from, pan: 0.35 }));
  // turned left: the picture goes right, and the page's left edge shows what the camera did not see
  assert.ok(out.slice(0, 100).every((p) => p === 0xff000000) && out[w - 1] !== 0xff000000);
});
