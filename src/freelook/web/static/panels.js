// @ts-check
// freelook: the two panels the cockpit and the station both draw. The robot on its map: its
// glyph (safety zone rings, the active one red; sonar cones, laser points, the footprint and
// the camera's direction) over the map's picture. The link graph: commands in, telemetry and
// video rates and both drops over the last 30 s; the delay graph (the cockpit's): the painted
// frame's age and the round trip over the same span, on the same drawing. What is drawn where
// is worked out apart from the drawing (worldToCanvas, robotGlyph, linkSample, delaySample,
// graphLines: no DOM, tested under
// node --test); each page then draws it at its own size (a style), the cockpit on its map
// canvas, the station on a panel of its virtual room.

/** @typedef {import("./messages.js").HelloRobot} HelloRobot */
/** @typedef {import("./messages.js").MapInfo} MapInfo */
/** @typedef {import("./messages.js").State} State */
/** @typedef {[number, number]} Point */
/** @typedef {(x: number, y: number) => Point} ToCanvas */
/** The world seen on a canvas: its centre (m) and pixels per metre.
 * @typedef {{ cx: number, cy: number, scale: number }} View */
/** @typedef {{ width: number, height: number }} Size */

/** @param {Size} c @param {View} v @param {number} x @param {number} y @returns {Point} */
export function worldToCanvas(c, v, x, y) {
  return [c.width / 2 + (x - v.cx) * v.scale, c.height / 2 - (y - v.cy) * v.scale];
}

/** @param {Size} c @param {View} v @param {number} px @param {number} py @returns {Point} */
export function canvasToWorld(c, v, px, py) {
  return [v.cx + (px - c.width / 2) / v.scale, v.cy - (py - c.height / 2) / v.scale];
}

// ---------------------------------------------------------------- the robot's glyph

/**
 * The robot as its telemetry shows it, in world coordinates (m; angles rad, counter-clockwise
 * from +x).
 * @typedef {object} Glyph
 * @property {Point} centre  the robot's origin
 * @property {{ radius: number, active: boolean }[]} zones  the safety zones, innermost first
 * @property {{ origin: Point, radius: number, from: number, to: number }[]} sonar  each cone
 * @property {Point[]} laser  the points the laser hit (readings at its range_max left out)
 * @property {Point[]} footprint  the corners, front left first
 * @property {[Point, Point]} camera  from the pan-tilt's mount along the camera's heading
 */

/**
 * @param {HelloRobot} robot  the hello's robot
 * @param {State} s  a state with a pose
 * @param {number} [cameraLength]  m
 * @returns {Glyph}
 */
export function robotGlyph(robot, s, cameraLength = 0.6) {
  const pose = s.pose ?? { x: 0, y: 0, theta: 0 };
  const { x, y, theta } = pose;
  const cos = Math.cos(theta), sin = Math.sin(theta);
  /** @param {number} bx @param {number} by @returns {Point} */
  const toWorld = (bx, by) => [x + cos * bx - sin * by, y + sin * bx + cos * by];
  const active = s.safety ? s.safety.zone : null;
  const zones = (robot.zones || []).map((radius, i) => ({ radius, active: active === i }));
  const sonar = [];
  if (s.sonar) {
    const so = s.sonar, half = so.cone / 2;
    for (let i = 0; i < so.ranges.length; i++) {
      const o = so.origins[i], heading = theta + so.bearings[i];
      sonar.push({ origin: toWorld(o[0], o[1]), radius: Math.min(so.ranges[i], so.range_max), from: heading - half, to: heading + half });
    }
  }
  const laser = [];
  if (s.laser) {
    const L = s.laser, [mx, my] = L.mount;
    for (let i = 0; i < L.ranges.length; i++) {
      const r = L.ranges[i];
      if (r >= L.range_max) continue;
      const a = L.angle_min + i * L.angle_increment;
      laser.push(toWorld(mx + r * Math.cos(a), my + r * Math.sin(a)));
    }
  }
  const fp = robot.footprint, hl = fp.length / 2, hw = fp.width / 2, cf = fp.center_forward || 0;
  /** @type {Point[]} */
  const corners = [[cf + hl, hw], [cf - hl, hw], [cf - hl, -hw], [cf + hl, -hw]];
  const mount = robot.camera_mount || [0, 0];
  const [cx, cy] = toWorld(mount[0], mount[1]);
  const psi = theta + (s.pan || 0);
  return {
    centre: [x, y], zones, sonar, laser,
    footprint: corners.map(([bx, by]) => toWorld(bx, by)),
    camera: [[cx, cy], [cx + cameraLength * Math.cos(psi), cy + cameraLength * Math.sin(psi)]],
  };
}

/**
 * How big a page draws the glyph (px): the station's panel is seen across a virtual room.
 * @typedef {object} GlyphStyle
 * @property {number} ring  a zone ring's line width
 * @property {number} activeRing  the active zone's
 * @property {string} ringColor  the others' colour
 * @property {number} point  a laser point's size
 * @property {string | null} outline  the footprint's outline colour (null: none)
 * @property {number} camera  the camera line's width
 */
/** @type {GlyphStyle} */
export const MAP_STYLE = { ring: 1, activeRing: 2.5, ringColor: "rgba(255,255,255,0.15)", point: 3, outline: "#fff", camera: 2.5 };
/** @type {GlyphStyle} */
export const PANEL_STYLE = { ring: 2, activeRing: 4, ringColor: "rgba(255,255,255,0.3)", point: 4, outline: null, camera: 4 };

/** @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {number[][]} points */
export function polyline(ctx, at, points) {
  ctx.beginPath();
  points.forEach(([x, y], i) => {
    const [px, py] = at(x, y);
    if (i) ctx.lineTo(px, py); else ctx.moveTo(px, py);
  });
}

/**
 * The map's picture, its cells square and unsmoothed.
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {number} scale px per m
 * @param {MapInfo} m @param {CanvasImageSource} image
 */
export function drawMapImage(ctx, at, scale, m, image) {
  const [x0, y1] = at(m.origin[0], m.origin[1] + m.height * m.resolution);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(image, x0, y1, m.width * m.resolution * scale, m.height * m.resolution * scale);
}

/**
 * The glyph on a canvas (the y axis points down there: a world angle a is the canvas's −a).
 * @param {CanvasRenderingContext2D} ctx @param {ToCanvas} at @param {number} scale px per m
 * @param {Glyph} g @param {GlyphStyle} style
 */
export function drawGlyph(ctx, at, scale, g, style) {
  const [px, py] = at(...g.centre);
  for (const z of g.zones) {
    ctx.strokeStyle = z.active ? "rgba(255,80,80,0.95)" : style.ringColor;
    ctx.lineWidth = z.active ? style.activeRing : style.ring;
    ctx.beginPath(); ctx.arc(px, py, z.radius * scale, 0, 2 * Math.PI); ctx.stroke();
  }
  ctx.fillStyle = "rgba(160,120,255,0.18)";
  for (const c of g.sonar) {
    const [ox, oy] = at(...c.origin);
    ctx.beginPath(); ctx.moveTo(ox, oy);
    ctx.arc(ox, oy, c.radius * scale, -c.to, -c.from);
    ctx.closePath(); ctx.fill();
  }
  ctx.fillStyle = "#ff4040";
  const d = style.point;
  for (const [lx, ly] of g.laser) { const [qx, qy] = at(lx, ly); ctx.fillRect(qx - d / 2, qy - d / 2, d, d); }
  ctx.fillStyle = "rgba(200,210,220,0.88)";
  polyline(ctx, at, g.footprint);
  ctx.closePath(); ctx.fill();
  if (style.outline) { ctx.strokeStyle = style.outline; ctx.lineWidth = 1; ctx.stroke(); }
  const [[c0x, c0y], [c1x, c1y]] = g.camera;
  const [p0x, p0y] = at(c0x, c0y), [p1x, p1y] = at(c1x, c1y);
  ctx.strokeStyle = "#50ff78"; ctx.lineWidth = style.camera;
  ctx.beginPath(); ctx.moveTo(p0x, p0y); ctx.lineTo(p1x, p1y); ctx.stroke();
}

// ---------------------------------------------------------------- the link graph

export const GRAPH_MS = 30000;  // the graph's span (ms)

/**
 * One point of the link graph: [when (ms, the page's clock), commands the robot received per
 * second, telemetry reports per second, driving-camera frames per second, drop % station →
 * robot, drop % robot → station].
 * @typedef {[number, number, number, number, number, number]} LinkSample
 */

/** The link graph's point for state ``s`` taken in at ``now``.
 * @param {State} s @param {number} now @returns {LinkSample} */
export function linkSample(s, now) {
  const up = s.link ? s.link.up : null, down = s.link ? s.link.down : null;
  const rates = s.rates || { telemetry_hz: 0, video_fps: 0 };
  return [now, up ? up.rx_rate_hz : 0, rates.telemetry_hz || 0, rates.video_fps || 0,
    up ? up.drop_percent : 0, down ? down.drop_percent : 0];
}

/** ``sample`` added to ``graph``, and the points older than the graph's span let go.
 * @template {number[]} T @param {T[]} graph @param {T} sample */
export function addSample(graph, sample) {
  graph.push(sample);
  while (graph.length && sample[0] - graph[0][0] > GRAPH_MS) graph.shift();
}

/**
 * One line of the graph: a column of the samples, in its colour; a drop is on 0–100 %, the
 * rates share one scale.
 * @typedef {{ column: 1 | 2 | 3 | 4 | 5, color: string, percent: boolean }} Series
 */
/** @type {Record<"commands" | "telemetry" | "video" | "dropUp" | "dropDown", Series>} */
export const SERIES = {
  commands: { column: 1, color: "#4aa3ff", percent: false },
  telemetry: { column: 2, color: "#3fbf7f", percent: false },
  video: { column: 3, color: "#c080ff", percent: false },
  dropUp: { column: 4, color: "#e05050", percent: true },
  dropDown: { column: 5, color: "#e0b040", percent: true },
};

/** The rates' scale: their highest, with a tenth to spare, and never under 44 /s.
 * @param {number[][]} graph @param {Series[]} series @returns {number} */
export function rateScale(graph, series) {
  const rates = series.filter((k) => !k.percent);
  let top = 40;
  for (const r of graph) for (const k of rates) top = Math.max(top, r[k.column]);
  return top * 1.1;
}

/**
 * Where the graph's lines run on a canvas: time across (the span up to ``end``), each value up
 * from the bottom to ``top`` px below the upper edge (room for labels); a value not known then
 * (not finite) has no point. The values not in percent share ``scale`` (the rates' by default).
 * @param {number[][]} graph @param {Series[]} series
 * @param {{ width: number, height: number, top: number, end: number }} box
 * @param {number} [scale]
 * @returns {{ scale: number, lines: { color: string, points: Point[] }[] }}
 */
export function graphLines(graph, series, box, scale = rateScale(graph, series)) {
  const t0 = box.end - GRAPH_MS, tall = box.height - box.top;
  const lines = series.map((k) => ({
    color: k.color,
    points: graph.filter((r) => Number.isFinite(r[k.column])).map((r) => /** @type {Point} */ ([
      ((r[0] - t0) / GRAPH_MS) * box.width, box.height - (r[k.column] / (k.percent ? 100 : scale)) * tall,
    ])),
  }));
  return { scale, lines };
}

/** The lines, each a polyline in its colour.
 * @param {CanvasRenderingContext2D} ctx @param {{ color: string, points: Point[] }[]} lines
 * @param {number} width  the line width (px) */
export function drawGraphLines(ctx, lines, width) {
  ctx.lineWidth = width;
  for (const { color, points } of lines) {
    ctx.strokeStyle = color;
    polyline(ctx, (x, y) => [x, y], points);
    ctx.stroke();
  }
}

// ---------------------------------------------------------------- the delay graph

/**
 * One point of the delay graph: [when (ms, the page's clock), the painted frame's age (s), the
 * link's round trip (s)]; NaN where the page does not know it (yet).
 * @typedef {[number, number, number]} DelaySample
 */

/** The delay graph's point at ``now``.
 * @param {number} now @param {number | null | undefined} age @param {number | null | undefined} rtt
 * @returns {DelaySample} */
export function delaySample(now, age, rtt) {
  const known = (/** @type {number | null | undefined} */ x) => (typeof x === "number" && Number.isFinite(x) ? x : NaN);
  return [now, known(age), known(rtt)];
}

/** @type {Record<"frameAge" | "roundTrip", Series>} */
export const DELAY_SERIES = {
  frameAge: { column: 1, color: "#e0b040", percent: false },
  roundTrip: { column: 2, color: "#4aa3ff", percent: false },
};

/** The delay graph's scale (s): the highest age or round trip, with a tenth to spare, and never
 * under 0.2 s (a quiet link's few milliseconds stay near the bottom).
 * @param {DelaySample[]} graph @returns {number} */
export function delayScale(graph) {
  let top = 0.2;
  for (const r of graph) for (const v of [r[1], r[2]]) if (Number.isFinite(v)) top = Math.max(top, v);
  return top * 1.1;
}
