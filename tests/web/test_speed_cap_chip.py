"""The cockpit's speed cap chip through a link of real delay: ``freelook sim --link-delay 0.5
--link-jitter 0.05`` with a Pioneer whose ``[safety] rules`` name ``delay_speed``, real
Chromium. The robot measures the round trip from the station's echoes itself; the chip shows
its cap and that round trip, and the cap is what the robot can stop from within the seen range
at it."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from freelook.config import load_robot
from freelook.safety import delay_speed_cap

pytestmark = pytest.mark.browser

DELAY = 0.5
JITTER = 0.05
SEEN = 3.0
ROBOTS = Path(__file__).parents[2] / "src" / "freelook" / "config" / "robots"


@pytest.fixture(scope="module")
def capped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    folder = tmp_path_factory.mktemp("capped")
    text = (ROBOTS / "pioneer3dx.toml").read_text(encoding="utf-8")
    watchdog = "watchdog_timeout = 0.5\n"
    assert text.count(watchdog) == 1
    rules = '"hardware", "estop", "watchdog", "bumper", "zone", "approach", "delay_speed"'
    delay = f"rules = [{rules}]\n\n[safety.delay_speed]\nseen_range = {SEEN}\n"
    robot = folder / "pioneer-delay.toml"
    robot.write_text(text.replace(watchdog, watchdog + delay), encoding="utf-8")
    running = start_sim(
        folder,
        "--robot",
        str(robot),
        "--link-delay",
        str(DELAY),
        "--link-jitter",
        str(JITTER),
    )
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def test_the_chip_shows_the_robot_s_cap_at_the_round_trip_it_measured(
    browser: Any, capped: Sim
) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(capped.url)
        # the robot's own round trip, once the station's echoes came back (not the slowest)
        page.wait_for_function(
            "() => { const s = window.freelook && window.freelook.last;"
            " const c = s && s.safety && s.safety.speed_cap;"
            " return !!c && c.rtt > 0 && c.rtt < 1.9; }",
            polling=100,
            timeout=90_000,
        )
        page.wait_for_timeout(2000)  # a window's worth of round trips
        # the chip and the state it was written from, read together
        chip, told = page.evaluate(
            "() => [document.getElementById('speed-cap-chip').textContent,"
            " window.freelook.last.safety.speed_cap]"
        )
        assert page.is_visible("#speed-cap-chip"), chip
        found = re.fullmatch(r"speed cap (\d+\.\d\d) m/s \(round trip (\d+\.\d) s\)", chip)
        assert found is not None, chip
        # the robot's measure (0.5 s each way, up to 0.05 s jitter each): no shorter than the
        # shaping, below the slowest trip the robot believes (scheduling on a busy machine adds
        # to it); the cap is judged against the trip told, below
        config = load_robot("pioneer3dx")
        slowest_trip = config.safety.delay_speed.max_round_trip
        assert 2 * DELAY <= told["rtt"] < slowest_trip, told
        assert abs(float(found[2]) - told["rtt"]) <= 0.05 + 1e-9, (chip, told)
        # within what the robot can stop from at that round trip in the seen range, and more
        # than the slowest cap (a 2 s round trip); the cap of a standing robot looks forward
        drive = config.drive
        most = delay_speed_cap(SEEN - 0.1, told["rtt"], 0.04, drive.max_deceleration)
        slowest = delay_speed_cap(SEEN - 0.1, slowest_trip, 0.04, drive.max_deceleration)
        assert 0.0 <= told["cap"] <= most + 1e-6, (told, most)
        assert abs(float(found[1]) - told["cap"]) <= 0.005 + 1e-9, (chip, told)
        if told["cap"] > 0.5 * most:  # open floor ahead: the seen range counts
            assert told["cap"] > slowest, (told, slowest)
    finally:
        page.close()
