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
from collections.abc import Callable, Iterator
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


def _free_look_at_rest(browser: Any, shaped: Sim) -> Any:
    """A page in Free Look in the predicted view, after a first short turn has settled."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
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
    return page


def _turned_at_once(page: Any, turn: Callable[[float], None], how: str) -> None:
    """``turn(since)`` every 30 ms for 0.8 s turns the camera left: the predicted view turns
    5° while the report (the raw picture) has not, and every state's prediction is on the
    picture in the first animation frame after it came."""
    before = page.evaluate(LOOK)
    assert abs(before["yaw"]) < math.radians(2.0), before  # at rest: the picture as taken
    page.evaluate("window.__frames.length = 0")
    down = time.monotonic()
    looks = []
    while time.monotonic() - down < 0.8:
        turn(time.monotonic() - down)
        look = page.evaluate(LOOK)
        look["since"] = time.monotonic() - down
        looks.append(look)
        page.wait_for_timeout(30)
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
    assert len(frames) > 3, frames  # enough pairs to judge (the page's rate is the bench's)
    assert late_frames(frames) == [], late_frames(frames)[:5]
    assert sum(1 for a, b in itertools.pairwise(frames) if b[3] != a[3]) > 3
    print(f"turned 5 deg {first:.2f} s after {how}, {len(frames)} frames, none late")


def test_a_free_look_turn_turns_the_reprojected_view_at_once(browser: Any, shaped: Sim) -> None:
    page = _free_look_at_rest(browser, shaped)
    try:
        page.keyboard.down("KeyQ")
        _turned_at_once(page, lambda since: None, "Q")
        page.keyboard.up("KeyQ")
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


def test_a_turn_of_the_mouse_turns_the_reprojected_view_at_once(browser: Any, shaped: Sim) -> None:
    page = _free_look_at_rest(browser, shaped)
    try:
        box = page.locator("#camera").bounding_box()
        x, y = box["x"] + box["width"] / 2, box["y"] + box["height"] / 2
        # past a 1 s round trip the cockpit offers click-to-go, whose click sends a goal: G
        # declines it, and a click on the picture captures the mouse for Free Look
        if page.evaluate("document.body.classList.contains('goal-armed')"):
            page.keyboard.press("KeyG")
            page.wait_for_function("!document.body.classList.contains('goal-armed')")
        page.mouse.click(x, y)
        page.wait_for_function("document.pointerLockElement === document.getElementById('camera')")
        # the mouse moved left, 25 px every 30 ms (a steady turn to the left)
        _turned_at_once(
            page, lambda since: page.mouse.move(x - 25 * (1 + since / 0.03), y), "the mouse"
        )
    finally:
        page.close()
