"""The camera's picture moved to the prediction, through a link of real delay: ``freelook sim
--link-delay 0.5 --link-jitter 0.1`` (each way), real Chromium, Free Look, Q held (the camera
turns left in place). The picture on the page is warped from where it was taken to where the
camera is when a command sent now lands: the turn shows on it at once, while the robot's report
(and so the raw picture) has not moved, and each new prediction is on it in the first animation
frame after it came. V shows the raw frame, V again the predicted view."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]

pytestmark = pytest.mark.browser

DELAY = 0.5
JITTER = 0.1
#: every animation frame: the states taken so far, and the warp's state, view and turn as drawn
FRAMES = """
window.__frames = [];
const look = () => {
  const f = window.freelook, c = document.getElementById('camera');
  if (f && c) window.__frames.push([f.states, Number(c.dataset.warpState), c.dataset.view || '',
    Number(c.dataset.warpYaw)]);
  requestAnimationFrame(look);
};
requestAnimationFrame(look);
"""
LOOK = """() => {
  const f = window.freelook, s = f.last, c = document.getElementById('camera');
  return { heading: s.pose.theta + (s.pan || 0), view: c.dataset.view,
    yaw: Number(c.dataset.warpYaw), lead: Number(c.dataset.warpLead) };
}"""


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(
        tmp_path_factory.mktemp("reprojected"),
        "--link-delay",
        str(DELAY),
        "--link-jitter",
        str(JITTER),
    )
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def late_frames(frames: list[list[Any]]) -> list[tuple[list[Any], list[Any]]]:
    """Each pair of successive animation frames, in the predicted view, where the second drew
    a warp older than the newest state the first had seen."""
    return [
        (a, b) for a, b in itertools.pairwise(frames) if a[2] == b[2] == "predicted" and b[1] < a[0]
    ]


def test_a_free_look_turn_turns_the_reprojected_view_at_once(browser: Any, shaped: Sim) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.add_init_script(FRAMES)
        page.goto(shaped.url)
        page.wait_for_function(
            "() => { const s = window.freelook && window.freelook.last;"
            " return !!(s && s.prediction) && window.freelook.framesPainted > 5"
            " && document.getElementById('camera').dataset.view === 'predicted'; }",
            polling=100,
            timeout=90_000,
        )
        page.click("[data-mode=free_look]")
        page.wait_for_timeout(1000)
        page.keyboard.down("KeyE")  # a first short turn, settled (as test_predicted_turn.py)
        page.wait_for_timeout(300)
        page.keyboard.up("KeyE")
        page.wait_for_timeout(2500)
        before = page.evaluate(LOOK)
        assert abs(before["yaw"]) < math.radians(2.0), before  # at rest: the picture as taken
        page.evaluate("window.__frames.length = 0")
        down = time.monotonic()
        page.keyboard.down("KeyQ")
        looks = []
        while time.monotonic() - down < 0.8:
            look = page.evaluate(LOOK)
            look["since"] = time.monotonic() - down
            looks.append(look)
            page.wait_for_timeout(30)
        page.keyboard.up("KeyQ")
        frames = page.evaluate("window.__frames.slice()")
        turned = [
            g
            for g in looks
            if math.degrees(g["yaw"]) >= 5.0
            and abs(math.degrees(g["heading"] - before["heading"])) < 1.0
        ]
        assert turned, looks  # the view turned left while the report (the raw picture) has not
        first = min(g["since"] for g in turned)
        assert 0.4 <= turned[0]["lead"] <= 1.5, turned[0]
        # every state's prediction is on the picture in the first animation frame after it came
        assert len(frames) > 10, frames
        assert late_frames(frames) == [], late_frames(frames)[:5]
        assert sum(1 for a, b in itertools.pairwise(frames) if b[3] != a[3]) > 3
        print(f"turned 5 deg {first:.2f} s after Q, {len(frames)} frames, none late")
        # V: the raw frame, shown as such; V again: the predicted view
        page.keyboard.press("KeyV")
        page.wait_for_function(
            "document.getElementById('camera').dataset.view === 'raw'", timeout=2000
        )
        assert page.evaluate("window.freelook.warp") is None
        page.keyboard.press("KeyV")
        page.wait_for_function(
            "document.getElementById('camera').dataset.view === 'predicted'", timeout=2000
        )
    finally:
        page.close()
