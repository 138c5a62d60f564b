"""The cockpit shows how old its camera picture is, through a link of real delay: ``freelook sim
--link-delay 0.5 --link-jitter 0.1`` (each way), real Chromium. The robot stamps each frame
with its capture on its own clock; the page ages it with the station's estimate of that clock
(the session's own exchanges) and the station's clock from its states, never its own wall
clock. On one machine the robot's clock is this wall clock, so the truth is known: the wall
clock at the paint minus the capture stamp. Every painted frame sampled is shown within 50 ms
of it, and the truth is at least the link's delay (the shaping holds)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from freelook.config import load_robot

pytestmark = pytest.mark.browser

DELAY = 0.5
JITTER = 0.1
#: s: the slowest round trip the robot's delay rule believes (its max_round_trip)
SLOWEST_TRIP = load_robot("pioneer3dx").safety.delay_speed.max_round_trip


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(
        tmp_path_factory.mktemp("shaped"),
        "--link-delay",
        str(DELAY),
        "--link-jitter",
        str(JITTER),
    )
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def test_frame_age_is_shown_within_50_ms_of_the_truth(browser: Any, shaped: Sim) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(shaped.url)
        page.wait_for_function(
            "window.freelook && window.freelook.frame && window.freelook.frame.age !== null",
            polling=100,
            timeout=60_000,
        )
        samples: list[dict[str, float]] = []
        seen: set[float] = set()
        deadline = time.monotonic() + 30
        while len(samples) < 20 and time.monotonic() < deadline:
            frame = page.evaluate("() => window.freelook.frame")
            if frame["age"] is not None and frame["stamp"] not in seen:
                seen.add(frame["stamp"])
                samples.append(frame)
            page.wait_for_timeout(150)
        assert len(samples) >= 20, samples
        errors = [s["age"] - (s["paintedWall"] - s["stamp"]) for s in samples]
        truths = [s["paintedWall"] - s["stamp"] for s in samples]
        assert max(abs(e) for e in errors) <= 0.05, (errors, truths)
        assert min(truths) >= DELAY, truths
        chip = page.text_content("#delay-chip") or ""
        assert chip.startswith("frame age "), chip
        rtt = page.evaluate("() => window.freelook.last.clock.rtt")
        # no shorter than the shaping, below the slowest trip the robot believes (scheduling on
        # a busy machine adds to it)
        assert 2 * DELAY <= rtt < SLOWEST_TRIP, rtt
    finally:
        page.close()


def test_the_delay_graph_draws_the_frame_age_and_the_round_trip(browser: Any, shaped: Sim) -> None:
    """The cockpit's small graph of the two (panels.js's drawing, as the link graph's): its
    points follow the chip's numbers through the shaped link, and both lines are on its canvas
    in their colours."""
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(shaped.url)
        page.wait_for_function(
            "window.freelook && window.freelook.delayGraph"
            " && window.freelook.delayGraph.filter((p) => p[1] === p[1]).length >= 10",
            polling=100,
            timeout=60_000,
        )
        points = page.evaluate("() => window.freelook.delayGraph")
        ages = [p[1] for p in points if p[1] == p[1]]  # NaN: not known yet
        trips = [p[2] for p in points if p[2] == p[2]]
        assert min(ages) >= DELAY - 0.05, ages
        gaps = [b[0] - a[0] for a, b in itertools.pairwise(points)]
        assert min(gaps) >= 199, gaps  # five points a second, not one per state
        assert min(trips) >= 2 * DELAY, trips
        assert max(trips) < SLOWEST_TRIP, trips
        scale = page.evaluate("() => window.freelook.delayScale")
        assert max(max(ages), max(trips)) < scale <= 1.1 * max(max(ages), max(trips)) + 1e-9
        colours = page.evaluate(
            """() => {
              const c = document.getElementById("delay-graph");
              const d = c.getContext("2d").getImageData(0, 12, c.width, c.height - 12).data;
              const age = new Set(), trip = new Set();  // the columns each colour is in
              for (let i = 0; i < d.length; i += 4) {
                const [r, g, b] = [d[i], d[i + 1], d[i + 2]], x = (i / 4) % c.width;
                if (r > 150 && g > 110 && b < 110) age.add(x);  // #e0b040
                if (b > 150 && r < 130) trip.add(x);  // #4aa3ff
              }
              return [age.size, trip.size];
            }"""
        )
        # each line spans (most of) the columns its known points cover: 300 px for 30 s
        width = page.evaluate("() => document.getElementById('delay-graph').width")
        for column, drawn in zip((1, 2), colours, strict=True):
            known = [p[0] for p in points if p[column] == p[column]]
            span = (known[-1] - known[0]) / 30_000 * width
            assert drawn >= 0.8 * span, (column, colours, span)
    finally:
        page.close()


def test_the_page_shows_no_age_before_it_knows_the_clock() -> None:
    """The chip's numbers come from freshness.js; its empty state is a dash (tests/js)."""
    source = Path("src/freelook/web/static/index.html").read_text()
    assert 'id="delay-chip"' in source
