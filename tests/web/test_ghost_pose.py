"""The cockpit's ghost (where the station predicts the robot is now) through a link of real
delay: ``freelook sim --link-delay 0.5 --link-jitter 0.1`` (each way), real Chromium, the robot
driven forward in Tank with W held. The ghost's pose is read from the map canvas's data
attributes as the page drew it, with the moment it stands for on the robot's clock; the robot's
reports of that moment arrive a one-way delay later, and the page keeps them
(``window.freelook.poses``): the ghost is held to them. It leads the report it was drawn with by
that report's age (at least the link's delay) and the distance the robot drives in it, and it
lands within 0.1 m of where the robot reports it was at the ghost's moment, where the report
itself is the delay's travel behind."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from waiting import wait_until

pytestmark = pytest.mark.browser

DELAY = 0.5
JITTER = 0.1
#: every ghost the page draws, kept by the page as it draws it: the ghost (the map's data
#: attributes, read as they are set) and the report it was drawn with
RECORD = """() => {
  window.__ghosts = [];
  const map = document.getElementById("map");
  new MutationObserver(() => {
    const d = map.dataset, s = window.freelook.last;
    if (!s || !s.pose || d.ghostT === undefined) return;
    const report = { t: s.t, x: s.pose.x, y: s.pose.y, theta: s.pose.theta, v: s.v,
      rttMin: s.clock ? s.clock.rtt_min : null };
    window.__ghosts.push({ t: Number(d.ghostT), lead: Number(d.ghostLead), x: Number(d.ghostX),
      y: Number(d.ghostY), report });
  }).observe(map, { attributes: true, attributeFilter: ["data-ghost-t"] });
}"""


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(
        tmp_path_factory.mktemp("ghost"),
        "--link-delay",
        str(DELAY),
        "--link-jitter",
        str(JITTER),
    )
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def reported_at(poses: list[dict[str, float]], t: float) -> tuple[float, float] | None:
    """The robot's reported position at ``t`` (robot clock), between the two reports around it."""
    for a, b in itertools.pairwise(poses):
        if a["t"] <= t <= b["t"] and b["t"] > a["t"]:
            f = (t - a["t"]) / (b["t"] - a["t"])
            return a["x"] + f * (b["x"] - a["x"]), a["y"] + f * (b["y"] - a["y"])
    return None


def test_the_ghost_leads_the_report_by_the_delay_and_lands_where_the_robot_was(
    browser: Any, shaped: Sim
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(shaped.url)
        page.wait_for_function(  # the robot's clock known: the station predicts
            "() => { const s = window.freelook && window.freelook.last;"
            " return !!(s && s.prediction); }",
            polling=100,
            timeout=90_000,
        )
        page.evaluate(RECORD)
        page.click("[data-mode=tank]")
        page.keyboard.down("KeyW")
        page.wait_for_timeout(5000)
        page.keyboard.up("KeyW")
        looks: list[dict[str, Any]] = []
        for look in page.evaluate("window.__ghosts"):
            if not looks or look["t"] != looks[-1]["t"]:
                looks.append(look)
        last = looks[-1]["t"]
        wait_until(  # the reports of the last ghost's moment are in
            lambda: page.evaluate("window.freelook.poses.at(-1).t") > last + 0.1,
            5,
            "the robot's reports of the last ghost's moment",
        )
        poses = page.evaluate("window.freelook.poses")
        driving = [g for g in looks if g["report"]["v"] > 0.2]
        assert len(driving) >= 20, looks
        top = max(g["report"]["v"] for g in driving)
        errors, behind, steady = [], [], 0
        for g in driving:
            report = g["report"]
            age = g["t"] - report["t"]  # the ghost's moment after the report's (robot clock)
            # the station's estimate of the robot's clock is off by at most half of what its
            # best exchange took beyond the shaped delay both ways (the shaping is symmetric)
            skew = (report["rttMin"] - 2 * DELAY) / 2 + 0.01
            # at least the link's delay; at most its jitter more, a state's spacing (50 ms) and
            # a busy machine's scheduling
            assert DELAY - skew <= age <= DELAY + JITTER + 0.5 + skew, g
            assert g["lead"] == pytest.approx(age, abs=0.06), g  # the station's now, as sent
            ahead = math.hypot(g["x"] - report["x"], g["y"] - report["y"])
            along = (g["x"] - report["x"]) * math.cos(report["theta"])
            along += (g["y"] - report["y"]) * math.sin(report["theta"])
            assert along > 0.95 * ahead, g  # along the robot's heading
            if report["v"] >= 0.95 * top:  # at speed: ahead by the way it drives in that time
                steady += 1
                assert ahead == pytest.approx(report["v"] * age, abs=0.03), g
            truth = reported_at(poses, g["t"])
            assert truth is not None, (g, poses[0]["t"], poses[-1]["t"])
            errors.append(math.hypot(g["x"] - truth[0], g["y"] - truth[1]))
            behind.append(math.hypot(report["x"] - truth[0], report["y"] - truth[1]))
        assert steady >= 10, driving
        assert max(errors) <= 0.1, errors
        assert min(behind) >= 0.1, behind  # the report alone is the delay's travel off
    finally:
        page.close()


def test_the_ghost_s_module_is_served_with_the_cockpit() -> None:
    """The map draws the ghost with prediction.js (tests/js/prediction.test.js: its projection)."""
    source = Path("src/freelook/web/static/cockpit-map.js").read_text()
    assert 'from "./prediction.js"' in source
