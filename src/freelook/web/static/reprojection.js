// @ts-check
// freelook cockpit: the camera's picture moved to the prediction. Through delay the picture
// shows the world from where the camera was when it was taken, a one-way delay and more old;
// the station predicts where the camera is when a command sent now lands. This module warps the
// picture from the first pose to the second with the camera model prediction.js projects with
// (the simulator's: a level pinhole whose tilt shifts the horizon by f·tan(tilt)). A change of
// heading is a homography of the picture, exact at any depth; a move is exact only for points at
// a known depth, and the one known is the ground's: below the horizon the picture is moved as the
// ground plane would be, above it by the heading's change alone. The tilt is the picture's (the
// prediction says none). Each homography is also given as the CSS transform that the page's
// compositor draws the picture's part with (picture-layers.js). DOM-free (tested under node
// --test).

/** @typedef {import("./prediction.js").Seen} Seen */
/** @typedef {import("./messages.js").HelloRobot} HelloRobot */
/** @typedef {import("./messages.js").Prediction} Prediction */
/** @typedef {import("./panels.js").Point} Point */
/** A 3×3 matrix, row by row. @typedef {number[]} Mat3 */

/**
 * The warp from one camera pose's picture to another's: the ground plane's homography (below
 * the horizon), the heading's alone (above it), the horizon's row on the picture and on the
 * warped one (the same but for a change of tilt), and what it applies (the heading's change, rad;
 * the move, m, forward and left in the first camera's frame).
 * @typedef {{ ground: Mat3, rotation: Mat3, horizon: number, horizonTo: number, yaw: number, forward: number, left: number }} Warp
 */

/** @param {Mat3} a @param {Mat3} b @returns {Mat3} */
export function multiply(a, b) {
  /** @type {Mat3} */
  const out = [];
  for (let r = 0; r < 3; r++) {
    for (let c = 0; c < 3; c++) out.push(a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] + a[3 * r + 2] * b[6 + c]);
  }
  return out;
}

/**
 * The camera seen from ``seen``: its place on the ground (m) and heading (rad).
 * @param {HelloRobot} robot @param {Seen} seen @returns {{ x: number, y: number, psi: number }}
 */
export function cameraPlace(robot, seen) {
  const [l1, l2] = robot.camera_mount, c = Math.cos(seen.theta), s = Math.sin(seen.theta);
  return { x: seen.x + c * l1 - s * l2, y: seen.y + s * l1 + c * l2, psi: seen.theta + seen.pan };
}

/**
 * The camera's intrinsics on the picture as painted (``size`` px): camera coordinates (left,
 * up from the camera, forward; m) to homogeneous pixels, as prediction.js's pointToPixel.
 * @param {HelloRobot} robot @param {{ width: number }} size @param {number} tilt @returns {Mat3}
 */
export function intrinsics(robot, size, tilt) {
  const cam = robot.camera, k = size.width / cam.width;
  const f = (cam.width / 2) / Math.tan(cam.fov_deg * Math.PI / 360);
  return [-k * f, 0, k * (cam.width / 2 - 0.5), 0, -k * f, k * (cam.height / 2 - 0.5 + f * Math.tan(tilt)), 0, 0, 1];
}

/** @param {Mat3} K @returns {Mat3} the inverse of an intrinsics matrix */
function inverseIntrinsics(K) {
  return [1 / K[0], 0, -K[2] / K[0], 0, 1 / K[4], -K[5] / K[4], 0, 0, 1];
}

/**
 * The prediction's camera when a command sent now lands, at the picture's tilt.
 * @param {Prediction} p @param {Seen} seen @returns {Seen}
 */
export function predictedSeen(p, seen) {
  const a = p.arrival;
  return { t: a.t, x: a.x, y: a.y, theta: a.theta, pan: p.arrival_pan, tilt: seen.tilt };
}

/**
 * The warp of the picture taken from ``from`` to the one the camera would take from ``to``.
 * @param {HelloRobot} robot @param {{ width: number, height: number }} size
 * @param {Seen} from @param {Seen} to @returns {Warp}
 */
export function warpOf(robot, size, from, to) {
  const a = cameraPlace(robot, from), b = cameraPlace(robot, to), h = robot.camera.mount_height;
  // world → camera (left, up, forward) of each; R = M_to · M_fromᵀ, t = M_to · (C_from − C_to)
  const yaw = b.psi - a.psi, c = Math.cos(yaw), s = Math.sin(yaw);
  const R = [c, 0, -s, 0, 1, 0, s, 0, c];
  const dx = a.x - b.x, dy = a.y - b.y, cb = Math.cos(b.psi), sb = Math.sin(b.psi);
  const t = [-sb * dx + cb * dy, 0, cb * dx + sb * dy];
  // the ground, up = −h in the first camera: X_to = (R − t·nᵀ/h) X_from, n = (0, 1, 0)
  const G = [R[0], R[1] - t[0] / h, R[2], R[3], R[4] - t[1] / h, R[5], R[6], R[7] - t[2] / h, R[8]];
  const K1 = intrinsics(robot, size, from.tilt), K2 = intrinsics(robot, size, to.tilt), Ki = inverseIntrinsics(K1);
  const ca = Math.cos(a.psi), sa = Math.sin(a.psi), mx = b.x - a.x, my = b.y - a.y;
  return {
    ground: multiply(K2, multiply(G, Ki)),
    rotation: multiply(K2, multiply(R, Ki)),
    horizon: K1[5],
    horizonTo: K2[5],
    yaw,
    forward: ca * mx + sa * my,
    left: -sa * mx + ca * my,
  };
}

/**
 * Where the picture's point (u, v) goes: by the ground's homography below the horizon, the
 * heading's above it; null when it falls behind the second camera.
 * @param {Warp} warp @param {number} u @param {number} v @returns {Point | null}
 */
export function warpPoint(warp, u, v) {
  return applyHomography(v > warp.horizon ? warp.ground : warp.rotation, u, v);
}

/** @param {Mat3} H @param {number} u @param {number} v @returns {Point | null} */
export function applyHomography(H, u, v) {
  const w = H[6] * u + H[7] * v + H[8];
  if (w < 1e-6) return null;
  return [(H[0] * u + H[1] * v + H[2]) / w, (H[3] * u + H[4] * v + H[5]) / w];
}

/**
 * How many of the picture's rows (``height`` in all) are the heading's to move, at or above the
 * horizon's row; the rest, below it, are the ground's (as ``warpPoint`` splits a point).
 * @param {Warp} warp @param {number} height @returns {number}
 */
export function skyRows(warp, height) {
  return Math.max(0, Math.min(height, Math.floor(warp.horizon) + 1));
}

/**
 * A homography on pixel centres (at whole coordinates, as the camera model's) as the CSS
 * transform that moves an element holding the picture's rows from ``top`` on (its origin at its
 * top-left corner, where a pixel's centre is half a pixel in): ``matrix3d``, column by column,
 * its depth untouched. The browser draws only what lands in front of the second camera, where
 * the homography's third sum is positive: what ``applyHomography`` moves, and nothing it calls
 * behind.
 * @param {Mat3} H @param {number} [top] @returns {string}
 */
export function cssTransform(H, top = 0) {
  const shift = (/** @type {number} */ dx, /** @type {number} */ dy) => [1, 0, dx, 0, 1, dy, 0, 0, 1];
  const [a, b, c, d, e, f, g, h, i] = multiply(shift(0.5, 0.5), multiply(H, shift(-0.5, top - 0.5)));
  return `matrix3d(${[a, d, 0, g, b, e, 0, h, 0, 0, 1, 0, c, f, 0, i].join(",")})`;
}
