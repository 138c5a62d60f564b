// @ts-check
// freelook cockpit, the page's entry module: camera, map, link graphs, drive modes. Talks to the
// operator process over one WebSocket: binary frames from the server (protocol.js: JSON state,
// the driving camera's JPEG frames, a further camera's), JSON text from the browser. Every input
// change is sent at once; releasing every input sends zero. Its one global is window.freelook,
// the page's state, for tests and debugging.
import { connect as openLink, sendJson } from "./link.js";
import { FRAME, parseFrame } from "./protocol.js";
import { StreamDecoder, webCodecsAvailable } from "./video.js";
import { ARM_KEYS, armJog, axesIdle, driveAxes, standardPad } from "./controls.js";
import {
  NO_VIDEO_MS, PING_MS, TICK_MS, cameraStale, isStale, linkChip, newFresh, noteBehind, noteTick,
  pageDelay, telemetryAge,
} from "./freshness.js";
import * as armCamera from "./armcam.js";
import { createFleet } from "./fleet.js";
import { canvasToWorld as mapCanvasToWorld, drawMap as paintMap } from "./cockpit-map.js";

/** @param {string} id */
const $ = (id) => document.getElementById(id);
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ ($(id));
/** @param {string} id */
const canvasEl = (id) => /** @type {HTMLCanvasElement} */ ($(id));
const DEG = 180 / Math.PI;
const state = {
  /** @type {any} */
  hello: null,  // the server's hello: the robot, its map, cameras, arm, fleet
  /** @type {any} */
  last: null,  // the newest state message
  mode: "free_look", estop: false, connected: false,
  /** @type {WebSocket | null} */
  ws: null,
  /** @type {Set<string>} */
  keys: new Set(),
  mouseTurn: 0, mouseTilt: 0, lastMouse: 0, pointerLocked: false,
  /** @type {string | null} */
  gamepad: null,
  /** @type {number[][]} */
  trail: [],
  /** @type {number[][]} */
  waypoints: [],
  frames: 0, fpsT0: performance.now(), fps: 0,
  view: { cx: 0, cy: 0, scale: 40 },
  /** @type {{ start: number[], view: { cx: number, cy: number, scale: number }, moved: boolean } | null} */
  dragging: null,
  /** @type {HTMLImageElement | null} */
  mapImage: null,
  /** @type {number[][]} */
  graph: [],
  graphScale: 0,
  lastAxes: "", framesPainted: 0, framesDropped: 0, lastFrameId: -1, robotTx: true, operatorTx: true,
  paintDelay: 0, paintedAt: 0, framePaintedAt: 0, helloAt: 0,
  lastArm: "", armStates: 0,
  /** @type {string[]} */
  armPhases: [],
  errors: 0, badFrames: 0,
  /** @type {string | undefined} */
  lastError: undefined,
  stale: false, pageBehind: false, telemetryAge: Infinity,
  // the page's parts, for tests and debugging: the arm camera (armcam.js), the fleet list, and
  // the arm's 3-D view once loaded (arm3d.js, only for a robot with an arm)
  armCamera, fleet: createFleet(send),
  /** @type {any} */
  arm3d: null,
  /** @type {any} */
  video: null,  // the driving camera's inter-frame decoder (video.js), for tests and debugging
};
/** @type {any} */ (window).freelook = state;  // the page's one global: for tests and debugging

// ---------------------------------------------------------------- connection
// the token, the socket and its reconnection: link.js, shared with the station
function connect() {
  state.ws = openLink({
    onOpen: (ws) => {
      state.ws = ws;  // a reconnection's new socket: everything is sent on it from now on
      state.connected = true; fresh.pingSent = 0;
      setChip("link-state", "link: waiting for the station", "warn");
      send({ type: "mode", mode: state.mode });
      // without WebCodecs, the station sends inter-frame video as JPEG
      send({ type: "video", decoder: webCodecsAvailable() });
    },
    onClose: (refused) => {
      state.connected = false;
      if (refused) setChip("link-state", "link: refused, open the URL freelook printed", "bad");
      else setChip("link-state", "link: disconnected", "bad");
    },
    onMessage,
  });
}

/** @param {object} obj */
function send(obj) {
  sendJson(state.ws, obj);
}

/** @param {ArrayBuffer} data */
function onMessage(data) {
  const frame = parseFrame(data);
  if (!frame) { state.badFrames += 1; return; }  // an unknown kind or a short frame: dropped
  if (frame.kind === FRAME.JSON) {
    const msg = frame.message;
    if (msg.type === "hello") onHello(msg);
    else if (msg.type === "state") onState(msg);
    else if (msg.type === "error") onError(msg);
    else if (msg.type === "pong") onPong(msg);
    else if (msg.type === "fleet") state.fleet.onFleet(msg);
  } else if (frame.kind === FRAME.DRIVING) {
    onFrame(new Blob([frame.jpeg], { type: "image/jpeg" }), frame.frameId, frame.stamp);
  } else if (frame.kind === FRAME.VIDEO) {
    if (frame.stream === 0) drivingVideo.push(frame);  // VP8, VP9 or H.264 (video.js)
  } else {
    armCamera.onFrame(frame);  // a further camera: the Arm pane's (armcam.js)
  }
}

// The server refused a message this page sent (a bug here or a newer server): say so, keep going.
/** @param {any} msg */
function onError(msg) {
  state.errors += 1;
  state.lastError = msg.reason;
  console.warn("server refused a message:", msg.reason);
}

// ---------------------------------------------------------------- drawing
// Messages never draw: they mark what changed, and one animation frame draws the newest of
// each. A slow renderer (software GL) paints less often, never a queue of old frames, and the
// keys and commands never wait behind it. The canvases are kept in memory
// (willReadFrequently), so drawing on them never waits on the GPU process either.
const dirty = { camera: false, map: false, graph: false, cue: false };
let paintRequested = 0;  // performance.now() when the animation frame was asked for, 0 when none
/** @param {string} id */
function canvas2d(id) { return canvasEl(id).getContext("2d", { willReadFrequently: true }); }
/** @param {"camera" | "map" | "graph" | "cue"} what */
function schedulePaint(what) {
  dirty[what] = true;
  if (!paintRequested) { paintRequested = performance.now(); requestAnimationFrame(paintAll); }
}
function paintAll() {
  state.paintedAt = performance.now();
  state.paintDelay = state.paintedAt - paintRequested;  // asked for until it came
  paintRequested = 0;
  if (dirty.camera && readyFrame) {
    const { bitmap, frameId, stamp } = readyFrame;
    readyFrame = null;
    paintCamera(bitmap);
    bitmap.close();
    state.framesPainted += 1;
    state.lastFrameId = frameId;
    state.framePaintedAt = performance.now();
    send({ type: "painted", frame: frameId, stamp });
  }
  if (dirty.cue) drawChassisCue(state.last ? state.last.pan || 0 : 0);
  if (dirty.map) drawMap();
  if (dirty.graph) drawGraph();
  dirty.camera = dirty.map = dirty.graph = dirty.cue = false;
}

// ---------------------------------------------------------------- camera
// One frame decodes at a time; a frame that arrives meanwhile replaces the one waiting, and a
// decoded frame replaces one not painted yet (each replaced frame is counted in framesDropped).
let decoding = false;
/** @type {{ blob: Blob, frameId: number, stamp: number } | null} */
let pendingFrame = null;
/** @type {{ bitmap: ImageBitmap | VideoFrame, frameId: number, stamp: number } | null} */
let readyFrame = null;
/** @param {ImageBitmap | VideoFrame} bitmap @param {number} frameId @param {number} stamp */
function onPicture(bitmap, frameId, stamp) {
  if (readyFrame) { readyFrame.bitmap.close(); state.framesDropped += 1; }
  readyFrame = { bitmap, frameId, stamp };
  schedulePaint("camera");
}
// the driving camera's inter-frame video: decoded as it comes, the newest picture painted
const drivingVideo = new StreamDecoder(
  (picture, meta) => onPicture(picture, meta.frameId, meta.stamp),
  () => send({ type: "keyframe", stream: 0 }),
);
state.video = drivingVideo;
/** @param {Blob} blob @param {number} frameId @param {number} stamp */
function onFrame(blob, frameId, stamp) {
  if (pendingFrame) state.framesDropped += 1;
  pendingFrame = { blob, frameId, stamp };
  if (!decoding) decodeNext();
}
async function decodeNext() {
  if (!pendingFrame) return;
  const { blob, frameId, stamp } = pendingFrame;
  pendingFrame = null;
  decoding = true;
  try {
    const bitmap = await createImageBitmap(blob);
    onPicture(bitmap, frameId, stamp);
  } catch (err) {
    console.warn("bad frame", err);
  } finally {
    decoding = false;
    if (pendingFrame) decodeNext();
  }
}

/** @param {ImageBitmap | VideoFrame} bitmap */
function paintCamera(bitmap) {
  const canvas = canvasEl("camera");
  const width = "displayWidth" in bitmap ? bitmap.displayWidth : bitmap.width;
  const height = "displayHeight" in bitmap ? bitmap.displayHeight : bitmap.height;
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width; canvas.height = height;
  }
  const ctx = canvas2d("camera");
  ctx.drawImage(bitmap, 0, 0);
  const w = canvas.width, h = canvas.height;
  ctx.strokeStyle = "rgba(80,255,120,0.85)"; ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(w / 2 - 22, h / 2); ctx.lineTo(w / 2 - 6, h / 2);
  ctx.moveTo(w / 2 + 6, h / 2); ctx.lineTo(w / 2 + 22, h / 2);
  ctx.moveTo(w / 2, h / 2 - 22); ctx.lineTo(w / 2, h / 2 - 6);
  ctx.moveTo(w / 2, h / 2 + 6); ctx.lineTo(w / 2, h / 2 + 22);
  ctx.stroke();
  state.frames += 1;
  const now = performance.now();
  if (now - state.fpsT0 > 1000) {
    state.fps = state.frames * 1000 / (now - state.fpsT0); state.frames = 0; state.fpsT0 = now;
    $("fps").textContent = state.fps.toFixed(0);
  }
}

/** @param {number} pan */
function drawChassisCue(pan) {
  // Top-down: the camera looks up the canvas; the chassis is drawn turned by −pan.
  const c = canvasEl("chassis-cue"), ctx = canvas2d("chassis-cue");
  ctx.clearRect(0, 0, c.width, c.height);
  ctx.fillStyle = "rgba(0,0,0,0.45)"; ctx.beginPath(); ctx.arc(45, 45, 44, 0, 2 * Math.PI); ctx.fill();
  ctx.save(); ctx.translate(45, 45); ctx.rotate(pan);
  ctx.fillStyle = "rgba(200,210,220,0.9)"; ctx.fillRect(-14, -20, 28, 40);
  ctx.fillStyle = "#e05050"; ctx.beginPath(); ctx.moveTo(0, -28); ctx.lineTo(-7, -18); ctx.lineTo(7, -18); ctx.fill();
  ctx.restore();
  ctx.strokeStyle = "#50ff78"; ctx.lineWidth = 2; ctx.beginPath(); ctx.moveTo(45, 45); ctx.lineTo(45, 8); ctx.stroke();
}

// ---------------------------------------------------------------- hello / state
/** @type {Promise<void> | null} */
let arm3dLoading = null;  // arm3d.js, asked for by the first hello of a robot with an arm

/** @param {any} msg */
function onHello(msg) {
  state.hello = msg;
  state.helloAt = performance.now();  // a new robot (fleet): its video starts from here
  $("robot-name").textContent = msg.robot.name;
  if (msg.map) {
    const img = new Image();
    img.onload = () => { state.mapImage = img; schedulePaint("map"); };
    img.src = "data:image/png;base64," + msg.map.png;
    const m = msg.map;
    state.view.cx = m.origin[0] + m.width * m.resolution / 2;
    state.view.cy = m.origin[1] + m.height * m.resolution / 2;
    const canvas = canvasEl("map");
    state.view.scale = Math.min(canvas.width / (m.width * m.resolution), canvas.height / (m.height * m.resolution)) * 0.95;
  }
  $("arm-mode").hidden = !msg.arm;
  if (msg.fleet) state.fleet.onFleet(msg.fleet);
  armCamera.onHello(msg);
  if (msg.arm) {
    $("arm-joints").innerHTML = msg.arm.joints.map((/** @type {string} */ name, /** @type {number} */ k) =>
      `<tr><td>${ARM_KEYS[k] ? ARM_KEYS[k].map((c) => c.slice(3)).join("/") : ""} ${name}</td><td id="arm-joint-${k}">-</td></tr>`).join("");
  }
  if (msg.arm && !arm3dLoading) {
    // the 3-D view and three.js load only for a robot with an arm
    arm3dLoading = import("./arm3d.js").then((arm3d) => {
      state.arm3d = arm3d;
      if (state.hello) arm3d.onHello(state.hello);
      if (state.last) arm3d.onState(state.last);
    }, () => {
      $("arm-status").textContent = "3-D view: three.js is not installed (run npm ci in the repository)";
    });
  }
  if (state.arm3d) state.arm3d.onHello(msg);
  input("rtx-ms").value = String(Math.round(msg.robot_tx_ms || 31));
  input("otx-ms").value = String(Math.round(msg.operator_tx_ms || 47));
  setMode(state.mode, false);
}

/** @param {number | null | undefined} x @param {number} [d] */
function fmt(x, d = 2) { return (x === null || x === undefined) ? "-" : Number(x).toFixed(d); }
/** @param {string} id @param {string} text @param {string} [cls] */
function setChip(id, text, cls) { const el = $(id); el.textContent = text; el.className = "chip " + (cls || ""); }

// ---------------------------------------------------------------- freshness
// How old is what the page shows, and is the page behind: freshness.js (the computation), shown
// here every TICK_MS.
const fresh = newFresh();
/** @param {any} msg */
function onPong(msg) {
  if (msg.t !== fresh.pingSent) return;  // an answer to an earlier socket's ping
  fresh.rtt = performance.now() - fresh.pingSent;
  fresh.pingSent = 0;
}
function showFreshness() {
  const now = performance.now();
  if (state.connected && !fresh.pingSent && now - fresh.pingAt >= PING_MS) {
    fresh.pingSent = fresh.pingAt = now;
    send({ type: "ping", t: now });
  }
  const behind = pageDelay(fresh, now, { requested: paintRequested, paintedAt: state.paintedAt, delay: state.paintDelay });
  const lagging = noteBehind(fresh, behind, now);  // said for a while after it last fell behind
  const pageChip = $("page-state");
  pageChip.hidden = !lagging;
  if (lagging) setChip("page-state", `page: behind ${fresh.behindBy.toFixed(1)} s`, "warn");
  state.pageBehind = lagging;
  const s = state.last;
  const age = telemetryAge(s ? s.age : null, fresh, now);
  state.telemetryAge = age;
  const stale = isStale(state.connected, !!s, age);
  state.stale = stale;
  document.body.classList.toggle("stale", stale);
  if (!state.connected || !s || !s.link) return;  // the socket's own chip (connect) stands
  setChip("link-state", ...linkChip(s.link, stale, age));
  // no frame for a while: say so in place of the camera, with the reason when the server knows it
  const lastVideo = Math.max(state.framePaintedAt, state.helloAt || 0);
  const silent = !!state.hello && s.link.connected && now - lastVideo > NO_VIDEO_MS;
  $("camera-note").hidden = !silent;
  if (silent) {
    const name = state.hello.fleet ? state.hello.fleet.selected : state.hello.robot.name;
    $("camera-note").textContent = state.hello.video_note
      ? `${name}: ${state.hello.video_note}`
      : `no video from ${name} for ${((now - lastVideo) / 1000).toFixed(0)} s: its camera sends none, or its frames do not arrive`;
    $("fps").textContent = "-";
  }
  $("camera-pane").classList.toggle("stale", cameraStale(stale, state.framePaintedAt, now));
}
// a timer, never an animation frame: it runs while the renderer is slow, and measures the
// page's own stalls (a timer that comes late)
function freshnessTick() {
  noteTick(fresh, performance.now());
  showFreshness();
}

/** @param {any} arm */
function onArmState(arm) {
  state.armStates += 1;
  const phases = state.armPhases;  // every phase the robot reported, in order
  for (const p of arm.phases || [arm.phase]) if (phases[phases.length - 1] !== p) phases.push(p);
  const chip = $("arm-phase");
  chip.textContent = arm.phase;
  chip.className = "chip " + arm.phase;
  $("arm-red").textContent = arm.red.length ? "red: " + arm.red.join(", ") : "";
  arm.positions.forEach((/** @type {number} */ q, /** @type {number} */ k) => { const el = $("arm-joint-" + k); if (el) el.textContent = (q * DEG).toFixed(1) + "°"; });
  if (state.arm3d) state.arm3d.onState(state.last);
}

/** @param {any} s */
function onState(s) {
  state.last = s;
  // the robot restarted or the link came back: nothing held from before drives it
  $("release-state").hidden = !s.needs_release;
  if (s.arm) onArmState(s.arm);
  if (s.pose) {
    const last = state.trail[state.trail.length - 1];
    if (!last || Math.hypot(last[0] - s.pose.x, last[1] - s.pose.y) > 0.02) {
      state.trail.push([s.pose.x, s.pose.y]);
      if (state.trail.length > 5000) state.trail.shift();
    }
  }
  state.estop = !!s.estop;
  $("estop").classList.toggle("engaged", state.estop);
  $("estop").textContent = state.estop ? "E-STOP ENGAGED · click to release" : "E-STOP";
  $("pan").textContent = fmt((s.pan || 0) * DEG, 1);
  $("tilt").textContent = fmt((s.tilt || 0) * DEG, 1);
  schedulePaint("cue");
  $("cmd-vel").textContent = `${fmt(s.cmd ? s.cmd.v : null)} m/s · ${fmt(s.cmd ? s.cmd.omega * DEG : null, 1)} °/s`;
  $("meas-vel").textContent = `${fmt(s.v)} m/s · ${fmt((s.omega || 0) * DEG, 1)} °/s`;
  if (s.localizing) $("pose").textContent = "searching the map… turn or drive a little";
  else if (s.pose) $("pose").textContent = `${fmt(s.pose.x)}, ${fmt(s.pose.y)} m · ${fmt(s.pose.theta * DEG, 1)}°`;
  if (s.odom) $("odom").textContent = `${fmt(s.odom.x)}, ${fmt(s.odom.y)} m · ${fmt(s.odom.theta * DEG, 1)}°`;
  const sf = s.safety || {};
  const reasons = (sf.reasons || []).join(", ");
  $("safety").textContent = reasons ? `${reasons} (×${fmt(sf.scale, 2)})` : "clear";
  if (!s.safety) setChip("safety-chip", "safety: unknown (no report from the robot)", "bad");
  else setChip("safety-chip", "safety: " + (reasons || "clear"), reasons ? (sf.scale === 0 ? "bad" : "warn") : "ok");
  setChip("mode-chip", "mode: " + (s.mode || "not reported"), "");  // the robot's own
  $("autonomy-mode").hidden = $("task-chip").hidden = !s.autonomy;
  if (s.autonomy) {  // the disposal task: its phase, how far, paused while the operator drives
    const a = s.autonomy, phase = a.phase.replace(/_/g, " ");
    setChip("task-chip", `task: ${phase} ${Math.round(a.progress * 100)} %${a.paused ? " (paused)" : ""}`,
      a.phase === "failed" ? "bad" : a.paused ? "warn" : "ok");
  }
  setChip("controller", "control: " + (s.controller || "none"), s.in_control ? "ok" : "warn");
  const up = s.link && s.link.up, down = s.link && s.link.down;
  fresh.stateAt = performance.now();
  showFreshness();
  if (up) $("up-stats").textContent = `${fmt(up.rx_rate_hz, 0)} Hz · drop ${fmt(up.drop_percent, 1)} %`;
  // what the robot sends, each counted whole: reports and camera frames; the packets per second
  // (every fragment of every frame) only beside them
  const rates = s.rates || {};
  if (down) {
    $("down-stats").textContent = `telemetry ${fmt(rates.telemetry_hz, 0)} Hz · video ${fmt(rates.video_fps, 0)} fps · drop ${fmt(down.drop_percent, 1)} %`;
    $("down-stats").title = `${fmt(down.rx_rate_hz, 0)} packets/s received (video frames travel as many packets)`;
  }
  state.graph.push([performance.now(), up ? up.rx_rate_hz : 0, rates.telemetry_hz || 0, rates.video_fps || 0, up ? up.drop_percent : 0, down ? down.drop_percent : 0]);
  while (state.graph.length && performance.now() - state.graph[0][0] > 30000) state.graph.shift();
  if (s.robot_tx) { state.robotTx = s.robot_tx.enabled; $("rtx-toggle").textContent = s.robot_tx.enabled ? "stop" : "start"; }
  if (s.operator_tx) { state.operatorTx = s.operator_tx.enabled; $("otx-toggle").textContent = s.operator_tx.enabled ? "stop" : "start"; }
  schedulePaint("graph");
  schedulePaint("map");
}

// ---------------------------------------------------------------- map
/** @param {number} px @param {number} py @returns {[number, number]} */
function canvasToWorld(px, py) { return mapCanvasToWorld(canvasEl("map"), state.view, px, py); }
function drawMap() { paintMap(canvasEl("map"), canvas2d("map"), state.view, state); }

function setupMap() {
  const c = canvasEl("map");
  /** @param {MouseEvent} ev @returns {[number, number]} */
  const toCanvas = (ev) => { const r = c.getBoundingClientRect(); return [(ev.clientX - r.left) * c.width / r.width, (ev.clientY - r.top) * c.height / r.height]; };
  c.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const [px, py] = toCanvas(ev); const [wx, wy] = canvasToWorld(px, py);
    state.view.scale *= ev.deltaY < 0 ? 1.2 : 1 / 1.2;
    const [nx, ny] = canvasToWorld(px, py); state.view.cx += wx - nx; state.view.cy += wy - ny;
    schedulePaint("map");
  }, { passive: false });
  c.addEventListener("mousedown", (ev) => { state.dragging = { start: toCanvas(ev), view: { ...state.view }, moved: false }; });
  window.addEventListener("mouseup", (ev) => {
    const d = state.dragging; state.dragging = null;
    if (d && !d.moved && ev.target === c && state.mode === "trajectory") {
      state.waypoints.push(canvasToWorld(...toCanvas(ev))); $("wp-count").textContent = String(state.waypoints.length); schedulePaint("map");
    }
  });
  c.addEventListener("mousemove", (ev) => {
    const [px, py] = toCanvas(ev); const [wx, wy] = canvasToWorld(px, py);
    $("mouse-xy").textContent = `x ${wx.toFixed(2)}, y ${wy.toFixed(2)} m`;
    const d = state.dragging;
    if (d) {
      const dx = px - d.start[0], dy = py - d.start[1];
      if (Math.hypot(dx, dy) > 3) d.moved = true;
      state.view.cx = d.view.cx - dx / state.view.scale; state.view.cy = d.view.cy + dy / state.view.scale; schedulePaint("map");
    }
  });
}

// ---------------------------------------------------------------- graphs
function drawGraph() {
  const c = canvasEl("graph"), ctx = canvas2d("graph"), g = state.graph;
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, c.width, c.height);
  if (g.length < 2) return;
  const t1 = performance.now(), t0 = t1 - 30000;
  // one scale for the three rates (all tens per second), drops on their own 0–100 %
  const maxRate = Math.max(40, ...g.map((r) => Math.max(r[1], r[2], r[3]))) * 1.1;
  state.graphScale = maxRate;
  /** @param {number} idx @param {string} color @param {number} scale */
  const line = (idx, color, scale) => {
    ctx.strokeStyle = color; ctx.lineWidth = 1.5; ctx.beginPath();
    g.forEach((r, i) => { const px = (r[0] - t0) / 30000 * c.width, py = c.height - r[idx] / scale * c.height; i ? ctx.lineTo(px, py) : ctx.moveTo(px, py); });
    ctx.stroke();
  };
  line(1, "#4aa3ff", maxRate); line(2, "#3fbf7f", maxRate); line(3, "#c080ff", maxRate);
  line(4, "#e05050", 100); line(5, "#e0b040", 100);
  ctx.fillStyle = "#8596a6"; ctx.font = "10px sans-serif";
  ctx.fillText(`0–${maxRate.toFixed(0)} /s: commands in (blue), telemetry (green), video fps (purple)`, 4, 11);
  ctx.fillText("drop 0–100 %: op→robot (red), robot→op (yellow)", 4, 23);
}

// ---------------------------------------------------------------- modes and inputs
/** @type {Record<string, string>} */
const KEY_HELP = {
  keyboard: "↑/↓ ±20 mm/s · ←/→ ±2 °/s · Space stops (thesis keyboard)",
  tank: "W/S forward/back · A/D turn · Q/E pan the camera · Space E-stop (the button releases it)",
  free_look: "W/S forward/back · A/D sideways (camera frame) · mouse or Q/E turns · R/F tilt · Esc or a click frees the mouse · Space E-stop (the button releases it)",
  linear: "shuttles between the two x points · arrow keys take over",
  trajectory: "ellipse or clicked waypoints · arrow keys take over",
  arm: "joints: Q/A, W/S, E/D, R/F, T/G jog joints 1–5 · C Cartesian: W/S forward/back, A/D left/right, R/F up/down · Z close, X open the gripper · Shift full speed · gamepad (LB held): sticks jog · Space E-stop (the button releases it)",
};
/** @param {string} mode @param {boolean} [notify] */
function setMode(mode, notify = true) {
  state.mode = mode;
  if (mode !== "free_look" && document.pointerLockElement) document.exitPointerLock();
  document.querySelectorAll("[data-mode]").forEach((b) => b.classList.toggle("active", /** @type {HTMLElement} */ (b).dataset.mode === mode));
  $("linear-panel").classList.toggle("shown", mode === "linear");
  $("traj-panel").classList.toggle("shown", mode === "trajectory");
  $("keys-help").textContent = KEY_HELP[mode] || "";
  $("camera-hint").style.display = mode === "free_look" ? "" : "none";
  $("arm-panel").classList.toggle("shown", mode === "arm");
  document.body.classList.toggle("arm-mode", mode === "arm");
  if (notify) send({ type: "mode", mode });
  state.lastAxes = "";
  state.lastArm = "";
  sendAxes(true);
}

// the held keys and a gamepad: controls.js
function pad() {
  return standardPad(navigator.getGamepads ? navigator.getGamepads() : []);
}

function armFromInputs() {
  const n = state.hello && state.hello.arm ? state.hello.arm.joints.length : 0;
  return armJog(state.keys, n, input("arm-cartesian").checked, pad());
}

/** @param {boolean} [force] */
function sendArm(force = false) {
  const a = armFromInputs();
  const key = JSON.stringify(a);
  const zero = a.values.every((v) => v === 0);
  if (force || key !== state.lastArm || !zero) {
    send(a.cartesian ? { type: "arm", cartesian: a.values } : { type: "arm", joints: a.values });
    state.lastArm = key;
  }
  $("input-state").textContent = zero ? "idle" : (a.cartesian ? "tool " : "joints ") + a.values.map((v) => v.toFixed(1)).join(" ");
}

function axesFromInputs() {
  // mouse-look: decays to zero when the mouse stops
  if (performance.now() - state.lastMouse > 120) { state.mouseTurn = 0; state.mouseTilt = 0; }
  const gp = pad();
  state.gamepad = gp ? gp.id : null;
  return driveAxes(state.keys, state.mode, { turn: state.mouseTurn, tilt: state.mouseTilt }, gp);
}

/** @param {boolean} [force] */
function sendAxes(force = false) {
  if (state.mode === "arm" && state.hello && state.hello.arm) { sendArm(force); return; }
  if (state.mode !== "free_look" && state.mode !== "tank") return;
  const a = axesFromInputs();
  const key = JSON.stringify(a);
  const zero = axesIdle(a);
  // Send on every change at once; repeat while non-zero so the robot's watchdog stays fed.
  if (force || key !== state.lastAxes || !zero) {
    send({ type: "axes", mode: state.mode, ...a });
    state.lastAxes = key;
  }
  $("input-state").textContent = zero ? "idle" : `fwd ${a.forward.toFixed(2)} left ${a.left.toFixed(2)} turn ${a.turn.toFixed(2)}`;
}

// The e-stop latches: Space only ever engages it. Releasing it is a click on the button, which
// shows the robot's state; a key never releases it (a click the keyboard made on the focused
// button, detail 0, is refused), and the keys held when it engaged stay released after it.
function engageEstop() {
  send({ type: "estop", engaged: true });
  state.keys.clear();
  if (document.pointerLockElement) document.exitPointerLock();  // the mouse is free to click
  sendAxes(true);
}
/** @param {MouseEvent} ev */
function onEstopButton(ev) {
  /** @type {HTMLElement} */ (ev.currentTarget).blur();
  if (!state.estop) { engageEstop(); return; }
  if (ev.detail === 0) return;  // Space or Enter on the focused button: not a release
  state.keys.clear();
  sendAxes(true);
  send({ type: "estop", engaged: false });
}

/** @type {Record<string, string>} */
const ARROWS = { ArrowUp: "up", ArrowDown: "down", ArrowLeft: "left", ArrowRight: "right" };
function setupInputs() {
  document.querySelectorAll("[data-mode]").forEach((b) => b.addEventListener("click", () => setMode(/** @type {HTMLElement} */ (b).dataset.mode)));
  $("estop").addEventListener("click", onEstopButton);
  $("relocalize").addEventListener("click", () => send({ type: "relocalize" }));
  $("grip-open").addEventListener("click", () => send({ type: "gripper", open: 1 }));
  $("grip-close").addEventListener("click", () => send({ type: "gripper", open: 0 }));
  $("arm-cartesian").addEventListener("change", () => { state.keys.clear(); sendAxes(true); });
  window.addEventListener("keydown", (ev) => {
    if (ev.target && /** @type {HTMLElement} */ (ev.target).tagName === "INPUT") return;
    // Escape gives the mouse back (Free Look) and does nothing else: it is no e-stop key
    if (ev.code === "Escape") { if (document.pointerLockElement) document.exitPointerLock(); return; }
    if (ev.code === "Space") {
      ev.preventDefault();
      if (state.mode === "keyboard") send({ type: "key", key: "space" }); else engageEstop();
      return;
    }
    if (ARROWS[ev.code]) {
      ev.preventDefault();
      // Arrow keys take over from any automatic mode at once, as in the thesis.
      if (state.mode !== "keyboard") setMode("keyboard");
      send({ type: "key", key: ARROWS[ev.code] });
      return;
    }
    if (state.mode === "arm" && (ev.code === "KeyZ" || ev.code === "KeyX")) {
      send({ type: "gripper", open: ev.code === "KeyX" ? 1 : 0 });
      return;
    }
    if (state.mode === "arm" && ev.code === "KeyC" && !ev.repeat) {
      input("arm-cartesian").checked = !input("arm-cartesian").checked;
      state.keys.clear();
      sendAxes(true);
      return;
    }
    if (!ev.repeat) { state.keys.add(ev.code); sendAxes(); }
  });
  window.addEventListener("keyup", (ev) => { state.keys.delete(ev.code); sendAxes(); });
  window.addEventListener("blur", () => { state.keys.clear(); state.mouseTurn = 0; state.mouseTilt = 0; sendAxes(true); });
  const cam = canvasEl("camera");
  // a click captures the mouse (Free Look); while it is captured every click lands here, so a
  // click frees it again (as Esc does) and the buttons are the mouse's once more
  let freedByClick = false;
  cam.addEventListener("mousedown", () => {
    freedByClick = state.pointerLocked;
    if (state.pointerLocked) document.exitPointerLock();
  });
  cam.addEventListener("click", () => {
    if (freedByClick) { freedByClick = false; return; }
    if (state.mode === "free_look" && cam.requestPointerLock) cam.requestPointerLock();
  });
  document.addEventListener("pointerlockchange", () => {
    state.pointerLocked = document.pointerLockElement === cam;
    if (!state.pointerLocked) { state.mouseTurn = 0; state.mouseTilt = 0; sendAxes(true); }
  });
  document.addEventListener("mousemove", (ev) => {
    if (!state.pointerLocked) return;
    state.mouseTurn = Math.max(-1, Math.min(1, -ev.movementX / 25));
    state.mouseTilt = Math.max(-1, Math.min(1, -ev.movementY / 25));
    state.lastMouse = performance.now();
    sendAxes();
  });
  $("lin-start").addEventListener("click", () => send({ type: "linear", action: "start", x0: +input("lin-x0").value, x1: +input("lin-x1").value }));
  $("lin-stop").addEventListener("click", () => send({ type: "linear", action: "stop" }));
  const side = () => /** @type {HTMLInputElement} */ (document.querySelector("input[name=traj-side]:checked")).value;
  $("traj-ellipse").addEventListener("click", () => { state.trail = []; send({ type: "trajectory", action: "start", preset: "ellipse", side: side() }); });
  $("traj-waypoints").addEventListener("click", () => {
    if (state.waypoints.length < 2) return;
    state.trail = [];
    send({ type: "trajectory", action: "start", preset: "waypoints", waypoints: state.waypoints, side: side() });
  });
  $("traj-clear").addEventListener("click", () => { state.waypoints = []; $("wp-count").textContent = "0"; schedulePaint("map"); });
  $("traj-stop").addEventListener("click", () => send({ type: "trajectory", action: "stop" }));
  $("rtx-toggle").addEventListener("click", () => send({ type: "transmission", side: "robot", enabled: !state.robotTx }));
  $("otx-toggle").addEventListener("click", () => send({ type: "transmission", side: "operator", enabled: !state.operatorTx }));
  $("rtx-set").addEventListener("click", () => send({ type: "transmission", side: "robot", spacing_ms: +input("rtx-ms").value }));
  $("otx-set").addEventListener("click", () => send({ type: "transmission", side: "operator", spacing_ms: +input("otx-ms").value }));
  // Poll held inputs and the gamepad; repeat non-zero commands, send zero once on release.
  setInterval(() => { sendAxes(); freshnessTick(); }, TICK_MS);
}

setupMap();
setupInputs();
armCamera.setup();
setMode("free_look", false);
connect();
