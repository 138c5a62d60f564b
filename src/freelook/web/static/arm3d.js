// @ts-check
// freelook cockpit: the arm's 3-D view. Every collision box of the robot (body and arm) is
// drawn where the robot's joint encoders put it (the station poses them from the URDF); the
// boxes of a pair in an anti-collision phase are drawn red (TAROS Fig. 6). three.js ships in
// the package (static/vendor/three, the npm package's build at the locked version), named
// "three" by the page's import map. Imported by cockpit.js when the robot has an arm.
import * as THREE from "three";

const COLORS = { body: 0x6d7b88, arm: 0x4aa3ff, ground: 0x2a3138, red: 0xff2020 };
/** The scene and how often it was drawn (for tests and debugging). */
export const view = { scene: null, renderer: null, camera: null, meshes: [], names: [], rendered: 0, webgl: false };

/** @typedef {import("./messages.js").Hello} Hello */
/** @typedef {import("./messages.js").State} State */

/** @param {import("./messages.js").ArmDescription} description the hello's arm: its boxes and arm links */
function build(description) {
  const canvas = /** @type {HTMLCanvasElement} */ (document.getElementById("arm-canvas"));
  const scene = new THREE.Scene();
  scene.background = new THREE.Color(0x181e24);
  scene.add(new THREE.AmbientLight(0xffffff, 0.6));
  const sun = new THREE.DirectionalLight(0xffffff, 1.2);
  sun.position.set(2, -3, 4);
  scene.add(sun);
  const camera = new THREE.PerspectiveCamera(45, canvas.width / canvas.height, 0.05, 50);
  camera.up.set(0, 0, 1);  // the robot's frame: x forward, y left, z up
  camera.position.set(3.0, -4.0, 2.6);
  camera.lookAt(0.0, 0, 0.5);
  const arm = new Set(description.arm_links || []);
  view.meshes = description.boxes.map((box) => {
    const geometry = new THREE.BoxGeometry(box.size[0], box.size[1], box.size[2]);
    const base = box.name === "ground" ? COLORS.ground : arm.has(box.name) ? COLORS.arm : COLORS.body;
    const material = new THREE.MeshLambertMaterial({ color: base, transparent: box.name === "ground", opacity: box.name === "ground" ? 0.35 : 1 });
    const mesh = new THREE.Mesh(geometry, material);
    mesh.matrixAutoUpdate = false;
    mesh.userData = { name: box.name, base };
    mesh.add(new THREE.LineSegments(new THREE.EdgesGeometry(geometry), new THREE.LineBasicMaterial({ color: 0x0c1014 })));
    scene.add(mesh);
    return mesh;
  });
  view.names = description.boxes.map((b) => b.name);
  view.scene = scene; view.camera = camera;
  try {
    view.renderer = new THREE.WebGLRenderer({ canvas, antialias: true });
    view.webgl = true;
    document.getElementById("arm-status").textContent = "";
  } catch {
    document.getElementById("arm-status").textContent = "3-D view: this browser has no WebGL";
  }
}

/** @param {import("./messages.js").ArmView} arm the state's arm: each box's centre and rotation, the red pairs */
function update(arm) {
  if (!view.scene || !arm || !arm.centres) return;
  const red = new Set(arm.red);
  view.meshes.forEach((mesh, k) => {
    const c = arm.centres[k], r = arm.rotations[k];
    mesh.matrix.set(r[0], r[1], r[2], c[0], r[3], r[4], r[5], c[1], r[6], r[7], r[8], c[2], 0, 0, 0, 1);
    mesh.material.color.setHex(red.has(mesh.userData.name) ? COLORS.red : mesh.userData.base);
  });
  if (view.renderer) {
    const canvas = view.renderer.domElement;
    const w = canvas.clientWidth, h = canvas.clientHeight;
    if (w > 0 && h > 0 && (canvas.width !== w || canvas.height !== h)) {
      view.renderer.setSize(w, h, false);
      view.camera.aspect = w / h;
      view.camera.updateProjectionMatrix();
    }
    view.renderer.render(view.scene, view.camera);
    view.rendered += 1;
  }
}

/** Boxes drawn red now (for tests and debugging). */
export function redBoxes() {
  return view.meshes.filter((m) => m.material.color.getHex() === COLORS.red).map((m) => m.userData.name);
}

/** @param {Hello} msg the hello message */
export function onHello(msg) { if (msg.arm && !view.scene) build(msg.arm); }
/** @param {State} s a state message */
export function onState(s) { if (s.arm) update(s.arm); }
