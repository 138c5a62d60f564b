// @ts-check
// freelook cockpit: the camera's picture moved to the prediction. Through delay the picture
// shows the world from where the camera was when it was taken, a one-way delay and more old;
// the station predicts where the camera is when a command sent now lands. This module warps the
// picture from the first pose to the second with the camera model prediction.js projects with
// (the simulator's: a level pinhole whose tilt shifts the horizon by f·tan(tilt)). A change of
// heading is a homography of the picture, exact at any depth; a move is exact only for points at
// a known depth, and the one known is the ground's: below the horizon the picture is moved as the
// ground plane would be, above it by the heading's change alone. The tilt is the picture's (the
// prediction says none). Drawn as a mesh of triangles, each an affine piece of the warp, on the
// page's 2-D canvas. DOM-free (tested under node --test).

/** @typedef {import("./prediction.js").Seen} Seen */
/** @typedef {import("./messages.js").HelloRobot} HelloRobot */
/** @typedef {import("./messages.js").Prediction} Prediction */
/** @typedef {import("./panels.js").Point} Point */
/** A 3×3 matrix, row by row. @typedef {number[]} Mat3 */

/**
 * The warp from one camera pose's picture to another's: the ground plane's homography (below
 * the horizon), the heading's alone (above it), the horizon's row, and what it applies (the
 * heading's change, rad; the move, m, forward and left in the first camera's frame).
 * @typedef {{ ground: Mat3, rotation: Mat3, horizon: number, yaw: number, forward: number, left: number }} Warp
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

/** The mesh's cells: columns across, rows above the horizon and below it. */
export const MESH = { columns: 8, sky: 2, ground: 6 };

/** @param {Mat3} m @returns {Mat3} its inverse (adjugate over determinant) */
export function invert(m) {
  const [a, b, c, d, e, f, g, h, i] = m;
  const A = e * i - f * h, B = f * g - d * i, C = d * h - e * g, det = a * A + b * B + c * C;
  return [A / det, (c * h - b * i) / det, (b * f - c * e) / det,
    B / det, (a * i - c * g) / det, (c * d - a * f) / det,
    C / det, (b * g - a * h) / det, (a * e - b * d) / det];
}

/**
 * The mesh's rows on the picture: even above the horizon; below it, the rows the ground's
 * homography takes (at the middle column) to even rows of the warped picture, so that the
 * ground stretched by a move is cut as finely where it shows, then the picture's last row.
 * @param {Warp} warp @param {number} w @param {number} h @returns {number[]}
 */
export function meshRows(warp, w, h) {
  const horizon = Math.max(0, Math.min(h, warp.horizon));
  const rows = [];
  for (let i = 0; i <= MESH.sky; i++) rows.push(horizon * i / MESH.sky);
  const back = invert(warp.ground), top = applyHomography(warp.ground, w / 2, horizon + 1e-3);
  for (let i = 1; top && i <= MESH.ground; i++) {
    const at = applyHomography(back, w / 2, top[1] + (h - top[1]) * i / MESH.ground);
    if (at && at[1] > horizon && at[1] < h) rows.push(at[1]);
  }
  rows.push(h);
  return rows.filter((v, i) => i === 0 || v > rows[i - 1] + 1e-6);
}

/**
 * The warp as triangles of the picture (``w`` × ``h`` px): each one's corners on the picture
 * and where the warp puts them, the horizon a row of corners; a triangle with a corner behind
 * the second camera is left out.
 * @param {Warp} warp @param {number} w @param {number} h
 * @returns {{ src: Point[], dst: Point[] }[]}
 */
export function warpMesh(warp, w, h) {
  const band = meshRows(warp, w, h);
  /** @type {{ src: Point[], dst: Point[] }[]} */
  const triangles = [];
  /** @type {(Point | null)[][]} */
  const moved = band.map((v) => Array.from({ length: MESH.columns + 1 }, (_, j) => warpPoint(warp, w * j / MESH.columns, v)));
  for (let i = 0; i + 1 < band.length; i++) {
    for (let j = 0; j < MESH.columns; j++) {
      const u0 = w * j / MESH.columns, u1 = w * (j + 1) / MESH.columns, v0 = band[i], v1 = band[i + 1];
      const a = moved[i][j], b = moved[i][j + 1], c = moved[i + 1][j + 1], d = moved[i + 1][j];
      if (a && b && c) triangles.push({ src: [[u0, v0], [u1, v0], [u1, v1]], dst: [a, b, c] });
      if (a && c && d) triangles.push({ src: [[u0, v0], [u1, v1], [u0, v1]], dst: [a, c, d] });
    }
  }
  return triangles;
}

/**
 * The affine map taking triangle ``src`` onto ``dst``, as canvas's transform (a, b, c, d, e, f:
 * x' = a·x + c·y + e, y' = b·x + d·y + f).
 * @param {Point[]} src @param {Point[]} dst @returns {[number, number, number, number, number, number]}
 */
export function affineOf(src, dst) {
  const [s0, s1, s2] = src, [d0, d1, d2] = dst;
  const sx1 = s1[0] - s0[0], sy1 = s1[1] - s0[1], sx2 = s2[0] - s0[0], sy2 = s2[1] - s0[1];
  const dx1 = d1[0] - d0[0], dy1 = d1[1] - d0[1], dx2 = d2[0] - d0[0], dy2 = d2[1] - d0[1];
  const det = sx1 * sy2 - sx2 * sy1;
  const a = (dx1 * sy2 - dx2 * sy1) / det, c = (dx2 * sx1 - dx1 * sx2) / det;
  const b = (dy1 * sy2 - dy2 * sy1) / det, d = (dy2 * sx1 - dy1 * sx2) / det;
  return [a, b, c, d, d0[0] - a * s0[0] - c * s0[1], d0[1] - b * s0[0] - d * s0[1]];
}

/**
 * The picture ``source`` (``w`` × ``h`` px) drawn warped on ``ctx``: black where the warp
 * brings nothing (what the camera did not see), each triangle clipped a little wide so no seam
 * shows between them, sampled at the nearest pixel (a software renderer's bilinear sampling of a
 * transformed picture costs more than the warp's detail is worth).
 * @param {CanvasRenderingContext2D} ctx @param {CanvasImageSource} source
 * @param {Warp} warp @param {number} w @param {number} h
 */
export function drawWarped(ctx, source, warp, w, h) {
  ctx.fillStyle = "#000"; ctx.fillRect(0, 0, w, h);
  const smoothing = ctx.imageSmoothingEnabled;
  ctx.imageSmoothingEnabled = false;
  for (const { src, dst } of warpMesh(warp, w, h)) {
    const cx = (dst[0][0] + dst[1][0] + dst[2][0]) / 3, cy = (dst[0][1] + dst[1][1] + dst[2][1]) / 3;
    ctx.save();
    ctx.beginPath();
    dst.forEach(([x, y], k) => {
      const n = Math.hypot(x - cx, y - cy) || 1, px = x + 0.75 * (x - cx) / n, py = y + 0.75 * (y - cy) / n;
      if (k === 0) ctx.moveTo(px, py); else ctx.lineTo(px, py);
    });
    ctx.closePath();
    ctx.clip();
    ctx.transform(...affineOf(src, dst));
    ctx.drawImage(source, 0, 0);
    ctx.restore();
  }
  ctx.imageSmoothingEnabled = smoothing;
}
