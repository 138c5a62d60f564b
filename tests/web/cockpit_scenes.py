"""The cockpit opened in a browser and driven into the states the documentation pictures:
the tests that check those states (tests/web/test_cockpit.py) and ``tools/screenshots.py``,
which writes docs/cockpit-free-look.png and docs/cockpit-trajectory.png from them, share
these, so a picture shows what a test saw.

Each scene is a context manager: inside it the page shows the scene (a wait that runs out
raises naming what it waited for); leaving it puts the robot back at rest."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from functools import partial
from typing import Any

from waiting import wait_until as _wait_until

__all__ = [
    "SCENES",
    "ellipse_tracking",
    "free_look",
    "motion",
    "open_cockpit",
    "robot_time_passes",
    "state",
]

#: the shared wait (it raises naming what it waited for), looking at the page every 50 ms
wait_until = partial(_wait_until, every=0.05)


def open_cockpit(browser: Any, sim: Any, init_script: str | None = None) -> tuple[Any, list[str]]:
    """A new page on ``sim``'s cockpit, once the robot's first pose is in, and the errors its
    console and its scripts report from then on."""
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    if init_script:
        page.add_init_script(init_script)
    page.goto(sim.url)
    # a function, not an expression: Playwright polls an expression through eval, which a
    # page under its Content-Security-Policy refuses once the first look finds nothing yet
    page.wait_for_function(
        "() => window.freelook && window.freelook.last && window.freelook.last.pose",
        timeout=30_000,
    )
    return page, errors


def state(page: Any) -> dict[str, Any]:
    return page.evaluate("window.freelook.last")  # type: ignore[no-any-return]


def motion(page: Any) -> dict[str, Any]:
    """What a wait on the robot's state shows when it runs out: mode, command, stops."""
    s = state(page)
    return {k: s.get(k) for k in ("mode", "cmd", "estop", "safety", "localizing")}


def robot_time_passes(page: Any, seconds: float, what: str) -> None:
    """Back once the robot's reports at the page span ``seconds`` of the robot's clock from
    the newest one now: the window a test leaves for something that must not happen (a drive
    through the e-stop, a release), measured in the robot's own time and seen at the page, so
    a busy machine stretches it and it never ends before the robot had that long to act. The
    native profile's reports carry the robot's stamp ("t"); the thesis's carry none."""
    start = state(page)["t"]
    wait_until(
        lambda: state(page)["t"] >= start + seconds,
        30 + seconds,  # a bound for a run gone wrong
        f"{seconds:g} s of the robot's reports: {what}",
        show=lambda: {"from": start, "newest": state(page)["t"], **motion(page)},
    )


@contextmanager
def free_look(page: Any) -> Iterator[None]:
    """Free Look picked, camera frames painted, the map with the laser, sonar and zones, and
    the link graph filling."""
    page.click("[data-mode=free_look]")
    wait_until(
        lambda: page.evaluate("window.freelook.framesPainted") > 5,
        20,
        "more than 5 camera frames painted",
    )
    first = page.evaluate("window.freelook.graph.length")
    wait_until(
        lambda: page.evaluate("window.freelook.graph.length") > first + 5,
        10,
        "5 more points on the link graph",
    )
    wait_until(
        lambda: page.locator("#fps").inner_text().isdigit(),
        5,
        "the camera's frame rate measured",
    )
    yield


@contextmanager
def ellipse_tracking(page: Any) -> Iterator[None]:
    """Trajectory mode on the ellipse: its reference drawn, the robot tracking it, a trail
    behind it; stopped on leaving, whatever happened inside (the robot tracks by itself)."""
    page.click("[data-mode=trajectory]")
    page.click("#traj-ellipse")
    try:
        wait_until(
            lambda: len(state(page).get("reference") or []) > 50,
            5,
            "the ellipse's reference drawn",
            show=lambda: motion(page),
        )
        wait_until(
            lambda: state(page).get("mode") == "trajectory",
            5,
            "the trajectory mode running",
            show=lambda: motion(page),
        )
        wait_until(
            lambda: page.evaluate("window.freelook.trail.length") > 10,
            20,
            "more than 10 points of trail behind the robot",
        )
        yield
    finally:
        page.click("#traj-stop")


#: docs/ picture → the scene it shows
SCENES: dict[str, Callable[[Any], AbstractContextManager[None]]] = {
    "cockpit-free-look.png": free_look,
    "cockpit-trajectory.png": ellipse_tracking,
}
