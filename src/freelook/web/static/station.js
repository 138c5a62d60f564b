// @ts-check
// freelook virtual operator station (TAROS): the robot's cameras on screens in a virtual room,
// in a WebXR headset (immersive-vr) or on a desktop (mouse look; mono, side-by-side or anaglyph
// stereo). One WebSocket to the operator station, as the cockpit's: binary frames from the
// server (protocol.js: JSON, the driving camera, further streams), JSON text from the browser.
// The stereo pair arrives as one side-by-side frame with one capture stamp; each eye's image is
// cut from that frame and shifted outwards by the Horizontal Image Translation (HIT), computed
// from the XR view actually rendered. Head motion never moves the robot unless head-coupled
// pan is switched on.
// Its one global is window.station, the page's state, for tests and debugging.
import { hitFromView, disparities, analysedShift } from "./station-hit.js";
import { drawStatus, drawOverlay, drawGraph, drawMap } from "./station-panels.js";
import { EYE_HEIGHT, createRoom, buildRobot, poseRobot, setMainAspect, fitDirect, renderDesktop } from "./station-room.js";
import { connect as openLink, sendJson } from "./link.js";
import { FRAME, LAYOUT, parseFrame } from "./protocol.js";
import { pictureSize, webCodecsAvailable } from "./video.js";
import { createScreens } from "./station-screens.js";
import { clamp, keyAxes, keyCartesian, xrControllers } from "./controls.js";
import { addSample, linkSample } from "./panels.js";

/** @typedef {import("./messages.js").Hello} Hello */
/** @typedef {import("./messages.js").State} State */
/** @typedef {import("./messages.js").Camera} Camera */

/** @param {string} id */
const $ = (id) => document.getElementById(id);
/** @param {string} id */
const input = (id) => /** @type {HTMLInputElement} */ ($(id));
const params = new URLSearchParams(location.search);
const positive = (key, fallback) => {
  const v = Number.parseFloat(params.get(key));
  return Number.isFinite(v) && v > 0 && v < 100 ? v : fallback;
};
const DESKTOP_IPD = 0.064;  // m, for desktop stereo (a headset reports its own eye offsets)
const SEND_MS = 50;

const station = {
  /** @type {Hello | null} */
  hello: null,
  /** @type {State | null} */
  last: null,
  connected: false, ws: null, errors: 0,
  video: null,  // each inter-frame stream's WebCodecs decoder (video.js), for tests and debugging
  viewMode: params.get("view") === "direct" ? "direct" : "cinema",
  stereo: ["mono", "sbs", "anaglyph"].includes(params.get("stereo")) ? params.get("stereo") : "mono",
  hitMode: ["fixed", "analysis", "off"].includes(params.get("hit")) ? params.get("hit") : "fixed",
  headPan: params.get("head_pan") === "1",
  driveMode: "free_look",
  layout: { screenDistance: positive("screen_distance", 3.0), screenWidth: positive("screen_width", 4.0) },
  /** @type {Camera | null} */
  mainCamera: null,
  /** @type {Camera | null} */
  thermalCamera: null,
  hit: null, shift: 0, analysis: null, freeze: false,
  eyes: { left: null, right: null }, eyeMismatches: 0, layoutErrors: 0, mainFrames: 0, mainWidth: 0,
  drivingFrames: 0, thermalFrames: 0, latencies: [], frameTimes: [], renderTimes: [], xrFrames: 0, inXR: false,
  // the desktop view looks nearly level: the status icons above the main screen are in it
  view: { yaw: 0, pitch: 0.02 }, headYaw: 0, headPitch: 0, sentAxes: 0, lastInput: "", red: [],
  /** @type {import("./panels.js").LinkSample[]} */
  graph: [],  // the link graph's points (panels.js)
  mapImage: null, pendingDrawn: null, captures: [], stages: [],
};
/** @type {any} */ (window).station = station;  // for tests and debugging

const room = createRoom($("room"), station.layout);
station.room = room;

// ---------------------------------------------------------------- connection (link.js)
function connect() {
  station.ws = openLink({
    onOpen: (ws) => {
      station.ws = ws;  // a reconnection's new socket: everything is sent on it from now on
      station.connected = true;
      send({ type: "mode", mode: station.driveMode });
      // its screens decode inter-frame video with WebCodecs; without, the station sends JPEG
      send({ type: "video", decoder: webCodecsAvailable() });
    },
    onClose: (refused) => {
      station.connected = false;
      $("status").textContent = refused ? "refused: open the URL freelook printed" : "disconnected";
    },
    onMessage,
  });
}

/** @param {object} obj */
function send(obj) {
  sendJson(station.ws, obj);
}

/** @typedef {import("./station-screens.js").Frame} Frame */

/** @param {ArrayBuffer} data */
function onMessage(data) {
  const parsed = parseFrame(data);
  if (!parsed) return;  // an unknown kind or a short frame: dropped
  if (parsed.kind === FRAME.JSON) {
    const msg = parsed.message;
    if (msg.type === "hello") onHello(msg);
    else if (msg.type === "state") onState(msg);
    else if (msg.type === "error") { station.errors += 1; console.warn("server refused a message:", msg.reason); }
    return;
  }
  const name = screenOf(parsed.stream);
  if (!name) return;  // a stream no screen shows
  if (parsed.kind === FRAME.VIDEO) {
    // without WebCodecs only what came before the station heard so is dropped: JPEG follows
    if (webCodecsAvailable()) screens.videoDecoder(parsed.stream).push(parsed);
    return;
  }
  const { stream, layout, stamp, frameId } = parsed;
  /** @type {Frame} */
  const frame = { stream, layout, stamp, frameId, jpeg: parsed.jpeg.slice().buffer };
  if (name !== "driving") frame.arrived = performance.timeOrigin + performance.now();
  screens.queue(name, frame);
}

/** The screen camera ``stream`` is shown on, null for none. @param {number} stream */
function screenOf(stream) {
  if (stream === 0) return "driving";
  if (station.mainCamera && stream === station.mainCamera.stream) return "main";
  if (station.thermalCamera && stream === station.thermalCamera.stream) return "thermal";
  return null;
}

/** @param {Hello} msg */
function onHello(msg) {
  station.hello = msg;
  const cameras = (msg.cameras || []).slice().sort((a, b) => a.stream - b.stream);
  station.mainCamera = cameras.find((c) => c.layout === LAYOUT.STEREO) || cameras.find((c) => c.kind !== "thermal") || null;
  station.thermalCamera = cameras.find((c) => c.kind === "thermal") || null;
  if (station.mainCamera) setMainAspect(room, eyeWidth(station.mainCamera), station.mainCamera.height);
  buildRobot(room, msg);
  if (msg.map) {
    const img = new Image();
    img.onload = () => { station.mapImage = img; };
    img.src = "data:image/png;base64," + msg.map.png;
  }
  $("status").textContent = `${msg.robot.name}: ` + (station.mainCamera ? `main screen ${station.mainCamera.name}${station.mainCamera.layout === LAYOUT.STEREO ? " (stereo)" : ""}` : "no arm camera");
}

// One eye's image width: a side-by-side pair's frame holds both eyes.
/** @param {Camera} camera */
function eyeWidth(camera) {
  if (station.mainWidth && camera === station.mainCamera) return camera.layout === LAYOUT.STEREO ? station.mainWidth / 2 : station.mainWidth;
  return camera.layout === LAYOUT.STEREO && camera.width > 0 ? camera.width / 2 : camera.width;
}

/** @param {State} s */
function onState(s) {
  station.last = s;
  $("estop-release").hidden = !s.estop;  // the e-stop's only release, shown while engaged
  station.red = poseRobot(room, s.arm);
  // the robot's reports per second, not its packets (a camera frame is many of those)
  addSample(station.graph, linkSample(s, performance.now()));
  panelsDirty = true;
}

// ---------------------------------------------------------------- camera frames (station-screens.js)
const screens = createScreens({
  show: (name, picture, frame) => (name === "main" ? onMainFrame(picture, frame) : paintSide(name, picture)),
  screenOf,
  askKeyframe: (stream) => send({ type: "keyframe", stream }),
  decodeInWorker: params.get("decode") !== "main",
});
station.video = screens.video;

const raw = document.createElement("canvas");  // the last stereo frame as it came, both eyes
/** @type {Frame | null} */
let rawFrame = null;  // ... and its frame
function onMainFrame(bitmap, frame) {
  if (station.freeze) return;
  const [width, height] = pictureSize(bitmap);
  if (raw.width !== width || raw.height !== height) { raw.width = width; raw.height = height; }
  raw.getContext("2d").drawImage(bitmap, 0, 0);
  station.mainFrames += 1;
  // a pair is one frame holding both eyes side by side: as wide as hello says, an even width
  const cam = station.mainCamera;
  if (frame.layout !== cam.layout || width !== cam.width || height !== cam.height || (frame.layout === LAYOUT.STEREO && width % 2)) station.layoutErrors += 1;
  station.mainWidth = width;
  rawFrame = frame;
  frame.decoded = performance.timeOrigin + performance.now();
  if (station.hitMode === "analysis") analyse();
  composeEyes();
  station.pendingDrawn = frame;
}

// Each eye's image from the one side-by-side frame, moved outwards by the HIT shift: the left
// image to the left, the right one to the right (black where the shift uncovers the screen).
function composeEyes() {
  const frame = rawFrame;
  if (!frame) return;
  const stereo = frame.layout === LAYOUT.STEREO;
  const w = stereo ? Math.floor(raw.width / 2) : raw.width, h = raw.height;
  const shift = station.viewMode === "direct" ? 0 : station.shift;
  for (const [eye, sx, dx] of [["left", 0, -shift], ["right", stereo ? w : 0, shift]]) {
    const c = room.canvases[eye];
    if (c.width !== w || c.height !== h) { c.width = w; c.height = h; }
    const g = c.getContext("2d");
    g.fillStyle = "#000"; g.fillRect(0, 0, w, h);
    g.drawImage(raw, sx, 0, w, h, dx, 0, w, h);
    room.textures[eye].needsUpdate = true;
    station.eyes[eye] = { frameId: frame.frameId, stamp: frame.stamp, shift: dx };
  }
  if (station.eyes.left.frameId !== station.eyes.right.frameId || station.eyes.left.stamp !== station.eyes.right.stamp) station.eyeMismatches += 1;
}

// The image-analysis HIT option: the farthest features' disparity from a small grey copy.
const small = document.createElement("canvas");
function analyse() {
  const frame = rawFrame;
  if (!frame || frame.layout !== LAYOUT.STEREO || !station.hit) return;
  const eyeW = Math.floor(raw.width / 2), scale = Math.min(1, 160 / eyeW);
  const w = Math.max(16, Math.round(eyeW * scale)), h = Math.max(16, Math.round(raw.height * scale));
  small.width = 2 * w; small.height = h;
  const g = small.getContext("2d", { willReadFrequently: true });
  g.drawImage(raw, 0, 0, 2 * w, h);
  const px = g.getImageData(0, 0, 2 * w, h).data;
  const grey = (x0) => {
    const out = new Float32Array(w * h);
    for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) { const i = 4 * (y * 2 * w + x0 + x); out[y * w + x] = 0.299 * px[i] + 0.587 * px[i + 1] + 0.114 * px[i + 2]; }
    return out;
  };
  const found = disparities(grey(0), grey(w), w, h, Math.min(24, Math.floor(w / 4)));
  station.analysis = found && { far: found.far / scale, near: found.near / scale, blocks: found.blocks };
}

function paintSide(name, bitmap) {
  const c = room.canvases[name];
  const [width, height] = pictureSize(bitmap);
  if (c.width !== width || c.height !== height) { c.width = width; c.height = height; }
  const g = c.getContext("2d");
  g.drawImage(bitmap, 0, 0);
  if (name === "driving") { drawOverlay(g, c.width, station.last); station.drivingFrames += 1; } else station.thermalFrames += 1;
  room.textures[name].needsUpdate = true;
}

let panelsDirty = true, lastPanels = 0;
function paintPanels(now) {
  if (!panelsDirty || now - lastPanels < 250) return;  // 4 Hz: each redraw is a texture upload
  panelsDirty = false; lastPanels = now;
  station.icons = drawStatus(room.canvases.status, station.last);
  drawGraph(room.canvases.graph, station.graph);
  drawMap(room.canvases.map, station.hello, station.last, station.mapImage);
  for (const k of ["status", "graph", "map"]) room.textures[k].needsUpdate = true;
}

// ---------------------------------------------------------------- HIT from the rendered view
function updateHit(viewWidth, projectionX, ipd, source) {
  const cam = station.mainCamera;
  const cameraWidth = cam ? eyeWidth(cam) : 320;
  const h = hitFromView(viewWidth, projectionX, ipd, station.layout.screenDistance, station.layout.screenWidth, cameraWidth);
  if (!h) return;
  const key = [h.X, h.fov_deg.toFixed(4), ipd.toFixed(5)].join();
  let shift = station.hitMode === "off" ? 0 : h.camera_shift;
  if (station.hitMode === "analysis") shift = analysedShift(h.camera_shift, station.analysis, cameraWidth / 8);
  station.hit = { ...h, source };
  if (key !== station.hitKey || Math.abs(shift - station.shift) > 1e-6) {
    station.hitKey = key;
    station.shift = shift;
    composeEyes();
  }
}

// ---------------------------------------------------------------- controls
const keys = new Set();
let xrInput = null;  // what the controllers said in the last XR frame
const edges = {};
function pressedOnce(name, now) { const was = edges[name]; edges[name] = now; return now && !was; }

// the controllers (controls.js) and their buttons' presses
function readControllers(session) {
  const out = xrControllers(session.inputSources);
  if (pressedOnce("b", out.buttons.b)) setDriveMode(station.driveMode === "arm" ? "free_look" : "arm");
  if (pressedOnce("y", out.buttons.y)) send({ type: "estop", engaged: true });  // only engages
  if (pressedOnce("x", out.buttons.x)) setViewMode(station.viewMode === "cinema" ? "direct" : "cinema");
  if (station.driveMode === "arm") {
    if (pressedOnce("close", out.buttons.close)) send({ type: "gripper", open: 0 });
    if (pressedOnce("open", out.buttons.open)) send({ type: "gripper", open: 1 });
  }
  return out;
}

function setDriveMode(mode) {
  if (mode === "arm" && !(station.hello && station.hello.arm)) return;
  station.driveMode = mode;
  send({ type: "mode", mode });
  station.lastInput = "";
}

// the held keys (controls.js, as the cockpit's Free Look), the controllers and the head
function inputs() {
  const a = keyAxes(keys);
  let cartesian = keyCartesian(keys);
  if (xrInput && xrInput.deadman) {
    a.forward += xrInput.forward; a.left += xrInput.left; a.turn += xrInput.turn; a.tilt += xrInput.tilt;
    cartesian = cartesian.map((v, k) => v + xrInput.cartesian[k]);
  }
  if (station.headPan && station.inXR) {  // the head's yaw and pitch away from the screen, as rates
    a.turn += station.headYaw / (Math.PI / 6);
    a.tilt += station.headPitch / (Math.PI / 6);
  }
  for (const k of Object.keys(a)) a[k] = clamp(a[k]);
  return { axes: a, cartesian: cartesian.map(clamp) };
}

function controlTick() {
  const { axes, cartesian } = inputs();
  const arm = station.driveMode === "arm";
  const message = arm ? { type: "arm", cartesian } : { type: "axes", mode: "free_look", ...axes };
  const key = JSON.stringify(message);
  const zero = arm ? cartesian.every((v) => v === 0) : Object.values(axes).every((v) => v === 0);
  // on every change at once; repeated while non-zero so the robot's watchdog stays fed
  if (key !== station.lastInput || !zero) {
    send(message);
    station.lastInput = key;
    if (!zero) station.sentAxes += 1;
  }
}

/** @param {string} mode */
function setViewMode(mode) {
  station.viewMode = mode;
  input("view-mode").value = mode;
  room.mainLeft.visible = room.mainRight.visible = mode === "cinema";
  room.head.visible = mode === "direct";
  composeEyes();
}

function setupInputs() {
  input("view-mode").value = station.viewMode;
  input("stereo").value = station.stereo;
  input("hit-mode").value = station.hitMode;
  input("head-pan").checked = station.headPan;
  input("view-mode").addEventListener("change", () => setViewMode(input("view-mode").value));
  input("stereo").addEventListener("change", () => { station.stereo = input("stereo").value; });
  input("hit-mode").addEventListener("change", () => { station.hitMode = input("hit-mode").value; station.hitKey = ""; });
  input("head-pan").addEventListener("change", () => { station.headPan = input("head-pan").checked; });
  // a changed choice gives the keys back to driving
  for (const id of ["view-mode", "stereo", "hit-mode", "head-pan"]) $(id).addEventListener("change", () => $(id).blur());
  window.addEventListener("keydown", (ev) => {
    const target = /** @type {HTMLElement | null} */ (ev.target);
    if (target && (target.tagName === "INPUT" || target.tagName === "SELECT")) return;
    // the e-stop key only ever engages it; a click on "release e-stop" is its only release
    if (ev.code === "Space" || ev.code === "Escape") { ev.preventDefault(); send({ type: "estop", engaged: true }); keys.clear(); return; }
    if (!ev.repeat) keys.add(ev.code);
  });
  window.addEventListener("keyup", (ev) => keys.delete(ev.code));
  $("estop-release").addEventListener("click", (ev) => {
    $("estop-release").blur();
    if (ev.detail === 0) return;  // Space or Enter on the focused button: not a release
    keys.clear();
    send({ type: "estop", engaged: false });
  });
  window.addEventListener("blur", () => keys.clear());
  // mouse look: dragging turns the desktop view only, never the robot
  let drag = null;
  const canvas = $("room");
  canvas.addEventListener("pointerdown", (ev) => { drag = [ev.clientX, ev.clientY]; canvas.setPointerCapture(ev.pointerId); });
  canvas.addEventListener("pointerup", () => { drag = null; });
  canvas.addEventListener("pointermove", (ev) => {
    if (!drag) return;
    station.view.yaw += (ev.clientX - drag[0]) * 0.004;
    station.view.pitch = Math.max(-1.4, Math.min(1.4, station.view.pitch + (ev.clientY - drag[1]) * 0.004));
    drag = [ev.clientX, ev.clientY];
  });
  setInterval(controlTick, SEND_MS);
}

// ---------------------------------------------------------------- WebXR
async function setupXR() {
  const button = /** @type {HTMLButtonElement} */ ($("enter-vr"));
  const xr = /** @type {any} */ (navigator).xr;  // WebXR: not in TypeScript's DOM types
  if (!xr) { button.textContent = "VR: no WebXR in this browser"; return; }
  const supported = await xr.isSessionSupported("immersive-vr").catch(() => false);
  if (!supported) { button.textContent = "VR: no headset"; return; }
  button.disabled = false;
  button.addEventListener("click", async () => {
    if (room.renderer.xr.isPresenting) { room.renderer.xr.getSession().end(); return; }
    const session = await xr.requestSession("immersive-vr", { optionalFeatures: ["local-floor"] });
    // without a floor-level space the head starts at the origin: raise it to eye height
    const floor = !session.enabledFeatures || session.enabledFeatures.includes("local-floor");
    room.renderer.xr.setReferenceSpaceType(floor ? "local-floor" : "local");
    room.rig.position.y = floor ? 0 : EYE_HEIGHT;
    await room.renderer.xr.setSession(session);
    station.inXR = true;
    button.textContent = "Exit VR";
    session.addEventListener("end", () => { station.inXR = false; xrInput = null; room.rig.position.y = 0; room.camera.position.set(0, EYE_HEIGHT, 0); button.textContent = "Enter VR"; });
  });
}

// The XR frame's views: each eye's render width, projection and position give the HIT.
function readViews(frame) {
  const refSpace = room.renderer.xr.getReferenceSpace();
  const pose = frame.getViewerPose(refSpace);
  if (!pose || pose.views.length < 1) return;
  const layer = frame.session.renderState.baseLayer;
  const views = pose.views;
  const vp = layer ? layer.getViewport(views[0]) : { width: room.renderer.domElement.width / 2 };
  let ipd = DESKTOP_IPD;
  if (views.length >= 2) {
    const a = views[0].transform.position, b = views[1].transform.position;
    ipd = Math.hypot(a.x - b.x, a.y - b.y, a.z - b.z);
  }
  station.xrViews = views.map((v) => ({ eye: v.eye, projection: Array.from(v.projectionMatrix), viewport: layer ? (({ x, y, width, height }) => ({ x, y, width, height }))(layer.getViewport(v)) : null }));
  updateHit(vp.width, views[0].projectionMatrix[0], ipd, "xr");
  // the head's yaw and pitch (for the view check and head-coupled pan)
  const o = pose.transform.orientation;
  const q = new room.THREE.Quaternion(o.x, o.y, o.z, o.w);
  const e = new room.THREE.Euler().setFromQuaternion(q, "YXZ");
  station.headYaw = e.y; station.headPitch = e.x;
  const p = pose.transform.position;
  room.head.position.set(p.x, p.y + room.rig.position.y, p.z);
  room.head.quaternion.copy(q);
  if (station.viewMode === "direct") fitDirect(room, 2 * Math.atan(1 / views[0].projectionMatrix[0]), station.mainCamera ? station.mainCamera.height / eyeWidth(station.mainCamera) : 0.75);
}

// Pixels of both eyes as drawn (after the next render): PNG data URLs, for tests.
station.captureEyes = () => new Promise((resolve) => station.captures.push(resolve));
function capture() {
  const r = room.renderer, gl = r.getContext();
  const session = r.xr.getSession();
  const layer = session ? session.renderState.baseLayer : null;
  gl.bindFramebuffer(gl.FRAMEBUFFER, layer ? layer.framebuffer : null);
  const w = gl.drawingBufferWidth, h = gl.drawingBufferHeight;
  const px = new Uint8Array(w * h * 4);
  gl.readPixels(0, 0, w, h, gl.RGBA, gl.UNSIGNED_BYTE, px);
  r.resetState();
  const half = Math.floor(w / 2);
  const eye = (x0) => {
    const c = document.createElement("canvas");
    c.width = half; c.height = h;
    const img = c.getContext("2d").createImageData(half, h);
    for (let y = 0; y < h; y++) img.data.set(px.subarray(4 * ((h - 1 - y) * w + x0), 4 * ((h - 1 - y) * w + x0 + half)), 4 * y * half);
    c.getContext("2d").putImageData(img, 0, 0);
    return c.toDataURL("image/png");
  };
  const out = { width: w, height: h, left: eye(0), right: eye(half), frameId: station.eyes.left && station.eyes.left.frameId };
  for (const resolve of station.captures.splice(0)) resolve(out);
}

// Where the main screen lies in each eye's image (px, from the top-left): [x0, x1, y0, y1].
station.mainScreenBoxes = () => {
  const cams = room.renderer.xr.isPresenting ? room.renderer.xr.getCamera().cameras : [room.camera];
  const g = room.mainLeft.geometry.parameters, THREE = room.THREE;
  room.mainLeft.updateMatrixWorld();
  return cams.map((cam) => {
    const vp = cam.viewport || { x: 0, z: room.renderer.domElement.width, w: room.renderer.domElement.height };
    const xs = [], ys = [];
    for (const [cx, cy] of [[-1, -1], [1, -1], [1, 1], [-1, 1]]) {
      const p = new THREE.Vector3((cx * g.width) / 2, (cy * g.height) / 2, 0).applyMatrix4(room.mainLeft.matrixWorld).project(cam);
      xs.push(((p.x + 1) / 2) * vp.z); ys.push(((1 - p.y) / 2) * vp.w);
    }
    return [Math.min(...xs), Math.max(...xs), Math.min(...ys), Math.max(...ys)];
  });
};

// ---------------------------------------------------------------- the frame loop
function onFrame(time, frame) {
  const t0 = performance.now();
  if (station.frameStarts && station.frameStarts.length < 20000) station.frameStarts.push(t0);
  paintPanels(t0);
  if (frame) {
    station.xrFrames += 1;
    readViews(frame);
    const session = frame.session;
    xrInput = readControllers(session);
  } else {
    const cam = room.camera;
    cam.rotation.set(-station.view.pitch, -station.view.yaw, 0, "YXZ");
    // the desktop's HIT: one eye is half the canvas (side by side) or a canvas of its own
    const el = room.renderer.domElement;
    const eyeW = station.stereo === "sbs" ? el.width / 2 : el.width;
    cam.aspect = eyeW / el.height; cam.updateProjectionMatrix();
    updateHit(eyeW, cam.projectionMatrix.elements[0], DESKTOP_IPD, "desktop");
    cam.updateMatrixWorld();
    room.head.position.copy(cam.position);
    room.head.quaternion.copy(cam.quaternion);
    if (station.viewMode === "direct") fitDirect(room, 2 * Math.atan(1 / cam.projectionMatrix.elements[0]), station.mainCamera ? station.mainCamera.height / eyeWidth(station.mainCamera) : 0.75);
  }
  const t1 = performance.now();
  if (frame) room.renderer.render(room.scene, room.camera);
  else renderDesktop(room, station.stereo, DESKTOP_IPD);
  station.renderTimes.push(performance.now() - t1);  // of the frame time: drawing both eyes
  if (station.renderTimes.length > 2000) station.renderTimes.shift();
  const drawn = station.pendingDrawn;
  if (drawn) {  // capture (robot's wall clock) → both eyes drawn (this page's wall clock)
    station.pendingDrawn = null;
    const now = performance.timeOrigin + performance.now();
    station.latencies.push(now - drawn.stamp * 1000);
    // where the time went: capture → arrived in this page → decoded and cut → drawn (ms)
    if (drawn.arrived) station.stages.push([drawn.arrived - drawn.stamp * 1000, drawn.decoded - drawn.stamp * 1000, now - drawn.stamp * 1000]);
    if (station.latencies.length > 2000) station.latencies.shift();
    if (station.stages.length > 2000) station.stages.shift();
  }
  if (station.captures.length) capture();
  station.frameTimes.push(performance.now() - t0);
  if (station.frameTimes.length > 2000) station.frameTimes.shift();
}

setupInputs();
setViewMode(station.viewMode);
room.renderer.setAnimationLoop(onFrame);
setupXR();
connect();
