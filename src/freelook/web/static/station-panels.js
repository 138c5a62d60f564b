// @ts-check
// freelook station: the flat panels of the virtual room, drawn on 2-D canvases that become
// textures: the map with the laser and the safety zones, the link graphs, the status and
// warning icons (link, safety, e-stop, arm collision phase, battery), and icons over a camera.

const OK = "#3fbf7f", WARN = "#e0b040", BAD = "#e05050", OFF = "#5a6672";

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

export function drawGraph(canvas, graph) {
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, canvas.width, canvas.height);
  // the legend stacked in the panel's left third, each entry in its line's colour: the panel
  // stands beside the main screen, and its left part is what the default view shows
  const legend = [["link: received Hz", "#8596a6"], ["up", "#4aa3ff"], ["down (telemetry)", "#3fbf7f"],
    ["drop %: up", "#e05050"], ["drop %: down", "#e0b040"]];
  legend.forEach(([text, color], k) => { ctx.fillStyle = color; fitText(ctx, text, 8, 22 + 20 * k, canvas.width / 3, 18); });
  if (graph.length < 2) return;
  const t1 = graph[graph.length - 1][0], t0 = t1 - 30000;
  const maxRate = Math.max(40, ...graph.map((r) => Math.max(r[1], r[2]))) * 1.1;
  const line = (idx, color, scale) => {
    ctx.strokeStyle = color; ctx.lineWidth = 3; ctx.beginPath();
    graph.forEach((r, i) => {
      const px = ((r[0] - t0) / 30000) * canvas.width, py = canvas.height - (r[idx] / scale) * (canvas.height - 30);
      i ? ctx.lineTo(px, py) : ctx.moveTo(px, py);
    });
    ctx.stroke();
  };
  line(1, "#4aa3ff", maxRate); line(2, "#3fbf7f", maxRate); line(3, "#e05050", 100); line(4, "#e0b040", 100);
}

// The map around the robot: walls, safety zone rings (the active one red), laser points, the
// robot and its camera's heading. ``mapImage`` is the hello's map as an Image (or null).
export function drawMap(canvas, hello, s, mapImage, span = 8) {
  const ctx = canvas.getContext("2d");
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, canvas.width, canvas.height);
  if (!hello || !s || !s.pose) return;
  const { x, y, theta } = s.pose;
  const scale = canvas.width / span;
  const toCanvas = (wx, wy) => [canvas.width / 2 + (wx - x) * scale, canvas.height / 2 - (wy - y) * scale];
  const m = hello.map;
  if (m && mapImage) {
    const [x0, y1] = toCanvas(m.origin[0], m.origin[1] + m.height * m.resolution);
    ctx.imageSmoothingEnabled = false;
    ctx.drawImage(mapImage, x0, y1, m.width * m.resolution * scale, m.height * m.resolution * scale);
  }
  const c = Math.cos(theta), sn = Math.sin(theta);
  const toWorld = (bx, by) => [x + c * bx - sn * by, y + sn * bx + c * by];
  const active = s.safety ? s.safety.zone : null;
  (hello.robot.zones || []).forEach((r, i) => {
    ctx.strokeStyle = active === i ? "rgba(255,80,80,0.95)" : "rgba(255,255,255,0.3)";
    ctx.lineWidth = active === i ? 4 : 2;
    ctx.beginPath(); ctx.arc(canvas.width / 2, canvas.height / 2, r * scale, 0, 2 * Math.PI); ctx.stroke();
  });
  if (s.laser) {
    const L = s.laser, [mx, my] = L.mount;
    ctx.fillStyle = "#ff4040";
    for (let i = 0; i < L.ranges.length; i++) {
      const r = L.ranges[i]; if (r >= L.range_max) continue;
      const a = L.angle_min + i * L.angle_increment;
      const [px, py] = toCanvas(...toWorld(mx + r * Math.cos(a), my + r * Math.sin(a)));
      ctx.fillRect(px - 2, py - 2, 4, 4);
    }
  }
  const fp = hello.robot.footprint, hl = fp.length / 2, hw = fp.width / 2, cf = fp.center_forward || 0;
  ctx.fillStyle = "rgba(200,210,220,0.9)"; ctx.beginPath();
  [[cf + hl, hw], [cf - hl, hw], [cf - hl, -hw], [cf + hl, -hw]].forEach(([bx, by], i) => {
    const [px, py] = toCanvas(...toWorld(bx, by)); i ? ctx.lineTo(px, py) : ctx.moveTo(px, py);
  });
  ctx.closePath(); ctx.fill();
  const psi = theta + (s.pan || 0);
  ctx.strokeStyle = "#50ff78"; ctx.lineWidth = 4; ctx.beginPath();
  ctx.moveTo(canvas.width / 2, canvas.height / 2);
  ctx.lineTo(...toCanvas(x + 0.8 * Math.cos(psi), y + 0.8 * Math.sin(psi))); ctx.stroke();
}
