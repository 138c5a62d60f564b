"""A file a page needs and the server does not send is said on the page, by name: the station
and the cockpit do not sit at "connecting…" when one of their modules (or three.js, which
they import) is missing, and the cockpit without three.js says its 3-D view is what is lost.

The server is a real ``freelook sim --robot taros``; Chromium asks it for each file, and the
one named is answered 404 on its way (Playwright's ``page.route``), as a server without it
would answer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import Sim, start_sim  # type: ignore[import-not-found]

pytestmark = pytest.mark.browser

THREE = "/static/vendor/three"


@pytest.fixture(scope="module")
def taros(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(tmp_path_factory.mktemp("missing"), "--robot", "taros", "--world", "eod")
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def _open_without(browser: Any, url: str, missing: str) -> Any:
    """A page on ``url`` whose request for ``missing`` (a path) is answered 404."""
    page = browser.new_page(viewport={"width": 1280, "height": 720})
    page.route(f"**{missing}", lambda route: route.fulfill(status=404, body="Not Found"))
    page.goto(url)
    return page


@pytest.mark.parametrize("missing", [f"{THREE}/three.core.js", "/static/station-panels.js"])
def test_the_station_names_the_file_it_misses(browser: Any, taros: Sim, missing: str) -> None:
    page = _open_without(browser, taros.url.replace("/?token=", "/station?token="), missing)
    banner = page.locator("#missing-asset")
    banner.wait_for(timeout=20_000)
    said = f"missing {missing} (HTTP 404)"
    assert said in banner.inner_text()
    assert page.locator("#status").inner_text() == f"cannot start: {said}"
    assert page.locator("#enter-vr").is_disabled()
    page.close()


def test_the_cockpit_names_the_file_it_misses(browser: Any, taros: Sim) -> None:
    page = _open_without(browser, taros.url, "/static/fleet.js")
    page.locator("#missing-asset").wait_for(timeout=20_000)
    said = "missing /static/fleet.js (HTTP 404)"
    assert said in page.locator("#missing-asset").inner_text()
    assert page.locator("#link-state").inner_text() == f"cannot start: {said}"
    page.close()


def test_the_cockpit_without_three_loses_only_its_3d_view(browser: Any, taros: Sim) -> None:
    page = _open_without(browser, taros.url, f"{THREE}/three.module.js")
    page.wait_for_function(
        "window.freelook && window.freelook.last && window.freelook.last.arm", timeout=30_000
    )
    status = page.locator("#arm-status")
    page.wait_for_function(
        "document.getElementById('arm-status').textContent.includes('missing')", timeout=20_000
    )
    assert status.inner_text() == f"3-D view: missing {THREE}/three.module.js (HTTP 404)"
    assert page.locator("#missing-asset").count() == 0  # the rest of the cockpit works
    page.wait_for_function("document.getElementById('link-state').textContent === 'link: up'")
    page.close()
