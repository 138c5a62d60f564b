"""The cockpit keeps driving on fresh state in both of Chromium's GPU-less configurations:
software compositing (``--disable-gpu``) and software GL (SwiftShader, as on a machine without
a GPU driver, where the page paints a few frames a second). In each, the first press of W, S,
A and D moves the robot within 0.5 s, their release stops it within 0.5 s and the e-stop key
stops it within 0.3 s; and the page never shows old telemetry as live.

Timed in the page's own clock: a key from the moment the browser took it in (the event's
``timeStamp``, so time the page spent busy before handling it counts) until the page took in
the first state message whose robot command shows the change.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import pytest

from conftest import CHROMIUM  # type: ignore[import-not-found]

pytestmark = pytest.mark.browser

COMMON = [
    "--no-sandbox",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CONFIGURATIONS = {
    "disable-gpu": ["--disable-gpu"],
    "swiftshader": ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
}

# keys as the browser took them in, and each state message as the page took it in
PROBE = """
window.__timing = [];
for (const kind of ['keydown', 'keyup']) {
  window.addEventListener(kind, (e) => {
    if (!e.repeat) window.__timing.push([e.timeStamp, kind, e.code]);
  }, true);
}
"""
# once the cockpit runs: its state handler, wrapped (a global function of its script)
WRAP_ON_STATE = """() => {
  const original = window.onState;
  window.onState = (s) => {
    if (s.cmd) window.__timing.push([performance.now(), 'cmd', s.cmd.v, s.cmd.omega, !!s.estop]);
    return original(s);
  };
}"""


@pytest.fixture(scope="module", params=list(CONFIGURATIONS))
def chromium(request: pytest.FixtureRequest) -> Iterator[Any]:
    from pathlib import Path

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        instance = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=COMMON + CONFIGURATIONS[request.param],
        )
        yield instance
        instance.close()


def open_cockpit(chromium: Any, sim: Any) -> Any:
    page = chromium.new_page(viewport={"width": 1500, "height": 900})
    page.add_init_script(PROBE)
    page.goto(sim.url)
    page.wait_for_function(
        "window.freelook && window.freelook.last && window.freelook.last.pose",
        polling=50,
        timeout=30_000,
    )
    page.evaluate(WRAP_ON_STATE)
    return page


def first_after(events: list[list[Any]], t: float, test: Any) -> float:
    """Seconds from ``t`` until the first state event after it that passes ``test``."""
    hit = next((e[0] for e in events if e[1] == "cmd" and e[0] >= t and test(e)), None)
    return math.inf if hit is None else (hit - t) / 1e3


def key_delays(timing: list[list[Any]]) -> dict[str, tuple[float, float]]:
    """Per key: (down → robot moving the way the key asks, up → robot stopped), in s."""
    moving = {
        "KeyW": lambda e: e[2] > 1e-3,
        "KeyS": lambda e: e[2] < -1e-3,
        "KeyA": lambda e: abs(e[2]) + abs(e[3]) > 1e-3,
        "KeyD": lambda e: abs(e[2]) + abs(e[3]) > 1e-3,
    }
    out: dict[str, tuple[float, float]] = {}
    for index, (t, kind, code, *_) in enumerate(timing):
        if kind != "keydown" or code not in moving or code in out:
            continue  # the first press of each key
        up = next(e[0] for e in timing[index:] if e[1] == "keyup" and e[2] == code)
        went = first_after(timing, t, moving[code])
        out[code] = (
            went if t + went * 1e3 <= up else math.inf,
            first_after(timing, up, lambda e: abs(e[2]) + abs(e[3]) < 1e-3),
        )
    return out


def test_keys_move_and_stop_at_once_and_the_estop_key_stops(chromium: Any, sim: Any) -> None:
    page = open_cockpit(chromium, sim)
    page.click("[data-mode=free_look]")
    time.sleep(1.0)  # the camera streams: the renderer is as busy as it gets
    for key in ("KeyW", "KeyS", "KeyA", "KeyD"):
        page.keyboard.down(key)
        time.sleep(0.8)
        page.keyboard.up(key)
        time.sleep(0.6)
    # the e-stop key while W is held
    page.keyboard.down("KeyW")
    time.sleep(0.8)
    page.keyboard.down("Space")
    time.sleep(0.6)
    page.keyboard.up("Space")
    page.keyboard.up("KeyW")
    timing = page.evaluate("window.__timing")
    delays = key_delays(timing)
    assert set(delays) == {"KeyW", "KeyS", "KeyA", "KeyD"}
    for key, (went, stopped) in delays.items():
        assert went <= 0.5, f"{key}: the robot moved {went:.2f} s after the key went down"
        assert stopped <= 0.5, f"{key}: the robot stopped {stopped:.2f} s after release"
    space = next(e[0] for e in timing if e[1] == "keydown" and e[2] == "Space")
    stopped = first_after(timing, space, lambda e: abs(e[2]) + abs(e[3]) < 1e-3 and e[4])
    assert stopped <= 0.3, f"the e-stop key stopped the robot {stopped:.2f} s after it went down"
    page.click("#estop")  # released by its button, for the tests after
    page.wait_for_function("!window.freelook.last.estop", polling=50, timeout=5_000)
    page.close()


def test_old_telemetry_is_shown_stale_not_live(chromium: Any, sim: Any) -> None:
    page = open_cockpit(chromium, sim)
    page.wait_for_function(
        "document.getElementById('link-state').textContent === 'link: up'", polling=50
    )
    assert page.evaluate("document.body.classList.contains('stale')") is False
    page.click("#rtx-toggle")  # the robot stops transmitting: its newest report grows old
    try:
        page.wait_for_function(
            "document.body.classList.contains('stale')", polling=50, timeout=5_000
        )
        shown = page.inner_text("#link-state")
        assert shown.startswith(("link: stale", "link: lost")), shown
        assert page.evaluate("document.body.classList.contains('stale')")
        assert page.locator("#camera-pane .stale-badge").is_visible()
    finally:
        page.click("#rtx-toggle")
    page.wait_for_function(
        "document.getElementById('link-state').textContent === 'link: up'",
        polling=50,
        timeout=10_000,
    )
    assert page.evaluate("document.body.classList.contains('stale')") is False
    page.close()


def test_a_page_that_falls_behind_says_so(chromium: Any, sim: Any) -> None:
    page = open_cockpit(chromium, sim)
    assert page.locator("#page-state").is_hidden()
    # the page's own thread busy for 1.5 s, as a slow renderer or a long task would keep it
    page.evaluate(
        "() => { const end = performance.now() + 1500; while (performance.now() < end); }"
    )
    page.wait_for_function(
        "document.getElementById('page-state').textContent.startsWith('page: behind')",
        polling=50,
        timeout=5_000,
    )
    assert page.locator("#page-state").is_visible()
    behind = float(page.inner_text("#page-state").split()[2])
    assert behind >= 1.0
    page.close()
