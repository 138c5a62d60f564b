// @ts-check
// freelook station: the virtual room of TAROS Fig. 2 in three.js. The viewer sits at the origin
// (y up, looking along −z); every screen stands vertical and turns toward the viewer. The main
// stereo "cinema" screen is two planes in one place, the left image on layer 1 (the left eye's)
// and the right image on layer 2; direct-to-eyes mode shows the same two images on head-fixed
// planes instead. The 3-D robot with its arm's collision boxes stands on the floor.
import * as THREE from "three";

export const EYE_HEIGHT = 1.6;  // m, a seated operator's eyes above the floor (and the desktop view's)

function canvasTexture(canvas) {
  const texture = new THREE.CanvasTexture(canvas);
  texture.colorSpace = THREE.SRGBColorSpace;
  texture.minFilter = THREE.LinearFilter;
  texture.generateMipmaps = false;
  return texture;
}

function canvas2d(w, h) {
  const c = document.createElement("canvas");
  c.width = w; c.height = h;
  return c;
}

// A vertical plane ``width`` m wide at ``yawDeg`` around the viewer, ``distance`` m away, its
// centre ``y`` m above the floor, turned toward the viewer's eyes.
function screen(texture, width, height, yawDeg, distance, y, layer = 0) {
  const mesh = new THREE.Mesh(new THREE.PlaneGeometry(width, height), new THREE.MeshBasicMaterial({ map: texture, toneMapped: false }));
  const a = (yawDeg * Math.PI) / 180;
  mesh.position.set(distance * Math.sin(a), y, -distance * Math.cos(a));
  mesh.lookAt(0, y, 0);
  mesh.layers.set(layer);
  return mesh;
}

export function createRoom(canvasElement, layout) {
  const renderer = new THREE.WebGLRenderer({ canvas: canvasElement, antialias: false });
  renderer.xr.enabled = true;
  renderer.xr.setReferenceSpaceType("local-floor");
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x1a2028);
  const camera = new THREE.PerspectiveCamera(80, 16 / 9, 0.05, 100);
  camera.position.set(0, EYE_HEIGHT, 0);
  camera.layers.enable(1);  // the desktop's mono view shows the left image
  const rig = new THREE.Group();  // the XR reference space's origin in the room
  rig.add(camera);
  scene.add(rig);
  scene.add(new THREE.AmbientLight(0xffffff, 0.7));
  const sun = new THREE.DirectionalLight(0xffffff, 1.0);
  sun.position.set(1, 4, 2);
  scene.add(sun);
  const floor = new THREE.Mesh(new THREE.CircleGeometry(8, 48), new THREE.MeshLambertMaterial({ color: 0x2b3440 }));
  floor.rotation.x = -Math.PI / 2;
  scene.add(floor);
  const grid = new THREE.GridHelper(16, 16, 0x3d4a58, 0x323d49);
  grid.position.y = 0.002;
  scene.add(grid);

  // flat panels (2-D canvases as textures)
  const canvases = {
    left: canvas2d(320, 240), right: canvas2d(320, 240), driving: canvas2d(640, 480),
    thermal: canvas2d(320, 240), map: canvas2d(512, 512), graph: canvas2d(512, 256), status: canvas2d(1024, 192),
  };
  // software 2-D canvases: uploading one as a texture then needs no read-back from the GPU
  for (const c of Object.values(canvases)) { const g = c.getContext("2d", { willReadFrequently: true }); g.fillStyle = "#000"; g.fillRect(0, 0, c.width, c.height); }
  const textures = Object.fromEntries(Object.entries(canvases).map(([k, c]) => [k, canvasTexture(c)]));

  const main = { distance: layout.screenDistance, width: layout.screenWidth, height: layout.screenWidth * 0.75 };
  const mainY = Math.max(main.height / 2 + 0.1, EYE_HEIGHT);
  const mainLeft = screen(textures.left, main.width, main.height, 0, main.distance, mainY, 1);
  const mainRight = screen(textures.right, main.width, main.height, 0, main.distance, mainY, 2);
  scene.add(mainLeft, mainRight);
  // side screens 3 m away, just beside the main screen as the viewer sees it
  const side = 3.0, deg = 180 / Math.PI;
  const beside = (width) => Math.atan(main.width / 2 / main.distance) * deg + 4 + Math.atan(width / 2 / side) * deg;
  const panels = {
    driving: screen(textures.driving, 2.0, 1.5, -beside(2.0), side, 2.0),
    map: screen(textures.map, 1.2, 1.2, -beside(2.0), side, 0.65),
    thermal: screen(textures.thermal, 2.0, 1.5, beside(2.0), side, 2.0),
    graph: screen(textures.graph, 1.6, 0.8, beside(2.0), side, 0.75),
    status: screen(textures.status, 3.0, 0.5625, 0, main.distance, mainY + main.height / 2 + 0.4),
  };
  for (const p of Object.values(panels)) scene.add(p);

  // direct-to-eyes: the same two images on planes fixed to the head, one per eye
  const head = new THREE.Group();
  const directLeft = new THREE.Mesh(new THREE.PlaneGeometry(1, 0.75), new THREE.MeshBasicMaterial({ map: textures.left, toneMapped: false }));
  const directRight = new THREE.Mesh(new THREE.PlaneGeometry(1, 0.75), new THREE.MeshBasicMaterial({ map: textures.right, toneMapped: false }));
  directLeft.layers.set(1); directRight.layers.set(2);
  for (const m of [directLeft, directRight]) { m.material.depthTest = false; m.renderOrder = 10; }  // nothing in front
  directLeft.position.z = directRight.position.z = -1;
  head.add(directLeft, directRight);
  head.visible = false;
  scene.add(head);

  const robot = new THREE.Group();  // robot frame (x forward, y left, z up) → room (y up)
  const toRoom = new THREE.Matrix4().makeBasis(new THREE.Vector3(0, 0, -1), new THREE.Vector3(-1, 0, 0), new THREE.Vector3(0, 1, 0));
  robot.quaternion.setFromRotationMatrix(toRoom);  // forward away from the viewer, left to the left
  robot.position.set(0, 0, -1.7);
  robot.scale.setScalar(0.6);
  scene.add(robot);

  return {
    THREE, renderer, scene, camera, rig, canvases, textures, main, mainLeft, mainRight, panels, head,
    directLeft, directRight, robot, robotMeshes: [], stereoCamera: new THREE.StereoCamera(), anaglyph: null,
  };
}

// The robot on the floor: its collision boxes (body and arm) posed from the state, red while
// the anti-collision acts on them (TAROS Fig. 6); without an arm, its footprint as one box.
const COLORS = { body: 0x6d7b88, arm: 0x4aa3ff, red: 0xff2020 };
export function buildRobot(room, hello) {
  room.robot.clear();
  room.robotMeshes = [];
  if (hello.arm) {
    const arm = new Set(hello.arm.arm_links || []);
    room.robotMeshes = hello.arm.boxes.map((box) => {
      const base = arm.has(box.name) ? COLORS.arm : COLORS.body;
      const mesh = new THREE.Mesh(new THREE.BoxGeometry(...box.size), new THREE.MeshLambertMaterial({ color: base }));
      mesh.matrixAutoUpdate = false;
      mesh.userData = { name: box.name, base };
      mesh.visible = box.name !== "ground";
      room.robot.add(mesh);
      return mesh;
    });
    return;
  }
  const fp = hello.robot.footprint;
  const body = new THREE.Mesh(new THREE.BoxGeometry(fp.length, fp.width, 0.25), new THREE.MeshLambertMaterial({ color: COLORS.body }));
  body.position.set(fp.center_forward || 0, 0, 0.125);
  room.robot.add(body);
}

export function poseRobot(room, arm) {
  if (!arm || !arm.centres || !room.robotMeshes.length) return [];
  const red = new Set(arm.red || []);
  room.robotMeshes.forEach((mesh, k) => {
    const c = arm.centres[k], r = arm.rotations[k];
    if (!c || !r) return;
    mesh.matrix.set(r[0], r[1], r[2], c[0], r[3], r[4], r[5], c[1], r[6], r[7], r[8], c[2], 0, 0, 0, 1);
    mesh.matrixWorldNeedsUpdate = true;
    mesh.material.color.setHex(red.has(mesh.userData.name) ? COLORS.red : mesh.userData.base);
  });
  return room.robotMeshes.filter((m) => red.has(m.userData.name)).map((m) => m.userData.name);
}

// The main screen's aspect follows the stereo camera's eye image.
export function setMainAspect(room, eyeWidth, eyeHeight) {
  const h = room.main.width * (eyeHeight / eyeWidth);
  for (const mesh of [room.mainLeft, room.mainRight]) {
    mesh.geometry.dispose();
    mesh.geometry = new room.THREE.PlaneGeometry(room.main.width, h);
  }
  room.main.height = h;
}

// Direct-to-eyes planes fill ``fill`` of the view at 1 m for a horizontal field of view φx.
export function fitDirect(room, fovXRad, aspect, fill = 0.95) {
  const w = 2 * Math.tan(fovXRad / 2) * fill;
  room.directLeft.scale.set(w, (w * aspect) / 0.75, 1);
  room.directRight.scale.copy(room.directLeft.scale);
}

// Desktop rendering: mono, side by side (left eye left) or red/cyan anaglyph.
export function renderDesktop(room, stereo, ipd) {
  const { renderer, scene, camera } = room;
  const el = renderer.domElement;
  const w = el.clientWidth, h = el.clientHeight;
  if (w && h && (el.width !== Math.floor(w * renderer.getPixelRatio()) || el.height !== Math.floor(h * renderer.getPixelRatio()))) renderer.setSize(w, h, false);
  const size = renderer.getDrawingBufferSize(new THREE.Vector2());
  camera.aspect = stereo === "sbs" ? size.x / 2 / size.y : size.x / size.y;
  camera.updateProjectionMatrix();
  camera.updateMatrixWorld();
  if (stereo === "mono") { renderer.render(scene, camera); return; }
  const sc = room.stereoCamera;
  sc.eyeSep = ipd;
  sc.update(camera);
  if (stereo === "sbs") {
    renderer.setScissorTest(true);
    const half = Math.floor(w / 2);
    renderer.setScissor(0, 0, half, h); renderer.setViewport(0, 0, half, h);
    renderer.render(scene, sc.cameraL);
    renderer.setScissor(half, 0, w - half, h); renderer.setViewport(half, 0, w - half, h);
    renderer.render(scene, sc.cameraR);
    renderer.setScissorTest(false);
    renderer.setViewport(0, 0, w, h);
    return;
  }
  if (!room.anaglyph || room.anaglyph.left.width !== size.x || room.anaglyph.left.height !== size.y) {
    const target = () => new THREE.WebGLRenderTarget(size.x, size.y);
    const left = target(), right = target();
    const material = new THREE.ShaderMaterial({
      uniforms: { mapLeft: { value: left.texture }, mapRight: { value: right.texture } },
      vertexShader: "varying vec2 vUv; void main() { vUv = uv; gl_Position = vec4(position.xy, 0.0, 1.0); }",
      fragmentShader: "uniform sampler2D mapLeft; uniform sampler2D mapRight; varying vec2 vUv;" +
        "void main() { vec4 l = texture2D(mapLeft, vUv); vec4 r = texture2D(mapRight, vUv);" +
        " gl_FragColor = vec4(0.299 * l.r + 0.587 * l.g + 0.114 * l.b, r.g, r.b, 1.0); }",
    });
    const quad = new THREE.Mesh(new THREE.PlaneGeometry(2, 2), material);
    const quadScene = new THREE.Scene(); quadScene.add(quad);
    room.anaglyph = { left: left, right: right, quadScene, quadCamera: new THREE.OrthographicCamera(-1, 1, 1, -1, 0, 1) };
  }
  const a = room.anaglyph;
  renderer.setRenderTarget(a.left); renderer.render(scene, sc.cameraL);
  renderer.setRenderTarget(a.right); renderer.render(scene, sc.cameraR);
  renderer.setRenderTarget(null); renderer.render(a.quadScene, a.quadCamera);
}
