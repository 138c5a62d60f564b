// @ts-check
// freelook cockpit: the map canvas. The robot's map with its keep-out lines and areas and its
// named places, the reference path, the waypoints being placed, the trail, and the robot as its
// telemetry shows it (safety rings, sonar cones, laser points, footprint, camera direction).
// It only draws what it is given; the cockpit keeps the view and the state.

/** @typedef {{ cx: number, cy: number, scale: number }} View */
/** @typedef {(x: number, y: number) => [number, number]} ToCanvas */

/** @param {HTMLCanvasElement} c @param {View} v @param {number} x @param {number} y
 * @returns {[number, number]} */
export function worldToCanvas(c, v, x, y) {
  return [c.width / 2 + (x - v.cx) * v.scale, c.height / 2 - (y - v.cy) * v.scale];
}

/** @param {HTMLCanvasElement} c @param {View} v @param {number} px @param {number} py
 * @returns {[number, number]} */
export function canvasToWorld(c, v, px, py) {
  return [v.cx + (px - c.width / 2) / v.scale, v.cy - (py - c.height / 2) / v.scale];
}

/**
 * The whole map canvas, from the back: the map, the paths, the robot.
 * @param {HTMLCanvasElement} c
 * @param {CanvasRenderingContext2D} ctx
 * @param {View} v
 * @param {{ hello: any, last: any, mapImage: HTMLImageElement | null, waypoints: number[][],
 *   trail: number[][] }} scene
 */
export function drawMap(c, ctx, v, scene) {
  /** @type {ToCanvas} */
  const at = (x, y) => worldToCanvas(c, v, x, y);
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, c.width, c.height);
  const h = scene.hello, s = scene.last;
  if (scene.mapImage && h && h.map) drawWorld(ctx, at, h.map, scene.mapImage, v.scale);
  drawPaths(ctx, at, s, scene.waypoints, scene.trail);
  if (!s || !s.pose || !h) return;
  drawRobot(ctx, at, h.robot, s, v.scale);
}

/** @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {number[][]} points */
function polyline(ctx, at, points) {
  ctx.beginPath();
  points.forEach(([x, y], i) => { const [px, py] = at(x, y); i ? ctx.lineTo(px, py) : ctx.moveTo(px, py); });
}

/** The map's picture, keep-out lines and areas, named places (home, docks, goals).
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {any} m
 * @param {HTMLImageElement} image @param {number} scale */
function drawWorld(ctx, at, m, image, scale) {
  const [x0, y1] = at(m.origin[0], m.origin[1] + m.height * m.resolution);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(image, x0, y1, m.width * m.resolution * scale, m.height * m.resolution * scale);
  ctx.strokeStyle = "rgba(255,70,70,0.9)"; ctx.fillStyle = "rgba(255,70,70,0.18)"; ctx.lineWidth = 2;
  for (const k of m.keep_out || []) {
    polyline(ctx, at, k.vertices);
    if (k.kind === "area") { ctx.closePath(); ctx.fill(); }
    ctx.stroke();
  }
  ctx.font = "11px sans-serif";
  for (const p of m.places || []) {
    const [px, py] = at(p.x, p.y);
    ctx.fillStyle = p.kind === "goal" ? "#6bdc8b" : "#ffd866";
    ctx.beginPath(); ctx.moveTo(px, py - 5); ctx.lineTo(px + 5, py); ctx.lineTo(px, py + 5); ctx.lineTo(px - 5, py); ctx.closePath(); ctx.fill();
    ctx.fillText(p.name, px + 7, py + 4);
  }
}

/** The reference path, the waypoints being placed and the trail.
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {any} s
 * @param {number[][]} waypoints @param {number[][]} trail */
function drawPaths(ctx, at, s, waypoints, trail) {
  const ref = s && s.reference;
  if (ref && ref.length > 1) {
    ctx.strokeStyle = "#ffb000"; ctx.setLineDash([6, 4]); ctx.lineWidth = 1.5;
    polyline(ctx, at, ref);
    ctx.stroke(); ctx.setLineDash([]);
  }
  ctx.fillStyle = "#ffb000";
  for (const [x, y] of waypoints) { const [px, py] = at(x, y); ctx.fillRect(px - 3, py - 3, 6, 6); }
  if (trail.length > 1) {
    ctx.strokeStyle = "#4aa3ff"; ctx.lineWidth = 2;
    polyline(ctx, at, trail);
    ctx.stroke();
  }
}

/** The robot at its pose: safety zone rings (the active one red), sonar cones, laser points,
 * footprint and camera direction.
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {any} robot @param {any} s
 * @param {number} scale */
function drawRobot(ctx, at, robot, s, scale) {
  const { x, y, theta } = s.pose;
  const cos = Math.cos(theta), sin = Math.sin(theta);
  /** @param {number} bx @param {number} by @returns {[number, number]} */
  const toWorld = (bx, by) => [x + cos * bx - sin * by, y + sin * bx + cos * by];
  const active = s.safety ? s.safety.zone : null;
  (robot.zones || []).forEach((r, i) => {
    const [px, py] = at(x, y);
    ctx.strokeStyle = active === i ? "rgba(255,80,80,0.95)" : "rgba(255,255,255,0.15)";
    ctx.lineWidth = active === i ? 2.5 : 1;
    ctx.beginPath(); ctx.arc(px, py, r * scale, 0, 2 * Math.PI); ctx.stroke();
  });
  if (s.sonar) {
    ctx.fillStyle = "rgba(160,120,255,0.18)";
    s.sonar.ranges.forEach((r, i) => {
      const b = s.sonar.bearings[i], o = s.sonar.origins[i], half = s.sonar.cone / 2;
      const [pox, poy] = at(...toWorld(o[0], o[1]));
      ctx.beginPath(); ctx.moveTo(pox, poy);
      ctx.arc(pox, poy, Math.min(r, s.sonar.range_max) * scale, -(theta + b + half), -(theta + b - half));
      ctx.closePath(); ctx.fill();
    });
  }
  if (s.laser) {
    const L = s.laser; ctx.fillStyle = "#ff4040";
    const [mx, my] = L.mount;
    for (let i = 0; i < L.ranges.length; i++) {
      const r = L.ranges[i]; if (r >= L.range_max) continue;
      const a = L.angle_min + i * L.angle_increment;
      const [px, py] = at(...toWorld(mx + r * Math.cos(a), my + r * Math.sin(a))); ctx.fillRect(px - 1.5, py - 1.5, 3, 3);
    }
  }
  const fp = robot.footprint;
  const hl = fp.length / 2, hw = fp.width / 2, cf = fp.center_forward || 0;
  ctx.fillStyle = "rgba(200,210,220,0.85)"; ctx.strokeStyle = "#fff"; ctx.lineWidth = 1;
  polyline(ctx, at, [[cf + hl, hw], [cf - hl, hw], [cf - hl, -hw], [cf + hl, -hw]].map(([bx, by]) => toWorld(bx, by)));
  ctx.closePath(); ctx.fill(); ctx.stroke();
  const cam = robot.camera_mount || [0, 0];
  const [cx, cy] = toWorld(cam[0], cam[1]);
  const psi = theta + (s.pan || 0);
  const [p0x, p0y] = at(cx, cy);
  const [p1x, p1y] = at(cx + 0.6 * Math.cos(psi), cy + 0.6 * Math.sin(psi));
  ctx.strokeStyle = "#50ff78"; ctx.lineWidth = 2.5; ctx.beginPath(); ctx.moveTo(p0x, p0y); ctx.lineTo(p1x, p1y); ctx.stroke();
}
