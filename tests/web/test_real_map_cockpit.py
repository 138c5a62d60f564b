"""``freelook sim`` on an ARIA map with no RobotHome and its origin on a wall: it starts
without ``--start``, and the cockpit's map shows the map's places and keep-out areas."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_cockpit import open_cockpit, screenshot_path  # type: ignore[import-not-found]

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from waiting import wait_until

pytestmark = pytest.mark.browser

OFFICE = """2D-Map
LineMinPos: 0 0
LineMaxPos: 9000 6000
Cairn: Goal 7000 4500 0.000000 "" ICON "Printer"
Cairn: DockWithHeading 1000 5000 90 "" ICON "Charger"
Cairn: ForbiddenArea 0 0 0.000000 "" ICON "Stairs" 6000 500 8500 2000
Cairn: ForbiddenLine 4000 0 0.000000 "" ICON "" 4500 3500 4500 6000
LINES
0 0 9000 0
9000 0 9000 6000
9000 6000 0 6000
0 6000 0 0
4500 0 4500 2500
"""


@pytest.fixture(scope="module")
def office_sim(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    folder = tmp_path_factory.mktemp("office")
    path = folder / "office.map"
    path.write_text(OFFICE.replace("Cairn: DockWithHeading", "Cairn: Goal"))
    running = start_sim(folder, "--world", str(path))
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def test_the_cockpit_map_shows_places_and_keep_out_areas(
    browser: Any, office_sim: Sim, tmp_path: Path
) -> None:
    page, errors = open_cockpit(browser, office_sim)
    wait_until(lambda: page.evaluate("window.freelook.framesPainted") > 5, 20, "frames painted")
    places = page.evaluate("window.freelook.hello.map.places.map(p => p.name)")
    assert sorted(places) == ["Charger", "Printer"]
    kinds = page.evaluate("window.freelook.hello.map.keep_out.map(k => k.kind)")
    assert sorted(kinds) == ["area", "line"]
    pose = page.evaluate("window.freelook.last.pose")
    assert 0.4 < pose["x"] < 4.1  # the free place nearest the origin, inside
    assert 0.4 < pose["y"] < 5.6
    page.screenshot(path=screenshot_path(tmp_path, "cockpit-real-map.png"))
    assert errors == []
    page.close()
