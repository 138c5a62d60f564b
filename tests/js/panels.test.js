// The panels the cockpit and the station both draw (panels.js), their geometry without a DOM:
// where the robot's glyph lies in the world (footprint, zone rings, laser points, sonar cones,
// the camera's direction) and where the link graph's lines run on a canvas.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  GRAPH_MS, SERIES, addSample, canvasToWorld, graphLines, linkSample, rateScale, robotGlyph, worldToCanvas,
} from "../../src/freelook/web/static/panels.js";

const near = (a, b, eps = 1e-9) => Math.abs(a - b) < eps;
/** @param {number[]} p @param {number[]} q */
const nearPoint = (p, q, eps = 1e-9) => p.length === q.length && p.every((v, i) => near(v, q[i], eps));

const ROBOT = {
  name: "r", footprint: { length: 0.4, width: 0.2, center_forward: 0.1 }, zones: [0.5, 1.0],
  camera_mount: [0.1, 0], has_pan: true,
};

test("a world point and its canvas pixel are one another's, y up in the world and down on the canvas", () => {
  const canvas = { width: 400, height: 200 }, view = { cx: 1, cy: -2, scale: 50 };
  assert.deepEqual(worldToCanvas(canvas, view, 1, -2), [200, 100]);  // the view's centre in the middle
  assert.deepEqual(worldToCanvas(canvas, view, 2, -1), [250, 50]);  // 1 m right and up: 50 px right and up
  const [x, y] = canvasToWorld(canvas, view, ...worldToCanvas(canvas, view, 3.25, 0.5));
  assert.ok(near(x, 3.25) && near(y, 0.5));
});

test("the footprint and the camera turn with the robot's heading, around its pose", () => {
  const g = robotGlyph(ROBOT, { pose: { x: 1, y: 2, theta: Math.PI / 2 }, pan: 0 });
  assert.deepEqual(g.centre, [1, 2]);
  // front left (0.3, 0.1) in the robot's frame; facing +y it lies at (1 − 0.1, 2 + 0.3)
  assert.ok(nearPoint(g.footprint[0], [0.9, 2.3]));
  assert.ok(nearPoint(g.footprint[2], [1.1, 1.9]));  // rear right (−0.1, −0.1)
  // the camera from its mount (0.1 ahead) along the heading, 0.6 m by default
  assert.ok(nearPoint(g.camera[0], [1, 2.1]));
  assert.ok(nearPoint(g.camera[1], [1, 2.7]));
});

test("the camera's line follows the pan, and is as long as asked", () => {
  const g = robotGlyph(ROBOT, { pose: { x: 0, y: 0, theta: 0 }, pan: Math.PI / 2 }, 0.8);
  assert.ok(nearPoint(g.camera[0], [0.1, 0]));
  assert.ok(nearPoint(g.camera[1], [0.1, 0.8]));
});

test("the acting safety zone is the one marked, and none without a safety report", () => {
  const pose = { x: 0, y: 0, theta: 0 };
  const acting = robotGlyph(ROBOT, { pose, safety: { zone: 1, scale: 0.5, reasons: ["zone"] } });
  assert.deepEqual(acting.zones, [{ radius: 0.5, active: false }, { radius: 1.0, active: true }]);
  const clear = robotGlyph(ROBOT, { pose, safety: { zone: null, scale: 1, reasons: [] } });
  assert.ok(clear.zones.every((z) => !z.active));
  assert.ok(robotGlyph(ROBOT, { pose }).zones.every((z) => !z.active));
});

test("laser points are placed from the laser's mount; a reading at its range is no hit", () => {
  const laser = { angle_min: -Math.PI / 2, angle_increment: Math.PI / 2, range_max: 5, ranges: [1, 5, 2], mount: [0.2, 0] };
  const g = robotGlyph(ROBOT, { pose: { x: 10, y: 0, theta: Math.PI }, laser });
  assert.equal(g.laser.length, 2);
  // facing −x: the mount is at (9.8, 0); the right-hand reading (−90°) points to +y
  assert.ok(nearPoint(g.laser[0], [9.8, 1]));
  assert.ok(nearPoint(g.laser[1], [9.8, -2]));  // the left-hand one (+90°), 2 m: to −y
});

test("each sonar cone opens around its bearing, as far as its reading and never past its range", () => {
  const sonar = { ranges: [0.7, 9], bearings: [0, Math.PI], origins: [[0.2, 0], [-0.2, 0]], cone: 0.4, range_max: 3 };
  const g = robotGlyph(ROBOT, { pose: { x: 0, y: 0, theta: Math.PI / 2 }, sonar });
  assert.equal(g.sonar.length, 2);
  assert.ok(nearPoint(g.sonar[0].origin, [0, 0.2]));
  assert.ok(near(g.sonar[0].radius, 0.7));
  assert.ok(near(g.sonar[0].from, Math.PI / 2 - 0.2) && near(g.sonar[0].to, Math.PI / 2 + 0.2));
  assert.ok(near(g.sonar[1].radius, 3));  // 9 m read, 3 m its range
  assert.ok(near(g.sonar[1].from, 1.5 * Math.PI - 0.2));
});

test("a state without laser or sonar draws none", () => {
  const g = robotGlyph(ROBOT, { pose: { x: 0, y: 0, theta: 0 } });
  assert.deepEqual([g.laser, g.sonar], [[], []]);
});

const LINK = (upHz, dropUp, dropDown) => ({
  connected: true, session: "open",
  down: { rx_rate_hz: 300, tx_rate_hz: 20, drop_percent: dropDown, received: 1, lost: 0 },
  up: { rx_rate_hz: upHz, tx_rate_hz: 10, drop_percent: dropUp, received: 1, lost: 0 },
});

test("a link sample holds the commands in, the telemetry and video rates and both drops", () => {
  const s = { link: LINK(21, 3, 4), rates: { telemetry_hz: 30, video_fps: 15 } };
  assert.deepEqual(linkSample(s, 1234), [1234, 21, 30, 15, 3, 4]);
  // the robot's packets (300/s, every fragment of every frame) are not a rate the graph shows
  const quiet = { link: { ...LINK(0, 0, 7), up: null }, rates: { telemetry_hz: 0, video_fps: 0 } };
  assert.deepEqual(linkSample(quiet, 5), [5, 0, 0, 0, 0, 7]);
});

test("the graph keeps its last 30 s", () => {
  const graph = [];
  for (let t = 0; t <= 40000; t += 1000) addSample(graph, [t, 1, 2, 3, 4, 5]);
  assert.equal(graph[0][0], 40000 - GRAPH_MS);
  assert.equal(graph[graph.length - 1][0], 40000);
  assert.equal(graph.length, GRAPH_MS / 1000 + 1);
});

test("the rates share one scale, a tenth above their highest and never under 44 /s; drops are not rates", () => {
  const all = [SERIES.commands, SERIES.telemetry, SERIES.video, SERIES.dropUp, SERIES.dropDown];
  assert.ok(near(rateScale([[0, 10, 20, 5, 90, 90]], all), 44));
  assert.ok(near(rateScale([[0, 10, 50, 80, 0, 0]], all), 88));
  // the station's graph shows no video: its scale is the commands' and the telemetry's
  assert.ok(near(rateScale([[0, 10, 50, 80, 0, 0]], [SERIES.commands, SERIES.telemetry, SERIES.dropUp]), 55));
});

test("the lines run across the span up to its end, each value up from the bottom to the top margin", () => {
  const graph = [[0, 0, 0, 0, 0, 0], [15000, 44, 22, 0, 50, 100], [30000, 0, 0, 0, 0, 0]];
  const { scale, lines } = graphLines(graph, [SERIES.commands, SERIES.dropDown], { width: 300, height: 130, top: 30, end: 30000 });
  assert.ok(near(scale, 48.4));
  assert.deepEqual(lines.map((l) => l.color), [SERIES.commands.color, SERIES.dropDown.color]);
  const [commands, drop] = lines.map((l) => l.points);
  assert.ok(nearPoint(commands[0], [0, 130]));  // the span's start at the left, zero at the bottom
  assert.ok(nearPoint(commands[1], [150, 130 - (44 / 48.4) * 100]));
  assert.ok(nearPoint(commands[2], [300, 130]));  // the end at the right edge
  assert.ok(nearPoint(drop[1], [150, 30]));  // 100 % reaches the top margin, whatever the rates
});

test("a point older than the span lies left of the canvas, and the newest at the end of the page's clock", () => {
  const { lines } = graphLines([[1000, 10, 0, 0, 0, 0]], [SERIES.commands], { width: 300, height: 100, top: 0, end: 1000 + GRAPH_MS + 3000 });
  assert.ok(lines[0].points[0][0] < 0);
});
