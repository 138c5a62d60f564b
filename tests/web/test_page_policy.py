"""The pages run under their Content-Security-Policy (scripts from the server, the inline import
map and error handler by their hashes): real Chromium loads the cockpit and the station with no
script refused, and the cockpit paints the camera and the robot's pose."""

from __future__ import annotations

from typing import Any

import pytest
from cockpit_scenes import open_cockpit  # type: ignore[import-not-found]

from conftest import Sim  # type: ignore[import-not-found]
from waiting import wait_until

pytestmark = pytest.mark.browser


def _refusals(errors: list[str]) -> list[str]:
    return [e for e in errors if "Content Security Policy" in e]


class _Enforcing:
    """The suite's browser, its pages under the policy (the suite's others bypass it)."""

    def __init__(self, browser: Any) -> None:
        self.browser = browser

    def new_page(self, **options: Any) -> Any:
        return self.browser.new_page(bypass_csp=False, **options)


def test_the_cockpit_runs_under_its_policy(browser: Any, sim: Sim) -> None:
    page, errors = open_cockpit(_Enforcing(browser), sim)
    try:
        wait_until(
            lambda: page.evaluate("window.freelook.framesPainted") > 2, 20, "camera frames painted"
        )
        assert _refusals(errors) == []
        assert errors == []
    finally:
        page.close()


def test_the_station_runs_under_its_policy(browser: Any, sim: Sim) -> None:
    page = browser.new_page(viewport={"width": 1280, "height": 720}, bypass_csp=False)
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(sim.url.replace("/?token=", "/station?token="))
        wait_until(
            lambda: page.locator("#status").inner_text() not in ("", "connecting…"),
            30,
            "the station past connecting",
        )
        assert _refusals(errors) == []
    finally:
        page.close()
