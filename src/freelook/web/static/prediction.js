// @ts-check
// freelook cockpit: where the station predicts the robot is (operator/_prediction.py). Through
// delay, the robot the map shows is the one of the last report, a one-way delay old; the station
// replays the commands still in flight on the robot's own description and says where it is now.
// This module draws that prediction, marked as predicted: on the map a ghost of the robot and
// the ground its camera sees now, with the path it is committed to over the next seconds and its
// envelope; on the camera's picture the same path and envelope, projected with the pose the
// picture was taken from (the report nearest its stamp), and a reticle where the camera will be
// looking when a command sent now lands. The projection (pointToPixel) is the simulator's own
// camera model and is DOM-free (tested under node --test).

import { polyline } from "./panels.js";

/** @typedef {import("./panels.js").Point} Point */
/** @typedef {import("./panels.js").ToCanvas} ToCanvas */
/** @typedef {import("./messages.js").Prediction} Prediction */
/** @typedef {import("./messages.js").HelloRobot} HelloRobot */
/** @typedef {import("./messages.js").State} State */

/** The camera's pose a picture was taken from: the robot's pose, the pan and the tilt (rad).
 * @typedef {{ t: number, x: number, y: number, theta: number, pan: number, tilt: number }} Seen */

export const GHOST_COLOUR = "rgba(80,220,255,0.95)";
export const GHOST_FILL = "rgba(80,220,255,0.16)";
const POSES_KEPT = 200;  // the reports remembered, to find the one a picture was taken at

/**
 * Remember a state's report (its stamp, pose, pan, tilt) for the pictures taken then.
 * @param {Seen[]} poses @param {State} s
 */
export function rememberPose(poses, s) {
  if (s.t === undefined || !s.pose) return;
  const last = poses[poses.length - 1];
  if (last && last.t === s.t) return;
  poses.push({ t: s.t, x: s.pose.x, y: s.pose.y, theta: s.pose.theta, pan: s.pan || 0, tilt: s.tilt || 0 });
  if (poses.length > POSES_KEPT) poses.shift();
}

/**
 * The remembered report nearest ``stamp`` (s, robot clock); null when none is.
 * @param {Seen[]} poses @param {number} stamp @returns {Seen | null}
 */
export function poseAt(poses, stamp) {
  let best = null, gap = Infinity;
  for (const p of poses) {
    const d = Math.abs(p.t - stamp);
    if (d < gap) { gap = d; best = p; }
  }
  return best;
}

/**
 * Where the ground point (x, y) shows on the driving camera's picture of ``size`` px, seen
 * from ``seen``: the simulator's projection (a column's ray at atan((W/2 − u − 0.5)/f), the
 * tilt shifting the horizon by f·tan(tilt)). Null behind the camera or nearer than 5 cm.
 * @param {HelloRobot} robot @param {Seen} seen @param {{ width: number, height: number }} size
 * @param {number} x @param {number} y @returns {Point | null}
 */
export function groundToPixel(robot, seen, size, x, y) {
  return pointToPixel(robot, seen, size, x, y, 0);
}

/**
 * :func:`groundToPixel` for a point ``z`` m above the ground.
 * @param {HelloRobot} robot @param {Seen} seen @param {{ width: number, height: number }} size
 * @param {number} x @param {number} y @param {number} z @returns {Point | null}
 */
export function pointToPixel(robot, seen, size, x, y, z) {
  const cam = robot.camera, [l1, l2] = robot.camera_mount;
  const c = Math.cos(seen.theta), s = Math.sin(seen.theta);
  const cx = seen.x + c * l1 - s * l2, cy = seen.y + s * l1 + c * l2, psi = seen.theta + seen.pan;
  const dx = x - cx, dy = y - cy;
  const forward = Math.cos(psi) * dx + Math.sin(psi) * dy;
  const left = -Math.sin(psi) * dx + Math.cos(psi) * dy;
  if (forward < 0.05) return null;
  const k = size.width / cam.width;  // the picture as painted, against the camera's described size
  const focal = (cam.width / 2) / Math.tan(cam.fov_deg * Math.PI / 360);
  const u = cam.width / 2 - 0.5 - focal * left / forward;
  const v = cam.height / 2 + focal * Math.tan(seen.tilt) - focal * (z - cam.mount_height) / forward - 0.5;
  return [u * k, v * k];
}

/**
 * The ground point (x, y, m) the pixel (u, v) of the driving camera's picture of ``size`` px
 * shows, seen from ``seen``: :func:`groundToPixel`'s inverse (the ray through the pixel onto
 * the ground plane). Null at or above the horizon, or farther than ``range`` m.
 * @param {HelloRobot} robot @param {Seen} seen @param {{ width: number, height: number }} size
 * @param {number} u @param {number} v @param {number} [range] @returns {Point | null}
 */
export function pixelToGround(robot, seen, size, u, v, range = 30) {
  const cam = robot.camera, [l1, l2] = robot.camera_mount, h = cam.mount_height;
  if (!(h > 0)) return null;
  const k = size.width / cam.width, focal = (cam.width / 2) / Math.tan(cam.fov_deg * Math.PI / 360);
  const below = v / k + 0.5 - cam.height / 2 - focal * Math.tan(seen.tilt);  // px under the horizon
  if (!(below > 0)) return null;
  const forward = focal * h / below, left = forward * (cam.width / 2 - 0.5 - u / k) / focal;
  if (Math.hypot(forward, left) > range) return null;
  const c = Math.cos(seen.theta), s = Math.sin(seen.theta), psi = seen.theta + seen.pan;
  const cx = seen.x + c * l1 - s * l2, cy = seen.y + s * l1 + c * l2;
  return [cx + Math.cos(psi) * forward - Math.sin(psi) * left, cy + Math.sin(psi) * forward + Math.cos(psi) * left];
}

export const RETICLE_RANGE = 5.0;  // m: how far along the camera's axis the reticle's point is

/**
 * Where the camera will be looking when a command sent now lands: the point along its axis
 * then (the predicted camera pose, at the picture's tilt) where it meets the ground, or
 * RETICLE_RANGE m along it when that is nearer, on the picture taken from ``seen``; null when
 * it falls behind that camera.
 * @param {HelloRobot} robot @param {Seen} seen @param {{ width: number, height: number }} size
 * @param {Prediction} p @returns {Point | null}
 */
export function reticlePixel(robot, seen, size, p) {
  const a = p.arrival, [l1, l2] = robot.camera_mount, c = Math.cos(a.theta), s = Math.sin(a.theta);
  const psi = a.theta + p.arrival_pan, cos = Math.cos(seen.tilt), h = robot.camera.mount_height;
  const range = seen.tilt < 0 ? Math.min(RETICLE_RANGE, h / Math.sin(-seen.tilt)) : RETICLE_RANGE;
  const x = a.x + c * l1 - s * l2 + range * cos * Math.cos(psi);
  const y = a.y + s * l1 + c * l2 + range * cos * Math.sin(psi);
  const z = h + range * Math.sin(seen.tilt);
  return pointToPixel(robot, seen, size, x, y, z);
}

/**
 * The path's two edges: each point moved sideways (across the path) by half the robot's width
 * plus the envelope's radius there.
 * @param {number[][]} path @param {number[]} radii @param {number} halfWidth
 * @returns {{ left: Point[], right: Point[] }}
 */
export function pathEdges(path, radii, halfWidth) {
  /** @type {Point[]} */
  const left = [];
  /** @type {Point[]} */
  const right = [];
  for (let i = 0; i < path.length; i++) {
    const a = path[Math.max(0, i - 1)], b = path[Math.min(path.length - 1, i + 1)];
    let dx = b[0] - a[0], dy = b[1] - a[1];
    const n = Math.hypot(dx, dy);
    if (n < 1e-9) { dx = 0; dy = 0; } else { dx /= n; dy /= n; }
    const w = halfWidth + radii[i];
    left.push([path[i][0] - dy * w, path[i][1] + dx * w]);
    right.push([path[i][0] + dy * w, path[i][1] - dx * w]);
  }
  return { left, right };
}

/**
 * The ghost on the map: the camera's ground, the path (solid while committed, dashed after)
 * with its envelope, the robot's outline and the camera's heading, and the word "predicted".
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {number} scale px per m
 * @param {HelloRobot} robot @param {Prediction} p
 */
export function drawGhost(ctx, at, scale, robot, p) {
  ctx.save();
  ctx.fillStyle = GHOST_FILL; ctx.strokeStyle = GHOST_COLOUR; ctx.lineWidth = 1;
  if (p.footprint.length) { polyline(ctx, at, p.footprint); ctx.closePath(); ctx.fill(); }
  for (let i = 0; i < p.path.length; i += 2) {  // the envelope, a circle every 0.2 s
    const [px, py] = at(p.path[i][0], p.path[i][1]);
    ctx.beginPath(); ctx.arc(px, py, p.radii[i] * scale, 0, 2 * Math.PI); ctx.stroke();
  }
  ctx.lineWidth = 2;
  polyline(ctx, at, p.path.slice(0, p.committed + 1)); ctx.stroke();
  ctx.setLineDash([4, 4]);
  polyline(ctx, at, p.path.slice(p.committed)); ctx.stroke();
  const { x, y, theta } = p.pose, c = Math.cos(theta), s = Math.sin(theta);
  /** @param {number} bx @param {number} by @returns {Point} */
  const toWorld = (bx, by) => [x + c * bx - s * by, y + s * bx + c * by];
  const fp = robot.footprint, hl = fp.length / 2, hw = fp.width / 2, cf = fp.center_forward || 0;
  polyline(ctx, at, [[cf + hl, hw], [cf - hl, hw], [cf - hl, -hw], [cf + hl, -hw]].map(([bx, by]) => toWorld(bx, by)));
  ctx.closePath(); ctx.stroke();
  ctx.setLineDash([]);
  const [mx, my] = toWorld(robot.camera_mount[0], robot.camera_mount[1]), psi = theta + p.pan;
  const [p0x, p0y] = at(mx, my), [p1x, p1y] = at(mx + 0.6 * Math.cos(psi), my + 0.6 * Math.sin(psi));
  ctx.lineWidth = 2; ctx.beginPath(); ctx.moveTo(p0x, p0y); ctx.lineTo(p1x, p1y); ctx.stroke();
  const [lx, ly] = at(x, y);
  ctx.fillStyle = GHOST_COLOUR; ctx.font = "10px sans-serif";
  ctx.fillText(`predicted +${p.lead.toFixed(2)} s`, lx + 10, ly - 10);
  ctx.restore();
}

/**
 * The committed path and its envelope on the camera's picture (``w`` × ``h`` px), projected
 * with the pose it was taken from and drawn where ``moved`` takes each point (the picture
 * re-projected: reprojection.js); the path's points as drawn inside the picture, for tests.
 * @param {CanvasRenderingContext2D} ctx @param {number} w @param {number} h
 * @param {HelloRobot} robot @param {Seen} seen @param {Prediction} p
 * @param {(at: Point) => Point | null} [moved] @returns {Point[]}
 */
export function drawCommittedPath(ctx, w, h, robot, seen, p, moved = (at) => at) {
  if (!robot.camera || robot.camera.mount_height <= 0) return [];
  const size = { width: w, height: h };
  const { left, right } = pathEdges(p.path, p.radii, robot.footprint.width / 2);
  /** @param {Point[]} points */
  const seenOf = (points) => points.map(([x, y]) => groundToPixel(robot, seen, size, x, y));
  /** @param {(Point | null)[]} points */
  const drawn = (points) => points.map((at) => at && moved(at));
  const l = drawn(seenOf(left)), r = drawn(seenOf(right)), mid = drawn(seenOf(p.path.map(([x, y]) => /** @type {Point} */ ([x, y]))));
  ctx.save();
  ctx.fillStyle = GHOST_FILL; ctx.strokeStyle = GHOST_COLOUR; ctx.lineWidth = 2;
  // the band where all four corners of a step show, each run of such steps one shape, and the
  // centre line in two strokes (the committed part solid, the rest dashed): a software
  // renderer's cost is by the call, not by the step
  /** @type {Point[]} */
  const shown = [];
  const band = new Path2D(), solid = new Path2D(), dashed = new Path2D();
  /** @type {number[]} */
  let run = [];
  const close = () => {
    if (run.length < 2) { run = []; return; }
    const edge = [...run.map((i) => /** @type {Point} */ (l[i])), ...run.reverse().map((i) => /** @type {Point} */ (r[i]))];
    band.moveTo(...edge[0]);
    for (const at of edge.slice(1)) band.lineTo(...at);
    band.closePath();
    run = [];
  };
  for (let i = 0; i < p.path.length; i++) {
    if (!l[i] || !r[i]) { close(); continue; }
    run.push(i);
    const m0 = mid[i - 1], m1 = mid[i];
    if (run.length < 2 || !m0 || !m1) continue;  // step i − 1's band shows: its centre line too
    const line = i - 1 < p.committed ? solid : dashed;
    line.moveTo(...m0); line.lineTo(...m1);
    if (m0[0] >= 0 && m0[0] < w && m0[1] >= 0 && m0[1] < h) shown.push(m0);
  }
  close();
  ctx.fill(band);
  ctx.stroke(solid);
  ctx.setLineDash([6, 5]);
  ctx.stroke(dashed);
  ctx.setLineDash([]);
  ctx.fillStyle = GHOST_COLOUR; ctx.font = "12px sans-serif";
  ctx.fillText(`predicted path (delay ${p.delay.toFixed(2)} ± ${(p.spread / 2).toFixed(2)} s)`, 8, h - 10);
  ctx.restore();
  return shown;
}

/**
 * The reticle where the camera will be looking when a command sent now lands (a ring, held
 * inside the picture's edge when it falls outside), drawn where ``moved`` takes it; where it is
 * on the picture as taken, or null.
 * @param {CanvasRenderingContext2D} ctx @param {number} w @param {number} h
 * @param {HelloRobot} robot @param {Seen} seen @param {Prediction} p
 * @param {(at: Point) => Point | null} [moved] @returns {Point | null}
 */
export function drawReticle(ctx, w, h, robot, seen, p, moved = (at) => at) {
  if (!robot.camera || robot.camera.mount_height <= 0) return null;
  const at = reticlePixel(robot, seen, { width: w, height: h }, p);
  const there = at && moved(at);
  if (!at || !there) return null;
  const u = Math.max(14, Math.min(w - 14, there[0])), v = Math.max(14, Math.min(h - 14, there[1]));
  ctx.save();
  ctx.strokeStyle = GHOST_COLOUR; ctx.lineWidth = 2;
  ctx.beginPath(); ctx.arc(u, v, 12, 0, 2 * Math.PI); ctx.stroke();
  ctx.beginPath(); ctx.arc(u, v, 2, 0, 2 * Math.PI); ctx.stroke();
  ctx.fillStyle = GHOST_COLOUR; ctx.font = "11px sans-serif";
  ctx.fillText("predicted view", u + 15, v - 8);
  ctx.restore();
  return at;
}
