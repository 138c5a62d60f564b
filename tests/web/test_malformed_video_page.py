"""The cockpit survives malformed video frames: real ``freelook sim --video vp9``, real
Chromium. Into the page's own socket (its ``onmessage``, as the station's frames come) go
crafted kind-4 frames for the driving camera: a keyframe whose header says 0 × 0 (WebCodecs'
``configure`` throws on it), one claiming 65535 × 65535, and one of the camera's size whose
bytes are no VP9 (the decoder reports an error). Nothing escapes as an uncaught error: each is
counted, the page asks the station for a keyframe, and the robot's own video resumes while the
cockpit's state keeps coming."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from waiting import wait_until

pytestmark = pytest.mark.browser

#: the page's sockets and the text messages it sends, kept for the test
CAPTURE = """
window.__sockets = [];
window.__sent = [];
const NativeSocket = window.WebSocket;
window.WebSocket = class extends NativeSocket {
  constructor(...args) { super(...args); window.__sockets.push(this); }
  send(data) { if (typeof data === "string") window.__sent.push(data); return super.send(data); }
};
"""

#: a kind-4 frame (protocol.js VIDEO_HEADER) into the page's newest socket, as if the station
#: had sent it: VP9, stream 0, a keyframe
INJECT = """([width, height, frameId, bytes]) => {
  const head = new DataView(new ArrayBuffer(21));
  head.setUint8(0, 4); head.setUint8(1, 0); head.setUint8(2, 0); head.setUint8(3, 2);
  head.setUint8(4, 1); head.setFloat64(5, Date.now() / 1000, true);
  head.setUint32(13, frameId, true);
  head.setUint16(17, width, true); head.setUint16(19, height, true);
  const frame = new Uint8Array(21 + bytes.length);
  frame.set(new Uint8Array(head.buffer), 0);
  frame.set(bytes, 21);
  const ws = window.__sockets[window.__sockets.length - 1];
  ws.dispatchEvent(new MessageEvent("message", { data: frame.buffer }));
}"""

KEYFRAME_ASKS = "window.__sent.filter((m) => JSON.parse(m).type === 'keyframe').length"
VIDEO = """(() => { const v = window.freelook.video;
  return {decoded: v.decoded, errors: v.errors, refused: v.refused, config: v.config,
          painted: window.freelook.framesPainted,
          states: window.freelook.last && window.freelook.last.t}; })()"""


@pytest.fixture(scope="module")
def vp9_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(tmp_path_factory.mktemp("malformed"), "--video", "vp9")
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def test_malformed_frames_are_counted_and_the_video_resumes(browser: Any, vp9_sim: Sim) -> None:
    from test_cockpit import open_cockpit  # type: ignore[import-not-found]

    page, errors = open_cockpit(browser, vp9_sim, init_script=CAPTURE)
    wait_until(
        lambda: page.evaluate("window.freelook.video.decoded") > 5,
        30,
        "the robot's VP9 decoded",
        every=0.1,
        show=lambda: page.evaluate(VIDEO),
    )
    before = page.evaluate(VIDEO)
    asks = page.evaluate(KEYFRAME_ASKS)
    garbage = list(range(7, 250)) * 8
    for width, height, data in ((0, 0, garbage), (65535, 65535, garbage), (640, 480, garbage)):
        frame_id = page.evaluate("window.freelook.video.gate.lastId") + 1000
        page.evaluate(INJECT, [width, height, frame_id, data])
        page.wait_for_timeout(300)  # past the page's own bound on keyframe requests
    wait_until(
        lambda: page.evaluate("window.freelook.video.errors") >= 1,
        10,
        "the garbage keyframe's decoder error reported",
        every=0.1,
        show=lambda: page.evaluate(VIDEO),
    )
    hit = page.evaluate(VIDEO)
    assert errors == [], "a malformed frame escaped as an uncaught error"
    assert hit["refused"] == before["refused"] + 2, hit  # 0 × 0 and 65535 × 65535
    assert page.evaluate(KEYFRAME_ASKS) >= asks + 3  # each asked for a keyframe
    # the robot's video resumes: decoded and painted again, from the keyframe it was asked for
    wait_until(
        lambda: page.evaluate(VIDEO)["decoded"] > hit["decoded"] + 10,
        30,
        "the robot's video decoded again",
        every=0.1,
        show=lambda: page.evaluate(VIDEO),
    )
    after = page.evaluate(VIDEO)
    assert after["painted"] > hit["painted"]
    assert after["config"].endswith("640x480")
    assert after["states"] != hit["states"], "the cockpit's state went on"
    assert errors == []
    page.close()
