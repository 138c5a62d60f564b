// @ts-check
// freelook cockpit: the map canvas. The robot's map with its keep-out lines and areas and its
// named places, the reference path, the waypoints being placed, the trail, and the robot as its
// telemetry shows it (safety rings, sonar cones, laser points, footprint, camera direction), the
// click-to-go goal (goal.js), and
// over it the ghost of where the station predicts it is now (prediction.js).
// It only draws what it is given; the cockpit keeps the view and the state. The robot's glyph
// and the map's picture are panels.js's, shared with the station's map panel.

import { MAP_STYLE, drawGlyph, drawMapImage, polyline, robotGlyph, worldToCanvas } from "./panels.js";
import { drawGhost } from "./prediction.js";
import { drawGoal } from "./goal.js";

/** @typedef {import("./panels.js").View} View */
/** @typedef {import("./panels.js").ToCanvas} ToCanvas */
/** @typedef {import("./messages.js").MapInfo} MapInfo */
/** @typedef {import("./messages.js").State} State */

/**
 * The whole map canvas, from the back: the map, the paths, the robot.
 * @param {HTMLCanvasElement} c
 * @param {CanvasRenderingContext2D} ctx
 * @param {View} v
 * @param {{ hello: import("./messages.js").Hello | null, last: State | null,
 *   mapImage: HTMLImageElement | null, waypoints: number[][], trail: number[][] }} scene
 */
export function drawMap(c, ctx, v, scene) {
  /** @type {ToCanvas} */
  const at = (x, y) => worldToCanvas(c, v, x, y);
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, c.width, c.height);
  const h = scene.hello, s = scene.last;
  if (scene.mapImage && h && h.map) drawWorld(ctx, at, h.map, scene.mapImage, v.scale);
  drawPaths(ctx, at, s, scene.waypoints, scene.trail);
  if (s) drawGoal(ctx, at, s.goal, s.pose);  // click-to-go's goal
  if (!s || !s.pose || !h) return;
  drawGlyph(ctx, at, v.scale, robotGlyph(h.robot, s), MAP_STYLE);
  if (s.prediction) drawGhost(ctx, at, v.scale, h.robot, s.prediction);
}

/** The map's picture, keep-out lines and areas, named places (home, docks, goals).
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {MapInfo} m
 * @param {HTMLImageElement} image @param {number} scale */
function drawWorld(ctx, at, m, image, scale) {
  drawMapImage(ctx, at, scale, m, image);
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
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {State | null} s
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
