"""The report a user opens: a real recorded session, the page in real Chromium."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import VelocityCommand, derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.record import (
    BackgroundRecorder,
    Recorder,
    build_report,
    load_run,
    path_limits,
    safety_episodes,
)
from freelook.robot import ServerOptions
from loopback import robot_and_station
from waiting import wait_until_async

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
KEY = derive_key("report page test")


async def _drive_to_the_wall(path: Path) -> None:
    """A station without a map of its own drives straight at 0.35 m/s until the robot's
    safety zones slow it near the lab's wall, then stops."""
    config, world = load_robot("pioneer3dx"), load_world("lab")
    background = BackgroundRecorder(Recorder(path, metadata={"robot": config.name}))
    server, _ = simulated_server(
        config, world, ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False), seed=4
    )
    try:
        async with robot_and_station(
            server,
            lambda address: OperatorStation(config, None, address, key=KEY, recorder=background),
            opened=lambda station: station.core.robot_map,
            what="the robot's map at the station",
        ) as station:
            station.core.attach()
            station.drive_command = VelocityCommand(0.35, 0.0)
            await wait_until_async(
                lambda: (
                    (t := station.telemetry) is not None
                    and t.safety_zone >= 0
                    and t.safety_scale < 0.6
                ),
                25,  # a bound for a run gone wrong, not a timing
                "the robot's safety zones to slow it below 0.6 near the wall",
            )
            await asyncio.sleep(1.0)  # on towards the wall, slowed, for the recording
            station.drive_command = VelocityCommand(0.0, 0.0)
            await asyncio.sleep(0.5)  # and at rest for a moment
    finally:
        background.close()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("report") / "run.mcap"
    asyncio.run(_drive_to_the_wall(path))
    return path


def test_a_straight_path_keeps_its_surroundings_in_view() -> None:
    xs = np.linspace(3.0, 4.5, 50)
    ys = np.full(50, 3.0)  # a straight drive: y spanned 3.0000…3.0000
    x0, x1, y0, y1 = path_limits(xs, ys)
    assert y1 - y0 >= 3.0
    assert y0 < 3.0 < y1
    assert x0 <= 3.0 - 1.0
    assert x1 >= 4.5 + 1.0


def test_the_run_has_what_the_page_shows(recorded: Path) -> None:
    run = load_run(recorded)
    assert run.world is not None  # /map came with the recording
    assert run.world.shape == load_world("lab").shape
    kinds = {e.kind for e in safety_episodes(run)}
    assert "zone" in kinds
    assert len(run.reference) == 0


@pytest.mark.browser
def test_the_report_page_shows_the_map_under_the_path_both_directions_and_no_empty_panel(
    recorded: Path, tmp_path: Path
) -> None:
    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    index = build_report(recorded, tmp_path / "report")
    requests: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": 1200, "height": 900})
            page.on("request", lambda r: requests.append(r.url))
            page.goto(index.as_uri())
            page.wait_for_load_state("load")
            info: dict[str, Any] = page.evaluate(_INSPECT)
        finally:
            browser.close()
    # one file: nothing is fetched but the page itself (images are inline)
    assert [u for u in requests if not u.startswith("data:")] == [index.as_uri()]
    # the path figure is drawn over the robot's map: the lab's walls are in view, dark
    assert info["path_map"] == "360x270 cells"
    assert info["path_dark_fraction"] > 0.002
    # both directions of the link, with the thesis's columns
    assert info["headers"][:9] == [
        "direction",
        "sent",
        "received",
        "lost",
        "drop %",
        "node failures",
        "operation time [s]",
        "link packets/s (all kinds)",
        "telemetry/s",
    ]
    rows = {row[0]: row for row in info["rows"]}
    assert set(rows) == {"operator → robot", "robot → operator"}
    for row in rows.values():
        sent, received = int(row[1]), int(row[2])
        assert sent >= received > 50
    # no empty panel: every figure has an image that loaded; no trajectory, so no tracking
    assert info["figures"] == ["path", "velocities", "link"]
    assert all(width > 300 for width in info["image_widths"])
    summary = info["summary"]
    assert summary[0].startswith("Drove ")
    assert any("zone" in line for line in summary)
    assert any(line.startswith("Link drop: operator → robot") for line in summary)


_INSPECT = """
() => {
  const path = document.querySelector('figure#path');
  const img = path.querySelector('img');
  const canvas = document.createElement('canvas');
  canvas.width = img.naturalWidth; canvas.height = img.naturalHeight;
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  const data = ctx.getImageData(0, 0, canvas.width, canvas.height).data;
  let dark = 0;
  for (let i = 0; i < data.length; i += 4) {
    // the map's obstacles: a dark neutral grey (text and axes are thin, black)
    const [r, g, b] = [data[i], data[i + 1], data[i + 2]];
    if (r > 20 && r < 60 && Math.abs(r - g) < 4 && Math.abs(g - b) < 4) dark++;
  }
  const table = document.querySelector('#link-table');
  return {
    path_map: path.dataset.map,
    path_dark_fraction: dark / (data.length / 4),
    headers: [...table.querySelectorAll('th')].map((th) => th.textContent.trim()),
    rows: [...table.querySelectorAll('tr[data-direction]')].map(
      (tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent.trim())),
    figures: [...document.querySelectorAll('figure')].map((f) => f.id),
    image_widths: [...document.querySelectorAll('figure img')].map((i) => i.naturalWidth),
    summary: [...document.querySelectorAll('#summary li')].map((li) => li.textContent),
  };
}
"""
