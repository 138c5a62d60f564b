// The path chip's text (freshness.js): through a relay, whether the link goes direct or
// through the relay, and the round trip the session measures; nothing off a relay.
import { test } from "node:test";
import assert from "node:assert/strict";
import { pathText } from "../../src/freelook/web/static/freshness.js";

test("direct or through the relay, with the round trip", () => {
  const relay = "relay.example:7447";
  assert.equal(pathText({ via: "direct", relay }, 0.0012),
    "path: direct (relay relay.example:7447 standing by) · round trip 1.2 ms");
  assert.equal(pathText({ via: "relay", relay }, 0.0523), "path: relay relay.example:7447 · round trip 52 ms");
  assert.equal(pathText({ via: "relay", relay }, null), "path: relay relay.example:7447");
});

test("off a relay, or what cannot be a path: no chip", () => {
  assert.equal(pathText(null, 0.1), null);
  assert.equal(pathText(undefined, 0.1), null);
  assert.equal(pathText({ via: "carrier pigeon", relay: "x:1" }, 0.1), null);
});
