"""The fleet view end to end: ``freelook sim --robots 3 --stations 2`` (robots on the batched
simulator, served over Zenoh on loopback), two cockpits in real Chromium. Each lists the
robots and who controls each; one station switches to the robot the other drives and is
refused, then to a free one, takes it and drives it."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import ANNOUNCED_URL, Sim, free_port, start_sim  # type: ignore[import-not-found]

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
    second = None
    deadline = time.monotonic() + 30
    while second is None and time.monotonic() < deadline:
        found = ANNOUNCED_URL.search(running.process.stdout.readline())
        if found:
            second = found.group(1)
    assert second is not None, "the second station's cockpit was not announced"
    yield running, second
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


def wait_until(condition: Any, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


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
    assert wait_until(lambda: rows(first).get("robot-1", {}).get("control") == "you")
    assert wait_until(lambda: rows(second).get("robot-2", {}).get("control") == "you")
    assert wait_until(lambda: rows(first)["robot-2"]["control"] == "station 2")
    listed = rows(first)
    assert sorted(listed) == ["robot-1", "robot-2", "robot-3"]
    assert listed["robot-1"]["button"] == "driving"
    assert listed["robot-3"]["control"] == "free"

    # the fleet's robots have no camera: the view says so, and why
    assert wait_until(lambda: first.locator("#camera-note").is_visible())
    assert "no camera" in first.inner_text("#camera-note")
    assert "robot-1" in first.inner_text("#camera-note")

    # station 1 picks robot-2, which station 2 holds: the robot refuses it, and neither the
    # title nor the button says station 1 drives it
    first.click("#fleet tr[data-robot='robot-2'] button")
    assert wait_until(lambda: "refused you" in rows(first)["robot-2"]["control"])
    assert rows(first)["robot-2"]["button"] == "refused"
    title = first.inner_text("#fleet-title").lower()
    assert "drives" not in title
    assert "robot-2 refused (station 2 holds it)" in title
    assert wait_until(lambda: rows(first)["robot-1"]["control"] == "free")  # let go of it
    assert rows(second)["robot-2"]["control"] == "you"
    first.keyboard.press("ArrowUp")
    time.sleep(1.0)
    assert rows(second)["robot-2"]["speed"] == "0.00 m/s"  # the refused station moved nothing

    # then robot-3, which nobody holds: granted, and the arrow keys drive it
    first.click("#fleet tr[data-robot='robot-3'] button")
    assert wait_until(lambda: rows(first)["robot-3"]["control"] == "you")
    assert wait_until(lambda: rows(first)["robot-3"]["button"] == "driving")
    assert first.inner_text("#fleet-title").lower() == "fleet · station 1 drives robot-3"
    assert wait_until(lambda: first.evaluate("window.freelook.hello.fleet.selected") == "robot-3")
    for _ in range(10):
        first.keyboard.press("ArrowUp")
    assert wait_until(lambda: rows(second)["robot-3"]["speed"] not in ("-", "0.00 m/s"))
    assert rows(second)["robot-3"]["control"] == "station 1"
    first.keyboard.press("Space")
    first.screenshot(path=str(tmp_path / "fleet.png"))
    assert errors == []
    assert errors_2 == []
    first.close()
    second.close()
