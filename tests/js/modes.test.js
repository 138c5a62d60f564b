// Which drive mode a cockpit drives in (controls.js): the one wanted while it is offered, else
// the first of Free Look, Tank and Keyboard the robot and the wire profile offer.
import { test } from "node:test";
import assert from "node:assert/strict";
import { START_MODES, offeredMode } from "../../src/freelook/web/static/controls.js";

test("nothing wanted: the first mode offered, Free Look when it is", () => {
  assert.equal(offeredMode(null, {}), "free_look");
  assert.deepEqual([...START_MODES], ["free_look", "tank", "keyboard"]);
});

test("a robot without a pan joint starts in Tank", () => {
  assert.equal(offeredMode(null, { free_look: "Free Look refused: the camera cannot pan (no pan joint)" }), "tank");
});

test("the thesis profile: Keyboard", () => {
  const thesis = { tank: "no Tank", free_look: "no Free Look", linear: "no linear drive" };
  assert.equal(offeredMode(null, thesis), "keyboard");
  assert.equal(offeredMode("tank", thesis), "keyboard");
  assert.equal(offeredMode("trajectory", thesis), "trajectory");
});

test("the mode wanted stays while it is offered", () => {
  assert.equal(offeredMode("linear", {}), "linear");
  assert.equal(offeredMode("free_look", { free_look: "refused" }), "tank");
});
