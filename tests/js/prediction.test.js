// The predicted path's drawing (prediction.js): a ground point projected on the driving camera's
// picture as the simulator's camera projects it (freelook.sim.camera.Camera.project, numbers
// from the Pioneer 3-DX's camera: 640×480, 60°, 0.35 m up, 0.15 m ahead of the axle), the path's
// edges, the reticle where the camera will look when a command sent now lands, and the report a
// picture was taken at.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  groundToPixel, pathEdges, poseAt, rememberPose, reticlePixel,
} from "../../src/freelook/web/static/prediction.js";

const ROBOT = /** @type {any} */ ({
  camera_mount: [0.15, 0.0],
  camera: { width: 640, height: 480, fov_deg: 60, mount_height: 0.35 },
  footprint: { length: 0.445, width: 0.393, center_forward: -0.04 },
});
const SIZE = { width: 640, height: 480 };

test("a ground point shows where the simulator's camera draws it", () => {
  const cases = [
    [{ x: 0, y: 0, theta: 0, pan: 0, tilt: 0 }, [2.0, 0.0], [319.5, 344.3592921338996]],
    [{ x: 1.0, y: 0.2, theta: 0.1, pan: 0.2, tilt: -0.1 }, [3.0, 0.5], [401.6782950292997, 288.6168911838506]],
    [{ x: 0, y: 0, theta: 0.3, pan: -0.2, tilt: -0.3 }, [1.5, -0.4], [564.6907277616751, 216.635460435202]],
  ];
  for (const [seen, [x, y], [u, v]] of cases) {
    const got = groundToPixel(ROBOT, { t: 0, ...seen }, SIZE, x, y);
    assert.ok(got);
    assert.ok(Math.abs(got[0] - u) < 1e-9 && Math.abs(got[1] - v) < 1e-9, `${got} against ${[u, v]}`);
  }
  // painted at half the camera's size: half the pixels; behind the camera: nowhere
  const half = groundToPixel(ROBOT, { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: 0 }, { width: 320, height: 240 }, 2, 0);
  assert.ok(half && Math.abs(half[0] - 159.75) < 1e-9);
  assert.equal(groundToPixel(ROBOT, { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: 0 }, SIZE, -1, 0), null);
});

test("the path's edges sit half the robot's width plus the envelope to each side", () => {
  const { left, right } = pathEdges([[0, 0], [1, 0], [2, 0]], [0.05, 0.1, 0.2], 0.2);
  assert.deepEqual(left.map((p) => p[1]), [0.25, 0.30000000000000004, 0.4]);
  assert.deepEqual(right.map((p) => p[1]), [-0.25, -0.30000000000000004, -0.4]);
  assert.deepEqual(left.map((p) => p[0]), [0, 1, 2]);
});

test("each report is remembered once, and a picture finds the one nearest its stamp", () => {
  /** @type {any[]} */
  const poses = [];
  for (const t of [1.0, 1.031, 1.031, 1.062]) {
    rememberPose(poses, /** @type {any} */ ({ t, pose: { x: t, y: 0, theta: 0 }, pan: 0.1, tilt: 0 }));
  }
  rememberPose(poses, /** @type {any} */ ({ mode: null }));  // no report yet: nothing
  assert.equal(poses.length, 3);
  assert.equal(poseAt(poses, 1.05).t, 1.062);
  assert.equal(poseAt(poses, 1.02).pan, 0.1);
  assert.equal(poseAt([], 1.0), null);
});

test("the reticle: at the picture's centre while nothing turns, off it by f·tan of the turn", () => {
  const seen = { t: 0, x: 1, y: 2, theta: 0.3, pan: 0.1, tilt: -0.2 };
  const focal = 320 / Math.tan(Math.PI / 6);
  /** @param {number} pan */
  const ahead = (pan) => /** @type {any} */ ({ arrival: { t: 0.6, x: 1, y: 2, theta: 0.3 }, arrival_pan: pan });
  const still = reticlePixel(ROBOT, seen, SIZE, ahead(0.1));
  assert.ok(still && Math.abs(still[0] - 319.5) < 1e-9 && Math.abs(still[1] - 239.5) < 1e-9, `${still}`);
  // the camera turned 10° left in place (the pan alone, as Free Look turns it): left of centre
  const turned = reticlePixel(ROBOT, seen, SIZE, ahead(0.1 + 10 * Math.PI / 180));
  assert.ok(turned);
  assert.ok(Math.abs(turned[0] - (319.5 - focal * Math.tan(10 * Math.PI / 180))) < 1e-9, `${turned}`);
  // the picture's rows shear with the tilt (the simulator's camera): off its axis the point
  // 5 m along the turned axis is nearer, and lower by −f·tan(tilt)·(1/cos 10° − 1)
  const forward = 5 * Math.cos(-0.2) * Math.cos(10 * Math.PI / 180);
  const v = 240 + focal * Math.tan(-0.2) - focal * 5 * Math.sin(-0.2) / forward - 0.5;
  assert.ok(Math.abs(turned[1] - v) < 1e-9 && turned[1] > 239.5, `${turned}`);
});

test("looking down, the reticle is where the camera's axis meets the ground", () => {
  const seen = { t: 0, x: 0, y: 0, theta: 0, pan: 0, tilt: -0.5 };
  const ahead = /** @type {any} */ ({ arrival: { t: 0.6, x: 0.2, y: 0, theta: 0 }, arrival_pan: 0 });
  const got = reticlePixel(ROBOT, seen, SIZE, ahead);
  const ground = groundToPixel(ROBOT, seen, SIZE, 0.2 + 0.15 + 0.35 / Math.tan(0.5), 0);
  assert.ok(got && ground && Math.abs(got[0] - ground[0]) < 1e-9 && Math.abs(got[1] - ground[1]) < 1e-9, `${got} ${ground}`);
});
