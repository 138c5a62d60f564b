// @ts-check
// freelook station: the flat panels of the virtual room, drawn on 2-D canvases that become
// textures: the map with the laser and the safety zones, the link graphs, the status and
// warning icons (link, safety, e-stop, arm collision phase, battery), and icons over a camera.
// The map's robot glyph and the link graph are panels.js's, shared with the cockpit.
import {
  PANEL_STYLE, SERIES, drawGlyph, drawGraphLines, drawMapImage, graphLines, robotGlyph, worldToCanvas,
} from "./panels.js";

/** @typedef {import("./messages.js").Hello} Hello */
/** @typedef {import("./messages.js").State} State */
/** @typedef {import("./panels.js").LinkSample} LinkSample */

const OK = "#3fbf7f", WARN = "#e0b040", BAD = "#e05050", OFF = "#5a6672";
// the station's link graph: the commands the robot receives and its telemetry, and both drops
const GRAPH_SERIES = [SERIES.commands, SERIES.telemetry, SERIES.dropUp, SERIES.dropDown];

// Each icon: its label, its colour and a short value, from the last state message.
export function statusIcons(s) {
  if (!s) return [{ label: "LINK", color: BAD, value: "no state" }];
  const linkOk = s.link && s.link.connected;
  const sf = s.safety || {};
  const reasons = (sf.reasons || []).join(", ");
  const arm = s.arm;
  const battery = s.battery;  // not every robot reports one
  return [
    { label: "LINK", color: linkOk ? OK : BAD, value: linkOk ? "up" : "lost" },
    { label: "SAFETY", color: reasons ? (sf.scale === 0 ? BAD : WARN) : OK, value: reasons || "clear" },
    { label: "E-STOP", color: s.estop ? BAD : OK, value: s.estop ? "engaged" : "off" },
    { label: "ARM", color: !arm ? OFF : arm.phase === "stop" ? BAD : arm.phase === "slow" ? WARN : OK, value: arm ? arm.phase : "none" },
    battery === undefined || battery === null
      ? { label: "BATTERY", color: OFF, value: "not reported" }
      : { label: "BATTERY", color: battery.fraction < 0.2 ? BAD : battery.fraction < 0.4 ? WARN : OK, value: `${Math.round(100 * battery.fraction)} %` },
  ];
}

function icon(ctx, x, y, size, item) {
  ctx.fillStyle = item.color;
  ctx.beginPath(); ctx.arc(x + size / 2, y + size / 2, size / 2, 0, 2 * Math.PI); ctx.fill();
  ctx.fillStyle = "#0c1014"; ctx.textAlign = "center";
  let px = Math.round(size * 0.22);  // the label inside its circle, never cut off
  do { ctx.font = `bold ${px}px sans-serif`; } while (ctx.measureText(item.label).width > size * 0.9 && --px > 6);
  ctx.fillText(item.label, x + size / 2, y + size * 0.56);
  ctx.textAlign = "left";
}

export function drawStatus(canvas, s) {
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#101820"; ctx.fillRect(0, 0, canvas.width, canvas.height);
  const items = statusIcons(s), size = canvas.height * 0.55, step = canvas.width / items.length;
  items.forEach((item, k) => {
    const x = k * step + (step - size) / 2;
    icon(ctx, x, 8, size, item);
    ctx.fillStyle = "#d8e0e8"; ctx.font = `${Math.round(canvas.height * 0.14)}px sans-serif`; ctx.textAlign = "center";
    ctx.fillText(item.value.slice(0, 22), k * step + step / 2, canvas.height - 12);
    ctx.textAlign = "left";
  });
  return items;
}

// Warnings over a camera image: only what is not fine, small, in the top-left corner.
export function drawOverlay(ctx, w, s) {
  const warnings = statusIcons(s).filter((i) => i.color === BAD || i.color === WARN);
  const size = Math.max(24, Math.round(w / 12));
  warnings.forEach((item, k) => icon(ctx, 6 + k * (size + 6), 6, size, item));
  return warnings.length;
}

// One line of text at (x, y), its font shrunk until it fits ``width`` (never cut off).
export function fitText(ctx, text, x, y, width, size) {
  let px = size;
  do { ctx.font = `${px}px sans-serif`; } while (ctx.measureText(text).width > width && --px > 6);
  ctx.fillText(text, x, y);
  return ctx.measureText(text).width;
}

// The link graph (panels.js): the legend stacked in the panel's left third, each entry in its
// line's colour (the panel stands beside the main screen, and its left part is what the
// default view shows), the lines below it.
/** @param {HTMLCanvasElement} canvas @param {LinkSample[]} graph */
export function drawGraph(canvas, graph) {
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, canvas.width, canvas.height);
  const legend = [["link: received Hz", "#8596a6"], ["up", SERIES.commands.color],
    ["down (telemetry)", SERIES.telemetry.color], ["drop %: up", SERIES.dropUp.color], ["drop %: down", SERIES.dropDown.color]];
  legend.forEach(([text, color], k) => { ctx.fillStyle = color; fitText(ctx, text, 8, 22 + 20 * k, canvas.width / 3, 18); });
  if (graph.length < 2) return;
  const box = { width: canvas.width, height: canvas.height, top: 30, end: graph[graph.length - 1][0] };
  drawGraphLines(ctx, graphLines(graph, GRAPH_SERIES, box).lines, 3);
}

// The map around the robot (panels.js): the map's picture and the robot's glyph, ``span`` m
// across, centred on the robot. ``mapImage`` is the hello's map as an Image (or null).
/** @param {HTMLCanvasElement} canvas @param {Hello | null} hello @param {State | null} s
 * @param {HTMLImageElement | null} mapImage @param {number} [span] m */
export function drawMap(canvas, hello, s, mapImage, span = 8) {
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, canvas.width, canvas.height);
  if (!hello || !s || !s.pose) return;
  const view = { cx: s.pose.x, cy: s.pose.y, scale: canvas.width / span };
  /** @type {import("./panels.js").ToCanvas} */
  const at = (x, y) => worldToCanvas(canvas, view, x, y);
  if (hello.map && mapImage) drawMapImage(ctx, at, view.scale, hello.map, mapImage);
  drawGlyph(ctx, at, view.scale, robotGlyph(hello.robot, s, 0.8), PANEL_STYLE);
}
