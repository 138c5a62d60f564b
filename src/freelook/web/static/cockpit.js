// @ts-check
// freelook cockpit, the page's entry module: camera, map, link graphs, drive modes (the map's
// drawing in cockpit-map.js, the inputs and the e-stop in cockpit-inputs.js). Talks to the
// operator process over one WebSocket: binary frames from the server (protocol.js: JSON state,
// the driving camera's JPEG frames, a further camera's), JSON text from the browser. Every input
// change is sent at once; releasing every input sends zero. Its one global is window.freelook,
// the page's state, for tests and debugging.
import { connect as openLink, sendJson } from "./link.js";
import { FRAME, parseFrame } from "./protocol.js";
import { StreamDecoder, webCodecsAvailable } from "./video.js";
import { ARM_KEYS } from "./controls.js";
import {
  NO_VIDEO_MS, PING_MS, cameraStale, delayText, frameAge, isStale, linkChip, newFresh,
  noteBehind, notePong, noteTick, pageDelay, pathText, speedCapText, telemetryAge,
} from "./freshness.js";
import * as armCamera from "./armcam.js";
import { createFleet } from "./fleet.js";
import { drawMap as paintMap } from "./cockpit-map.js";
import {
  DELAY_SERIES, SERIES, addSample, canvasToWorld as mapCanvasToWorld, delaySample, delayScale, drawGraphLines,
  graphLines, linkSample,
} from "./panels.js";
import { setupInputs, showModes, takeModes } from "./cockpit-inputs.js";
import { missingFiles } from "./missing.js";
import { drawCommittedPath, drawReticle, groundToPixel, pixelToGround, poseAt, rememberPose } from "./prediction.js";
import { GOAL_COLOUR, goalActive, goalClick, goalHello, setupGoal, showGoal } from "./goal.js";
import { predictedSeen, warpOf, warpPoint } from "./reprojection.js";
import { PictureLayers } from "./picture-layers.js";

/** @param {string} id */
const $ = (id) => document.getElementById(id);
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ ($(id));
/** @param {string} id */
const canvasEl = (id) => /** @type {HTMLCanvasElement} */ ($(id));
/** @typedef {import("./messages.js").Hello} Hello */
/** @typedef {import("./messages.js").State} State */
/** @typedef {import("./messages.js").ArmView} ArmView */
const DEG = 180 / Math.PI;
// the link graph's lines: the commands in, telemetry and video share a scale, the drops 0–100 %
const GRAPH_SERIES = [SERIES.commands, SERIES.telemetry, SERIES.video, SERIES.dropUp, SERIES.dropDown];
const state = {
  /** @type {Hello | null} */
  hello: null,  // the server's hello: the robot, its map, cameras, arm, fleet
  /** @type {State | null} */
  last: null,  // the newest state message
  // the page's drive mode (what its keys mean; "" until the first hello says what is offered),
  // whether the operator chose it, the one before it and when it was last asked for; the modes
  // not offered, each with why (the station's), and why the page itself did not take one
  mode: "", chosen: false, previousMode: "", askedAt: 0,
  /** @type {Record<string, string>} */
  unoffered: {},
  /** @type {string | null} */
  pageRefusal: null,
  helloRobot: "",  // the robot of the newest hello on this socket ("": none yet)
  estop: false, connected: false,
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
  /** @type {import("./panels.js").LinkSample[]} */
  graph: [],  // the link graph's points (panels.js)
  graphScale: 0,
  /** @type {import("./panels.js").DelaySample[]} */
  delayGraph: [],  // the delay graph's points: the painted frame's age and the round trip
  delayScale: 0, delaySampledAt: 0,
  lastAxes: "", framesPainted: 0, framesDropped: 0, lastFrameId: -1, robotTx: true, operatorTx: true,
  paintDelay: 0, paintedAt: 0, framePaintedAt: 0, helloAt: 0,
  lastArm: "", armStates: 0,
  /** @type {string[]} */
  armPhases: [],
  errors: 0, badFrames: 0,
  /** @type {string | undefined} */
  lastError: undefined,
  stale: false, pageBehind: false, telemetryAge: Infinity,
  // the painted driving-camera frame: its capture stamp (s, robot clock), its age when painted
  // as the page shows it (s; null while the robot's clock is unknown), and the wall clock then
  // (s, for a test on one machine to compare with the truth)
  /** @type {{ stamp: number, age: number | null, paintedWall: number } | null} */
  frame: null,
  // the page's parts, for tests and debugging: the arm camera (armcam.js), the fleet list, and
  // the arm's 3-D view once loaded (arm3d.js, only for a robot with an arm)
  armCamera, fleet: createFleet(send),
  /** @type {any} */
  arm3d: null,
  /** @type {any} */
  video: null,  // the driving camera's inter-frame decoder (video.js), for tests and debugging
  // the robot's recent reports (stamp, pose, pan, tilt): the pose each picture was taken from
  /** @type {import("./prediction.js").Seen[]} */
  poses: [],
  // the predicted path's points as drawn on the newest picture (px; empty: none in view)
  /** @type {number[][]} */
  pathOnCamera: [],
  /** @type {number[] | null} */
  reticle: null,  // the predicted view's reticle on the newest picture as taken (px; null: none)
  // the picture moved to the prediction (reprojection.js; V shows the raw frame instead), the
  // warp it was drawn with (the turn and the move it applies, the state whose prediction it
  // was), the states taken so far, and the page frames that painted the camera (ms, from the
  // animation frame until the rendering that followed it was done)
  predictedView: true, drawPrediction: true, states: 0,
  /** @type {{ yaw: number, forward: number, left: number, lead: number, state: number } | null} */
  warp: null,
  /** @type {number[]} */
  cameraFrameMs: [],
  // the camera pose the picture on the page shows the ground from (the prediction's, when moved
  // to it): where a click on it lands (click-to-go, goal.js); null before a picture
  /** @type {import("./prediction.js").Seen | null} */
  viewSeen: null,
  /** @type {any} */
  goal: null,  // click-to-go's offer and arming (goal.js)
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
      state.helloRobot = "";  // the mode goes out again once the hello says what is offered
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
    else armCamera.onVideo(frame, (stream) => send({ type: "keyframe", stream }));
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
// (willReadFrequently), so drawing on them never waits on the GPU process either; but for the
// camera's picture and the canvas over it, which change at the telemetry's rate: they live
// where the compositor draws (on the GPU, SwiftShader's too), since handing it a canvas from
// memory costs an upload of the whole picture each frame (3.5 ms of the page's frame under
// SwiftShader, and what set its pace).
const dirty = { camera: false, map: false, graph: false, cue: false, delay: false };
let paintRequested = 0;  // performance.now() when the animation frame was asked for, 0 when none
/** @param {string} id */
function canvas2d(id) { return canvasEl(id).getContext("2d", { willReadFrequently: true }); }
/** @param {"camera" | "map" | "graph" | "cue" | "delay"} what */
function schedulePaint(what) {
  dirty[what] = true;
  if (!paintRequested) { paintRequested = performance.now(); requestAnimationFrame(paintAll); }
}
const frameDone = new MessageChannel();  // its message runs once the frame's rendering is done
/** @type {number[]} */
const cameraFrames = [];
frameDone.port1.onmessage = () => {
  const t0 = cameraFrames.shift();
  if (t0 === undefined) return;
  state.cameraFrameMs.push(performance.now() - t0);
  if (state.cameraFrameMs.length > 600) state.cameraFrameMs.shift();
};
function paintAll() {
  state.paintedAt = performance.now();
  if (dirty.camera && (readyFrame || shownStamp !== null)) { cameraFrames.push(state.paintedAt); frameDone.port2.postMessage(0); }
  state.paintDelay = state.paintedAt - paintRequested;  // asked for until it came
  paintRequested = 0;
  if (dirty.camera && readyFrame) {
    const { bitmap, frameId, stamp } = readyFrame;
    readyFrame = null;
    paintCamera(bitmap, stamp);
    bitmap.close();
    state.framesPainted += 1;
    state.lastFrameId = frameId;
    state.framePaintedAt = performance.now();
    const clock = state.last ? state.last.clock : null;
    state.frame = {
      stamp, age: frameAge(stamp, clock, fresh, state.framePaintedAt), paintedWall: Date.now() / 1000,
    };
    send({ type: "painted", frame: frameId, stamp });
  } else if (dirty.camera && shownStamp !== null) {
    paintView();  // the same picture, moved to a newer prediction
  }
  if (dirty.cue) drawChassisCue(state.last ? state.last.pan || 0 : 0);
  if (dirty.map) drawMap();
  if (dirty.graph) drawGraph();
  if (dirty.delay) drawDelayGraph();
  dirty.camera = dirty.map = dirty.graph = dirty.cue = dirty.delay = false;
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

// the newest picture as taken, kept to be moved to each newer prediction (where the compositor
// draws, as the camera canvas), and its number; the layers under the camera canvas that show it
// moved
const raw = document.createElement("canvas");
const rawCtx = /** @type {CanvasRenderingContext2D} */ (raw.getContext("2d", { alpha: false }));
let rawPicture = 0;
const pictureLayers = new PictureLayers($("picture-layers"), canvasEl("camera"));
/** The one-way delay (s) from which the camera's picture is moved to the prediction. */
const PREDICTED_VIEW_DELAY_S = 0.1;
/** @type {number | null} */
let shownStamp = null;

/** @param {ImageBitmap | VideoFrame} bitmap @param {number} stamp its capture (s, robot clock) */
function paintCamera(bitmap, stamp) {
  const canvas = canvasEl("camera");
  const width = "displayWidth" in bitmap ? bitmap.displayWidth : bitmap.width;
  const height = "displayHeight" in bitmap ? bitmap.displayHeight : bitmap.height;
  if (canvas.width !== width || canvas.height !== height) {
    canvas.width = width; canvas.height = height;
  }
  if (raw.width !== width || raw.height !== height) { raw.width = width; raw.height = height; }
  rawCtx.drawImage(bitmap, 0, 0);
  rawPicture += 1;
  shownStamp = stamp;
  paintView();
  state.frames += 1;
  const now = performance.now();
  if (now - state.fpsT0 > 1000) {
    state.fps = state.frames * 1000 / (now - state.fpsT0); state.frames = 0; state.fpsT0 = now;
    $("fps").textContent = state.fps.toFixed(0);
  }
}

// The picture on the page: moved from where it was taken to where the camera is when a command
// sent now lands (marked so), or as taken (V); the crosshair, the committed path and the reticle
// on it. Its warp on the canvas's data attributes, for tests.
function paintView() {
  const canvas = canvasEl("camera"), ctx = /** @type {CanvasRenderingContext2D} */ (canvas.getContext("2d"));
  const w = canvas.width, h = canvas.height;
  const stamp = /** @type {number} */ (shownStamp), data = canvas.dataset;
  const s = state.last, seen = poseAt(state.poses, stamp);
  // under a tenth of a second one way the picture is where the robot is: shown as taken,
  // nothing drawn over it (the map's ghost stays)
  const delayed = s && s.prediction && s.prediction.delay >= PREDICTED_VIEW_DELAY_S;
  const ahead = delayed && seen && state.hello && state.drawPrediction ? s.prediction : null;
  const robot = state.hello ? state.hello.robot : null;
  const movable = ahead && seen && robot && robot.camera && robot.camera.mount_height > 0;
  const warp = movable && state.predictedView ? warpOf(robot, { width: w, height: h }, seen, predictedSeen(ahead, seen)) : null;
  if (warp && ahead) {
    pictureLayers.show(raw, rawPicture, warp);  // the picture under the canvas, moved
    ctx.clearRect(0, 0, w, h);
    state.warp = { yaw: warp.yaw, forward: warp.forward, left: warp.left, lead: ahead.arrival.t - stamp, state: state.states };
    data.view = "predicted"; data.warpYaw = String(warp.yaw); data.warpForward = String(warp.forward);
    data.warpLead = String(state.warp.lead); data.warpState = String(state.states);
  } else {
    pictureLayers.hide();
    ctx.drawImage(raw, 0, 0);
    state.warp = null;
    data.view = "raw"; data.warpState = String(state.states);
  }
  ctx.strokeStyle = "rgba(80,255,120,0.85)"; ctx.lineWidth = 2;
  ctx.beginPath();
  ctx.moveTo(w / 2 - 22, h / 2); ctx.lineTo(w / 2 - 6, h / 2);
  ctx.moveTo(w / 2 + 6, h / 2); ctx.lineTo(w / 2 + 22, h / 2);
  ctx.moveTo(w / 2, h / 2 - 22); ctx.lineTo(w / 2, h / 2 - 6);
  ctx.moveTo(w / 2, h / 2 + 6); ctx.lineTo(w / 2, h / 2 + 22);
  ctx.stroke();
  // the path the robot is committed to, seen from where this picture was taken (and moved with it)
  /** @param {import("./panels.js").Point} at */
  const moved = (at) => (warp ? warpPoint(warp, at[0], at[1]) : at);
  state.pathOnCamera = ahead && seen ? drawCommittedPath(ctx, w, h, state.hello.robot, seen, ahead, moved) : [];
  // and where the camera will be looking when a command sent now lands
  state.reticle = ahead && seen ? drawReticle(ctx, w, h, state.hello.robot, seen, ahead, moved) : null;
  state.viewSeen = seen && warp && ahead ? predictedSeen(ahead, seen) : seen;
  if (seen && robot && robot.camera && s && goalActive(s.goal)) drawCameraGoal(ctx, w, h, seen, moved);
  markView();
}

/** Click-to-go's goal on the picture, where the ground point shows (moved with the picture).
 * @param {CanvasRenderingContext2D} ctx @param {number} w @param {number} h
 * @param {import("./prediction.js").Seen} seen @param {(at: import("./panels.js").Point) => import("./panels.js").Point | null} moved */
function drawCameraGoal(ctx, w, h, seen, moved) {
  const g = state.last && state.last.goal;
  if (!g || !state.hello) return;
  const at = groundToPixel(state.hello.robot, seen, { width: w, height: h }, g.x, g.y);
  const there = at && moved(at);
  if (!there) return;
  ctx.save(); ctx.strokeStyle = GOAL_COLOUR; ctx.lineWidth = 2;
  ctx.beginPath(); ctx.ellipse(there[0], there[1], 14, 6, 0, 0, 2 * Math.PI); ctx.stroke();
  ctx.fillStyle = GOAL_COLOUR; ctx.font = "12px sans-serif"; ctx.fillText("goal", there[0] + 16, there[1] + 4);
  ctx.restore();
}
// a click on the picture while click-to-go is armed: the ground point it shows is the goal (a
// click that frees the captured mouse is only that: cockpit-inputs.js)
let lockedAtPress = false;
canvasEl("camera").addEventListener("mousedown", () => { lockedAtPress = state.pointerLocked; });
canvasEl("camera").addEventListener("click", (ev) => {
  if (lockedAtPress) { lockedAtPress = false; return; }
  const c = canvasEl("camera"), r = c.getBoundingClientRect();
  const px = (ev.clientX - r.left) * c.width / r.width, py = (ev.clientY - r.top) * c.height / r.height;
  const robot = state.hello ? state.hello.robot : null;
  const at = robot && robot.camera && state.viewSeen ? pixelToGround(robot, state.viewSeen, { width: c.width, height: c.height }, px, py) : null;
  goalClick(state, send, at);
});

/** The view's mark, over the picture and not in its pixels (what the robot's camera saw stays
 * what is painted): a dashed border and "predicted view +0.55 s" while moved, else "raw frame". */
function markView() {
  const mark = $("view-mark");
  mark.classList.toggle("predicted", !!state.warp);
  // to a tenth of a second, and set only when it changes: a figure that flickers at the
  // telemetry's rate reads as noise, and each new text costs the page a layout
  const text = state.warp
    ? `predicted view +${state.warp.lead.toFixed(1)} s · V: raw frame`
    : state.predictedView ? "raw frame (no prediction yet)" : "raw frame · V: predicted view";
  if (mark.textContent !== text) mark.textContent = text;
}
// V: the raw frame, or the picture moved to the prediction again
window.addEventListener("keydown", (ev) => {
  if (ev.code !== "KeyV" || ev.repeat) return;
  if (ev.target && /** @type {HTMLElement} */ (ev.target).tagName === "INPUT") return;
  state.predictedView = !state.predictedView;
  if (shownStamp !== null) schedulePaint("camera");
});

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

/** @param {Hello} msg */
function onHello(msg) {
  state.hello = msg;
  state.helloAt = performance.now();  // a new robot (fleet): its video starts from here
  $("robot-name").textContent = msg.robot.name;
  goalHello(msg);
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
    }, async (err) => {
      const missing = await missingFiles(new URL("./arm3d.js", import.meta.url).href);
      $("arm-status").textContent = "3-D view: " + (missing.length ? `missing ${missing.join(", ")}` : `did not start: ${err}`);
    });
  }
  if (state.arm3d) state.arm3d.onHello(msg);
  input("rtx-ms").value = String(Math.round(msg.robot_tx_ms || 31));
  input("otx-ms").value = String(Math.round(msg.operator_tx_ms || 47));
  // a new socket or another robot: the page picks a mode it offers and says it to the station
  const robot = msg.fleet ? msg.fleet.selected : msg.robot.name;
  const fresh = robot !== state.helloRobot;
  state.helloRobot = robot;
  takeModes(msg.modes, fresh);
}

/** @param {number | null | undefined} x @param {number} [d] */
function fmt(x, d = 2) { return (x === null || x === undefined) ? "-" : Number(x).toFixed(d); }
/** @param {string} id @param {string} text @param {string} [cls] */
function setChip(id, text, cls) { const el = $(id); el.textContent = text; el.className = "chip " + (cls || ""); }

// ---------------------------------------------------------------- freshness
// How old is what the page shows, and is the page behind: freshness.js (the computation), shown
// here every TICK_MS (the inputs' poll calls freshnessTick).
const fresh = newFresh();
/** @param {any} msg */
function onPong(msg) {
  if (msg.t !== fresh.pingSent) return;  // an answer to an earlier socket's ping
  const now = performance.now();
  fresh.rtt = now - fresh.pingSent;
  fresh.pingSent = 0;
  if (typeof msg.wire === "number") notePong(fresh, msg.wire, fresh.rtt, now);
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
  // the painted frame's age now (it ages while it stays up) and the link's round trip
  const shown = state.frame ? frameAge(state.frame.stamp, s.clock, fresh, now) : null;
  setChip("delay-chip", delayText(shown, s.clock ? s.clock.rtt : null), "");
  const via = pathText(s.link.path, s.clock ? s.clock.rtt : null);  // through a relay: which path
  $("path-chip").hidden = !via;
  if (via && s.link.path) setChip("path-chip", via, s.link.path.via === "direct" ? "ok" : "");
  if (now - state.delaySampledAt >= DELAY_SAMPLE_MS) {  // and on the delay graph
    state.delaySampledAt = now;
    addSample(state.delayGraph, delaySample(now, shown, s.clock ? s.clock.rtt : null));
    schedulePaint("delay");
  }
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
const DELAY_SAMPLE_MS = 200;  // the delay graph's points: five a second
// a timer, never an animation frame: it runs while the renderer is slow, and measures the
// page's own stalls (a timer that comes late)
function freshnessTick() {
  noteTick(fresh, performance.now());
  showFreshness();
}

/** @param {ArmView} arm */
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

/** @param {State} s */
function onState(s) {
  state.last = s;
  takeModes(s.modes, false);  // the modes offered, the newest refusal, the robot's mode lit
  // the robot restarted or the link came back: nothing held from before drives it
  $("release-state").hidden = !s.needs_release;
  if (s.arm) onArmState(s.arm);
  rememberPose(state.poses, s);
  showGhost(s.prediction || null);
  showGoal(state);  // click-to-go: offered at this round trip, and the goal's state
  state.states += 1;
  if (state.predictedView && shownStamp !== null) schedulePaint("camera");  // moved to the newest prediction
  if (s.pose) {
    const last = state.trail[state.trail.length - 1];
    if (!last || Math.hypot(last[0] - s.pose.x, last[1] - s.pose.y) > 0.02) {
      state.trail.push([s.pose.x, s.pose.y]);
      if (state.trail.length > 5000) state.trail.shift();
    }
  }
  state.estop = !!s.estop;
  $("estop").classList.toggle("engaged", state.estop);
  // on a touch screen (touch-sticks.js marks the body) the release is a tap
  const release = document.body.classList.contains("touch") ? "tap" : "click";
  $("estop").textContent = state.estop ? `E-STOP ENGAGED · ${release} to release` : "E-STOP";
  $("pan").textContent = fmt((s.pan || 0) * DEG, 1);
  $("tilt").textContent = fmt((s.tilt || 0) * DEG, 1);
  schedulePaint("cue");
  $("cmd-vel").textContent = `${fmt(s.cmd ? s.cmd.v : null)} m/s · ${fmt(s.cmd ? s.cmd.omega * DEG : null, 1)} °/s`;
  $("meas-vel").textContent = `${fmt(s.v)} m/s · ${fmt((s.omega || 0) * DEG, 1)} °/s`;
  if (s.localizing) $("pose").textContent = "searching the map… turn or drive a little";
  else if (s.pose) $("pose").textContent = `${fmt(s.pose.x)}, ${fmt(s.pose.y)} m · ${fmt(s.pose.theta * DEG, 1)}°`;
  if (s.odom) $("odom").textContent = `${fmt(s.odom.x)}, ${fmt(s.odom.y)} m · ${fmt(s.odom.theta * DEG, 1)}°`;
  const sf = s.safety;
  const reasons = sf ? (sf.reasons || []).join(", ") : "";
  // "clear" only from the robot's own report: without one the safety is unknown, said alike
  if (!s.safety) $("safety").textContent = "unknown (no report from the robot)";
  else $("safety").textContent = reasons ? `${reasons} (×${fmt(sf.scale, 2)})` : "clear";
  $("safety").className = !s.safety ? "bad" : "";
  if (!s.safety) setChip("safety-chip", "safety: unknown (no report from the robot)", "bad");
  else setChip("safety-chip", "safety: " + (reasons || "clear"), reasons ? (sf.scale === 0 ? "bad" : "warn") : "ok");
  // the robot's delay rule: the speed it can stop from at the round trip it measures
  const capText = speedCapText(sf ? sf.speed_cap : null);
  $("speed-cap-chip").hidden = !capText;
  if (capText) setChip("speed-cap-chip", capText, sf.reasons.includes("delay") ? "warn" : "");
  // the robot's own mode, never the one asked for (the thesis profile reports none)
  const thesis = state.hello && state.hello.wire === "thesis";
  setChip("mode-chip", "mode: " + (s.mode || (thesis ? "not reported (thesis profile)" : "not reported")), "");
  $("autonomy-mode").hidden = $("task-chip").hidden = !s.autonomy;
  if (s.autonomy) {  // the disposal task: its phase, how far, paused while the operator drives
    const a = s.autonomy, phase = a.phase.replace(/_/g, " ");
    setChip("task-chip", `task: ${phase} ${Math.round(a.progress * 100)} %${a.paused ? " (paused)" : ""}`,
      a.phase === "failed" ? "bad" : a.paused ? "warn" : "ok");
  }
  if (s.arbitration === false) setChip("controller", "control: none (thesis profile: no stations)", "");
  else setChip("controller", "control: " + (s.controller || "none"), s.in_control ? "ok" : "warn");
  const up = s.link && s.link.up, down = s.link && s.link.down;
  fresh.stateAt = performance.now();
  showFreshness();
  if (up) $("up-stats").textContent = `${fmt(up.rx_rate_hz, 0)} Hz · drop ${fmt(up.drop_percent, 1)} %`;
  // what the robot sends, each counted whole: reports and camera frames; the packets per second
  // (every fragment of every frame) only beside them
  const rates = s.rates;
  if (down) {
    $("down-stats").textContent = `telemetry ${fmt(rates ? rates.telemetry_hz : null, 0)} Hz · video ${fmt(rates ? rates.video_fps : null, 0)} fps · drop ${fmt(down.drop_percent, 1)} %`;
    $("down-stats").title = `${fmt(down.rx_rate_hz, 0)} packets/s received (video frames travel as many packets)`;
  }
  addSample(state.graph, linkSample(s, performance.now()));
  if (s.robot_tx) { state.robotTx = s.robot_tx.enabled; $("rtx-toggle").textContent = s.robot_tx.enabled ? "stop" : "start"; }
  if (s.operator_tx) { state.operatorTx = s.operator_tx.enabled; $("otx-toggle").textContent = s.operator_tx.enabled ? "stop" : "start"; }
  schedulePaint("graph");
  schedulePaint("map");
}

// ---------------------------------------------------------------- map
// the ghost's pose, on the map canvas's data attributes too (the moment it stands for, on the
// robot's clock, and how far ahead of the report it is): for a test to read as drawn
/** @param {import("./messages.js").Prediction | null} p */
function showGhost(p) {
  const data = canvasEl("map").dataset;
  if (!p) { delete data.ghostT; return; }
  data.ghostT = String(p.t); data.ghostLead = String(p.lead);
  data.ghostX = String(p.pose.x); data.ghostY = String(p.pose.y); data.ghostTheta = String(p.pose.theta);
}
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
    if (d && !d.moved && ev.target === c && goalClick(state, send, canvasToWorld(...toCanvas(ev)))) {
      schedulePaint("map");  // click-to-go took it
    } else if (d && !d.moved && ev.target === c && state.mode === "trajectory") {
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
  // one scale for the three rates (all tens per second), drops on their own 0–100 %
  const { scale, lines } = graphLines(g, GRAPH_SERIES, { width: c.width, height: c.height, top: 0, end: performance.now() });
  state.graphScale = scale;
  drawGraphLines(ctx, lines, 1.5);
  ctx.fillStyle = "#8596a6"; ctx.font = "10px sans-serif";
  ctx.fillText(`0–${scale.toFixed(0)} /s: commands in (blue), telemetry (green), video fps (purple)`, 4, 11);
  ctx.fillText("drop 0–100 %: op→robot (red), robot→op (yellow)", 4, 23);
}

// the painted frame's age and the link's round trip over the link graph's span, its drawing
function drawDelayGraph() {
  const c = canvasEl("delay-graph"), ctx = canvas2d("delay-graph"), g = state.delayGraph;
  ctx.fillStyle = "#0c1014"; ctx.fillRect(0, 0, c.width, c.height);
  if (g.length < 2) return;
  const scale = delayScale(g);
  state.delayScale = scale;
  const { lines } = graphLines(g, [DELAY_SERIES.frameAge, DELAY_SERIES.roundTrip],
    // the lines below the caption's band: the highest, at a tenth under the scale, was drawn under it
    { width: c.width, height: c.height, top: 14, end: performance.now() }, scale);
  drawGraphLines(ctx, lines, 1.5);
  ctx.fillStyle = "#8596a6"; ctx.font = "10px sans-serif";
  ctx.fillText(`0–${scale.toFixed(2)} s: frame age (yellow), round trip (blue)`, 4, 11);
}

setupMap();
setupGoal(state, send);
input("goal-rtt").addEventListener("input", () => { input("goal-rtt").dataset.edited = "1"; showGoal(state); });
setupInputs(state, { send, repaintMap: () => schedulePaint("map"), tick: freshnessTick });
armCamera.setup();
showModes();  // no mode yet: the first hello says which the robot and the profile offer
connect();
