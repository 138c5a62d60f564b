"""The fleet view end to end: ``freelook sim --robots 3 --stations 2`` (robots on the batched
simulator, served over Zenoh on loopback), two cockpits in real Chromium. Each lists the
robots and who controls each; one station switches to the robot the other drives and is
refused, then to a free one, takes it and drives it."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from conftest import ANNOUNCED_URL, Sim, free_port, start_sim  # type: ignore[import-not-found]
from waiting import wait_until as _wait_until

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def fleet(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Sim, str]]:
    running = start_sim(
        tmp_path_factory.mktemp("fleet"),
        "--robots",
        "3",
        "--stations",
        "2",
        "--zenoh",
        f"127.0.0.1:{free_port()}",
    )
    assert running.process.stdout is not None

    def announced() -> re.Match[str] | None:
        """The second station's announcement: the second URL the sim said."""
        urls = [found for found in map(ANNOUNCED_URL.search, list(running.lines)) if found]
        return urls[1] if len(urls) > 1 else None

    second = _wait_until(  # the sim's output is read on a thread (conftest's Sim.follow)
        announced,
        30,
        "the second station's cockpit announced",
        every=0.05,
        show=lambda: running.said()[-5:],
    )
    yield running, second.group(1)
    running.stop()
    running.process.stdout.close()


def rows(page: Any) -> dict[str, dict[str, str]]:
    """The fleet list as the page shows it: robot → its cells."""
    return page.evaluate(  # type: ignore[no-any-return]
        """() => Object.fromEntries([...document.querySelectorAll('#fleet tr')].map((tr) => [
            tr.dataset.robot,
            {mode: tr.children[1].textContent, speed: tr.children[2].textContent,
             control: tr.children[3].textContent, button: tr.children[4].textContent}]))"""
    )


#: the shared wait (it raises naming what it waited for), looking at the pages every 100 ms
wait_until = partial(_wait_until, every=0.1)


def open_page(browser: Any, url: str) -> tuple[Any, list[str]]:
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(url)
    page.wait_for_function(
        "window.freelook.fleet && window.freelook.fleet.last && "
        "window.freelook.fleet.last.robots.length === 3",
        timeout=30_000,
    )
    return page, errors


def test_fleet_list_and_switching_robot(
    browser: Any, fleet: tuple[Sim, str], tmp_path: Path
) -> None:
    sim, second_url = fleet
    first, errors = open_page(browser, sim.url)
    second, errors_2 = open_page(browser, second_url)
    # each station drives its own robot at the start and the list says who controls which
    wait_until(
        lambda: rows(first).get("robot-1", {}).get("control") == "you",
        15,
        "station 1's list: robot-1 under its control",
    )
    wait_until(
        lambda: rows(second).get("robot-2", {}).get("control") == "you",
        15,
        "station 2's list: robot-2 under its control",
    )
    wait_until(
        lambda: rows(first)["robot-2"]["control"] == "station 2",
        15,
        "station 1's list: robot-2 under station 2",
    )
    listed = rows(first)
    assert sorted(listed) == ["robot-1", "robot-2", "robot-3"]
    assert listed["robot-1"]["button"] == "driving"
    assert listed["robot-3"]["control"] == "free"

    # the fleet's robots have no camera: the view says so, and why
    wait_until(
        lambda: first.locator("#camera-note").is_visible(),
        15,
        "the note that the robot has no camera",
    )
    assert "no camera" in first.inner_text("#camera-note")
    assert "robot-1" in first.inner_text("#camera-note")

    # station 1 picks robot-2, which station 2 holds: the robot refuses it, and neither the
    # title nor the button says station 1 drives it
    first.click("#fleet tr[data-robot='robot-2'] button")
    wait_until(
        lambda: "refused you" in rows(first)["robot-2"]["control"],
        15,
        "station 1's list: robot-2 refused it",
    )
    assert rows(first)["robot-2"]["button"] == "refused"
    title = first.inner_text("#fleet-title").lower()
    assert "drives" not in title
    assert "robot-2 refused (station 2 holds it)" in title
    wait_until(
        lambda: rows(first)["robot-1"]["control"] == "free", 15, "station 1 to let go of robot-1"
    )
    assert rows(second)["robot-2"]["control"] == "you"
    first.keyboard.press("ArrowUp")
    time.sleep(1.0)  # time for the key to move robot-2, were it obeyed
    assert rows(second)["robot-2"]["speed"] == "0.00 m/s"  # the refused station moved nothing

    # then robot-3, which nobody holds: granted, and the arrow keys drive it
    first.click("#fleet tr[data-robot='robot-3'] button")
    wait_until(
        lambda: rows(first)["robot-3"]["control"] == "you",
        15,
        "station 1's list: robot-3 under its control",
    )
    wait_until(
        lambda: rows(first)["robot-3"]["button"] == "driving",
        15,
        "station 1's list: driving robot-3",
    )
    assert first.inner_text("#fleet-title").lower() == "fleet · station 1 drives robot-3"
    wait_until(
        lambda: first.evaluate("window.freelook.hello.fleet.selected") == "robot-3",
        15,
        "station 1's page: robot-3 selected",
    )
    for _ in range(10):
        first.keyboard.press("ArrowUp")
    wait_until(
        lambda: rows(second)["robot-3"]["speed"] not in ("-", "0.00 m/s"),
        15,
        "station 2's list: robot-3 moving",
    )
    assert rows(second)["robot-3"]["control"] == "station 1"
    first.keyboard.press("Space")
    first.screenshot(path=str(tmp_path / "fleet.png"))
    assert errors == []
    assert errors_2 == []
    first.close()
    second.close()
