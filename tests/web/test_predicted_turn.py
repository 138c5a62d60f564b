"""Free Look through a link of real delay, the prediction by the camera-centred law: ``freelook
sim --link-delay 0.5 --link-jitter 0.1`` (each way), real Chromium, Q held (the camera turns left
in place). The robot's report shows the turn only a round trip after the key went down; the
station's prediction of where the camera looks when a command sent now lands (and the page's
reticle on the picture) turns at once, the camera staying where it is, and says the heading the
robot later reports for that moment."""

from __future__ import annotations

import itertools
import math
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from waiting import wait_until

pytestmark = pytest.mark.browser

DELAY = 0.5
JITTER = 0.1
#: the predicted camera when a command sent now lands, the report, the reticle as drawn
LOOK = """() => {
  const s = window.freelook.last, p = s && s.prediction;
  if (!p) return null;
  return { arrival: p.arrival, pan: p.arrival_pan, report: { t: s.t, pan: s.pan, ...s.pose },
    reticle: window.freelook.reticle };
}"""


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(
        tmp_path_factory.mktemp("turn"),
        "--link-delay",
        str(DELAY),
        "--link-jitter",
        str(JITTER),
    )
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def wrap(a: float) -> float:
    return math.atan2(math.sin(a), math.cos(a))


def camera(pose: dict[str, float], pan: float, mount: float) -> tuple[float, float, float]:
    """The camera's position and heading (the Pioneer's pan-tilt sits ``mount`` m ahead)."""
    theta = pose["theta"]
    return pose["x"] + mount * math.cos(theta), pose["y"] + mount * math.sin(theta), theta + pan


def reported_heading(poses: list[dict[str, float]], t: float) -> float | None:
    """The camera heading the robot reported for ``t`` (robot clock), between two reports."""
    for a, b in itertools.pairwise(poses):
        if a["t"] <= t <= b["t"] and b["t"] > a["t"]:
            f = (t - a["t"]) / (b["t"] - a["t"])
            start = a["theta"] + a["pan"]
            return start + f * wrap(b["theta"] + b["pan"] - start)
    return None


def test_a_free_look_turn_turns_the_predicted_view_at_once(browser: Any, shaped: Sim) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(shaped.url)
        page.wait_for_function(
            "() => { const s = window.freelook && window.freelook.last;"
            " return !!(s && s.prediction) && window.freelook.framesPainted > 5; }",
            polling=100,
            timeout=90_000,
        )
        mount = page.evaluate("window.freelook.hello.robot.camera_mount[0]")
        page.click("[data-mode=free_look]")
        page.wait_for_timeout(1000)
        # a first short turn the other way, settled: the robot's first Free Look cycles (and a
        # busy machine's stall in them) are behind it when the turn measured starts
        page.keyboard.down("KeyE")
        page.wait_for_timeout(300)
        page.keyboard.up("KeyE")
        page.wait_for_timeout(2500)
        before = page.evaluate(LOOK)
        start = camera(before["arrival"], before["pan"], mount)
        seen = camera(before["report"], before["report"]["pan"], mount)
        down = time.monotonic()
        page.keyboard.down("KeyQ")
        looks = []
        while time.monotonic() - down < 3.0:
            if time.monotonic() - down > 1.5:
                page.keyboard.up("KeyQ")
            look = page.evaluate(LOOK)
            look["since"] = time.monotonic() - down
            looks.append(look)
            page.wait_for_timeout(50)
        last = looks[-1]["arrival"]["t"]
        wait_until(
            lambda: page.evaluate("window.freelook.poses.at(-1).t") > last + 0.1,
            5,
            "the robot's reports of the last prediction's moment",
        )
        poses = page.evaluate("window.freelook.poses")
        # at once: the predicted view turned left while the report has not moved yet
        early = [g for g in looks if g["since"] < 0.8]
        turned = [
            g
            for g in early
            if math.degrees(wrap(camera(g["arrival"], g["pan"], mount)[2] - start[2])) >= 5.0
            and abs(math.degrees(wrap(camera(g["report"], g["report"]["pan"], mount)[2] - seen[2])))
            < 1.0
        ]
        assert turned, early
        assert before["reticle"] is not None
        assert any(g["reticle"] and g["reticle"][0] < before["reticle"][0] - 40 for g in early), (
            before["reticle"],
            [g["reticle"] for g in early],
        )
        off = []
        for g in looks:
            x, y, psi = camera(g["arrival"], g["pan"], mount)
            # the camera-centred law: the camera turns in place
            assert math.hypot(x - start[0], y - start[1]) <= 0.03, g
            truth = reported_heading(poses, g["arrival"]["t"])
            assert truth is not None, g
            off.append(abs(math.degrees(wrap(psi - truth))))
        final = camera(looks[-1]["report"], looks[-1]["report"]["pan"], mount)[2]
        assert math.degrees(wrap(final - seen[2])) > 30.0  # the robot did turn
        # a command lands up to the jitter (0.1 s) and a robot cycle (0.02 s) from the moment
        # the prediction takes, and a busy machine's scheduling of the page, the station, the
        # shaped link and the robot adds to that (5.3° seen alone, 13.2° beside a second test
        # worker): at the limits' 50 °/s, within the jitter, a cycle and 0.25 s more, 18.5°
        # (a wrong-signed or missing prediction is off by the whole turn, over 30°; its
        # accuracy on a known lateness is test_motion_prediction.py's, in lock-step)
        assert max(off) <= 50.0 * (JITTER + 0.02 + 0.25), off
    finally:
        page.close()
