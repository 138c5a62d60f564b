"""The path the robot is committed to, drawn on the camera's picture through a link of real
delay: ``freelook sim --link-delay 0.5 --link-jitter 0.1``, real Chromium, Free Look with the
camera tilted down (F) and W held. The station's predicted path, projected with the pose each
picture was taken from, lies on the picture straight ahead (the picture's middle column),
farther points higher, drawn in the prediction's colour; the reticle of the predicted view is
on the picture too. On the raw frame (V): in the predicted view the picture is moved ahead to
where the camera is when a command sent now lands, and the committed path is behind it
(test_reprojected_view.py)."""

from __future__ import annotations

import itertools
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]

pytestmark = pytest.mark.browser

#: the page's path on its newest picture, its reticle, and the colour under each path point
LOOK = """() => {
  const f = window.freelook, c = document.getElementById("camera");
  const ctx = c.getContext("2d", { willReadFrequently: true });
  const cyan = f.pathOnCamera.map(([u, v]) => {
    const x = Math.max(0, Math.round(u) - 2), y = Math.max(0, Math.round(v) - 2);
    const d = ctx.getImageData(x, y, 5, 5).data;
    for (let i = 0; i < d.length; i += 4) {
      if (d[i] < 150 && d[i + 1] > 170 && d[i + 2] > 200) return true;
    }
    return false;
  });
  return { path: f.pathOnCamera, cyan, reticle: f.reticle, width: c.width, height: c.height,
    v: f.last.v, tilt: f.last.tilt };
}"""


@pytest.fixture(scope="module")
def shaped(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(
        tmp_path_factory.mktemp("path"), "--link-delay", "0.5", "--link-jitter", "0.1"
    )
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def test_the_committed_path_lies_straight_ahead_on_the_picture(browser: Any, shaped: Sim) -> None:
    page = browser.new_page(viewport={"width": 1400, "height": 900})
    try:
        page.goto(shaped.url)
        page.wait_for_function(
            "() => { const f = window.freelook; return !!(f && f.last && f.last.prediction)"
            " && f.framesPainted > 5; }",
            polling=100,
            timeout=90_000,
        )
        page.click("[data-mode=free_look]")
        page.keyboard.press("KeyV")  # the raw frame
        page.wait_for_function("document.getElementById('camera').dataset.view === 'raw'")
        page.wait_for_timeout(1000)
        page.keyboard.down("KeyF")  # the camera down to its limit, to see the ground ahead
        page.wait_for_timeout(1500)
        page.keyboard.up("KeyF")
        page.wait_for_timeout(1500)
        page.keyboard.down("KeyW")
        page.wait_for_timeout(1500)  # at speed
        looks = []
        started = time.monotonic()
        while time.monotonic() - started < 2.0:
            looks.append(page.evaluate(LOOK))
            page.wait_for_timeout(100)
        page.keyboard.up("KeyW")
        assert looks[0]["tilt"] < -0.3, looks[0]
        drawn = [g for g in looks if len(g["path"]) >= 3]
        assert len(drawn) >= 0.8 * len(looks), looks
        for g in drawn:
            middle = g["width"] / 2
            assert all(abs(u - middle) <= 0.1 * g["width"] for u, _ in g["path"]), g
            rows = [v for _, v in g["path"]]
            assert all(b < a for a, b in itertools.pairwise(rows)), g  # farther, higher
            assert sum(g["cyan"]) >= 0.5 * len(g["cyan"]), g  # drawn there (dashes leave gaps)
            u, v = g["reticle"]
            assert 0 <= u < g["width"], g
            assert 0 <= v < g["height"], g
    finally:
        page.close()
