"""The cockpit keeps driving on fresh state in both of Chromium's GPU-less configurations:
software compositing (``--disable-gpu``) and software GL (SwiftShader, as on a machine without
a GPU driver, where the page paints a few frames a second). In each, the first press of W, S,
A and D moves the robot, their release stops it and the e-stop key stops it, each within twice
its target (0.5 s, 0.5 s and 0.3 s: ``freelook bench web.cockpit_keys_*`` measures them against
those on a quiet machine; the tests run side by side on a busy one); and the page never shows
old telemetry as live.

Keys are timed from the moment the browser took them in (the event's ``timeStamp``, so time
the page spent busy before handling a key counts) until the robot applied the wheel command
that answers it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from conftest import CHROMIUM, Sim, start_sim  # type: ignore[import-not-found]

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


@pytest.fixture(scope="module", params=list(CONFIGURATIONS))
def chromium(request: pytest.FixtureRequest) -> Iterator[Any]:
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


@pytest.fixture(scope="module")
def sim(chromium: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    """A fresh ``freelook sim`` for each configuration: the robot starts where it is free to
    drive every way."""
    running = start_sim(tmp_path_factory.mktemp("sim"))
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def open_cockpit(chromium: Any, sim: Any) -> Any:
    page = chromium.new_page(viewport={"width": 1500, "height": 900}, bypass_csp=True)
    page.goto(sim.url)
    page.wait_for_function(
        "window.freelook && window.freelook.last && window.freelook.last.pose",
        polling=50,
        timeout=30_000,
    )
    return page


def wait_fresh(page: Any) -> None:
    """Until the robot's reports are fresh (a robot process just started may not send for a
    few seconds; the page says so, and keys pressed then would wait on it)."""
    page.wait_for_function(
        "document.getElementById('link-state').textContent === 'link: up'"
        " && !document.body.classList.contains('stale')",
        polling=50,
        timeout=30_000,
    )


@pytest.mark.parametrize("configuration", list(CONFIGURATIONS))
def test_keys_move_and_stop_at_once_and_the_estop_key_stops(configuration: str) -> None:
    """A fresh session (the camera streaming), the cockpit in Free Look: W, S, A, D pressed
    once each, then W held and Space; timed at the robot's wheels (``freelook bench``'s
    ``web.cockpit_keys_*`` run the same session)."""
    from freelook.launch._bench_cockpit import _keys_session

    if not Path(CHROMIUM).exists():
        pytest.skip("Debian's chromium is not installed")
    # its own thread and event loop: the other tests' browser runs Playwright's sync API here
    with ThreadPoolExecutor(1) as worker:
        figures = worker.submit(asyncio.run, _keys_session(CONFIGURATIONS[configuration])).result()
    for key in ("KeyW", "KeyS", "KeyA", "KeyD"):
        went, stopped = figures[f"{key}_move_ms"], figures[f"{key}_stop_ms"]
        assert went <= 2 * 500, f"{key}: the robot moved {went:.0f} ms after the key went down"
        assert stopped <= 2 * 500, f"{key}: the robot stopped {stopped:.0f} ms after release"
    estop = figures["estop_ms"]
    assert estop <= 2 * 300, f"the e-stop key stopped the robot {estop:.0f} ms after it went down"


def test_old_telemetry_is_shown_stale_not_live(chromium: Any, sim: Any) -> None:
    page = open_cockpit(chromium, sim)
    wait_fresh(page)
    page.click("#rtx-toggle")  # the robot stops transmitting: its newest report grows old
    try:
        shown = (
            "document.body.classList.contains('stale') && ['link: stale', 'link: lost']"
            ".some((t) => document.getElementById('link-state').textContent.startsWith(t))"
        )
        page.wait_for_function(shown, polling=50, timeout=5_000)
        page.wait_for_timeout(1_000)  # and it stays so while the robot sends nothing
        assert page.evaluate(shown), page.inner_text("#link-state")
        assert page.locator("#camera-pane .stale-badge").is_visible()
    finally:
        page.click("#rtx-toggle")
    wait_fresh(page)
    page.close()


def test_a_page_that_falls_behind_says_so(chromium: Any, sim: Any) -> None:
    page = open_cockpit(chromium, sim)
    page.wait_for_function(
        "document.getElementById('page-state').hidden", polling=50, timeout=30_000
    )
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
