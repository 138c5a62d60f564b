"""Click-to-go in real Chromium against ``freelook sim``: offered once the round trip passes the
threshold set in the page (0 s here, so loopback's passes it), a click on the map sends the
robot there on its own and it arrives within the goal's tolerance; a click on the picture
sends it to the ground point that pixel shows; an arrow key takes over at once (the robot in
Keyboard mode, the page saying "taken over"); G declines the offer and arms it again. On a
touch screen a tap is the click, and the E-STOP takes over. Through a link shaped 0.6 s each
way the page offers it by itself at the default 1 s, and a click still gets the robot there."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from functools import partial
from typing import Any

import pytest
from cockpit_scenes import motion, open_cockpit, state

from conftest import Sim, start_sim  # type: ignore[import-not-found]
from freelook.config import load_robot
from waiting import wait_until as _wait_until

pytestmark = pytest.mark.browser

wait_until = partial(_wait_until, every=0.05)
CONFIG = load_robot("pioneer3dx")  # freelook sim's robot


def clear_point(s: dict[str, Any], reach: float) -> tuple[float, float]:
    """A point ``reach`` m from the robot in the middle of the laser's widest clear sector
    (20 degrees) within 60 degrees of its heading: the way there is clear, and 2 m on beyond
    it (the picture's bottom middle then shows clear ground)."""
    laser, pose = s["laser"], s["pose"]
    ranges, step = laser["ranges"], laser["angle_increment"]
    half = max(1, round(math.radians(10) / step))
    best = max(
        (min(ranges[max(0, i - half) : i + half + 1]), laser["angle_min"] + i * step)
        for i in range(len(ranges))
        if abs(laser["angle_min"] + i * step) < math.radians(60)
    )
    assert best[0] > reach + 2.0, laser
    heading = pose["theta"] + best[1]
    return pose["x"] + reach * math.cos(heading), pose["y"] + reach * math.sin(heading)


def on_map(page: Any, x: float, y: float) -> tuple[float, float]:
    """Where the world point (x, y) is on the screen, by the map's own view."""
    return page.evaluate(  # type: ignore[no-any-return]
        """([x, y]) => { const c = document.getElementById('map'), v = window.freelook.view;
        const r = c.getBoundingClientRect();
        const px = c.width / 2 + (x - v.cx) * v.scale, py = c.height / 2 - (y - v.cy) * v.scale;
        return [r.left + px * r.width / c.width, r.top + py * r.height / c.height]; }""",
        [x, y],
    )


def goal(page: Any) -> dict[str, Any]:
    """The station's word on the newest goal ({} before any)."""
    return page.evaluate("window.freelook.last.goal || {}")  # type: ignore[no-any-return]


def test_a_click_on_the_map_drives_the_robot_there_and_a_key_takes_over(
    browser: Any, sim: Sim
) -> None:
    page, errors = open_cockpit(browser, sim)
    try:
        banner = page.locator("#goal-banner")
        assert not banner.is_visible()  # loopback's round trip is under the default 1 s
        page.fill("#goal-rtt", "0")  # the threshold: any round trip passes it
        wait_until(banner.is_visible, 5, "click-to-go offered")
        assert "round trip" in banner.inner_text()
        assert page.evaluate("document.body.classList.contains('goal-armed')")
        assert page.evaluate("getComputedStyle(document.getElementById('map')).cursor") == (
            "crosshair"
        )
        wait_until(lambda: state(page).get("laser"), 10, "a laser scan")
        x, y = clear_point(state(page), 1.2)
        page.mouse.click(*on_map(page, x, y))
        wait_until(
            lambda: goal(page).get("state") == "driving",
            10,
            "driving",
            show=lambda: motion(page),
        )
        sent = goal(page)
        assert math.hypot(sent["x"] - x, sent["y"] - y) < 0.05  # the map's scale: 1-2 cm a px
        wait_until(
            lambda: goal(page)["state"] == "reached",
            40,
            "the goal reached",
            show=lambda: motion(page),
        )
        pose = state(page)["pose"]
        assert math.hypot(pose["x"] - x, pose["y"] - y) <= CONFIG.goal.tolerance + 0.1
        assert page.locator("#goal-chip").inner_text().startswith("goal reached")
        wait_until(
            lambda: state(page)["mode"] == "idle",
            5,
            "the robot standing",
            show=lambda: motion(page),
        )

        # the picture: its bottom middle shows the ground about 1.2 m ahead of the robot
        wait_until(lambda: page.evaluate("window.freelook.framesPainted") > 3, 10, "frames")
        sent = click_picture_bottom(page)
        expected = sent["expected"]
        assert math.hypot(sent["x"] - expected[0], sent["y"] - expected[1]) < 0.1, sent
        assert not page.evaluate("document.pointerLockElement")  # the click was the goal's

        page.keyboard.press("ArrowUp")  # any key takes over
        wait_until(
            lambda: goal(page)["state"] == "taken over", 5, "taken over", show=lambda: motion(page)
        )
        wait_until(
            lambda: state(page)["mode"] == "keyboard",
            5,
            "the keyboard's",
            show=lambda: motion(page),
        )
        assert page.locator("#goal-chip").inner_text() == "goal: taken over by the operator"
        page.keyboard.press("ArrowDown")  # the keyboard's speed back to zero

        page.keyboard.press("KeyG")  # declined: no banner, the views' clicks their own again
        wait_until(lambda: not banner.is_visible(), 5, "the offer declined")
        page.keyboard.press("KeyG")
        wait_until(banner.is_visible, 5, "armed again")
        assert errors == []
    finally:
        page.close()


def test_on_a_touch_screen_a_tap_on_the_map_sends_a_goal_and_the_estop_takes_over(
    browser: Any, sim: Sim
) -> None:
    context = browser.new_context(
        viewport={"width": 390, "height": 844}, has_touch=True, is_mobile=True
    )
    page = context.new_page()
    try:
        page.goto(sim.url)
        page.wait_for_function(
            "window.freelook && window.freelook.last && window.freelook.last.laser",
            timeout=30_000,
        )
        page.tap("#goal-toggle")  # armed at any delay: the button is the phone's G
        wait_until(page.locator("#goal-banner").is_visible, 5, "click-to-go armed")
        x, y = clear_point(state(page), 1.0)
        at = page.evaluate(
            """([x, y]) => { const c = document.getElementById('map'), v = window.freelook.view;
            const r = c.getBoundingClientRect();
            return [(c.width / 2 + (x - v.cx) * v.scale) * r.width / c.width,
                    (c.height / 2 - (y - v.cy) * v.scale) * r.height / c.height]; }""",
            [x, y],
        )
        page.locator("#map").tap(position={"x": at[0], "y": at[1]})
        wait_until(lambda: goal(page).get("state") == "driving", 10, "driving")
        assert math.hypot(goal(page)["x"] - x, goal(page)["y"] - y) < 0.1
        page.tap("#estop")
        wait_until(lambda: goal(page)["state"] == "taken over", 5, "taken over")
        wait_until(lambda: state(page)["mode"] != "goal", 5, "the goal left")
        wait_until(lambda: state(page)["cmd"]["v"] == 0, 5, "the robot held")
        page.locator("#map").tap(position={"x": at[0], "y": at[1]})  # held back, and said
        chip = page.locator("#goal-chip")
        wait_until(lambda: "E-STOP is engaged" in chip.inner_text(), 5, "the page saying why")
        assert goal(page)["state"] == "taken over"  # no new goal went out
        page.wait_for_timeout(700)  # a later tap of its own releases the e-stop
        page.tap("#estop")
        wait_until(lambda: not state(page)["estop"], 5, "the e-stop released")
    finally:
        context.close()


@pytest.fixture(scope="module")
def delayed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    """``freelook sim --link-delay 0.6 --link-jitter 0.02``: a round trip over 1.2 s."""
    running = start_sim(
        tmp_path_factory.mktemp("delayed"), "--link-delay", "0.6", "--link-jitter", "0.02"
    )
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


def test_through_a_long_round_trip_it_is_offered_by_itself_and_a_click_gets_there(
    browser: Any, delayed: Sim
) -> None:
    page, errors = open_cockpit(browser, delayed)
    try:
        banner = page.locator("#goal-banner")
        wait_until(
            lambda: (state(page).get("clock") or {}).get("rtt") or 0, 30, "a round trip measured"
        )
        assert page.input_value("#goal-rtt") == "1"  # the robot's [goal] offer_round_trip
        wait_until(banner.is_visible, 10, "click-to-go offered by itself")
        said = re.match(r"round trip (\d+\.\d\d) s: click to go", banner.inner_text())
        assert said is not None, banner.inner_text()
        assert float(said[1]) > 1.0  # the page's threshold, passed
        wait_until(lambda: state(page).get("laser"), 10, "a laser scan")
        x, y = clear_point(state(page), 1.0)
        page.mouse.click(*on_map(page, x, y))
        wait_until(
            lambda: goal(page).get("state") == "reached",
            60,
            "the goal reached",
            show=lambda: (goal(page), motion(page)),
        )
        pose = state(page)["pose"]
        assert math.hypot(pose["x"] - x, pose["y"] - y) <= CONFIG.goal.tolerance + 0.1
        # the picture moved to the prediction (0.6 s one way): a click lands through its pose,
        # which for a robot standing is where it stands
        wait_until(
            lambda: page.evaluate("document.getElementById('camera').dataset.view") == "predicted",
            10,
            "the predicted view",
        )
        sent = click_picture_bottom(page)
        assert math.hypot(sent["x"] - sent["expected"][0], sent["y"] - sent["expected"][1]) < 0.1
        assert errors == []
    finally:
        page.close()


def click_picture_bottom(page: Any) -> dict[str, Any]:
    """Click the picture's bottom middle (row 420 of 480); the goal sent, and the ground point
    the camera model puts at that pixel from the robot's reported pose."""
    s = state(page)
    pose, cam, pt = s["pose"], CONFIG.camera, CONFIG.pan_tilt
    assert pt is not None
    focal = cam.width / 2 / math.tan(math.radians(cam.fov_deg) / 2)
    below = 420 + 0.5 - cam.height / 2 - focal * math.tan(s["tilt"])
    ahead = pt.mount_forward + focal * pt.mount_height / below  # from the robot's centre
    psi = pose["theta"] + s["pan"]
    box = page.locator("#camera").bounding_box()
    before = page.evaluate("window.freelook.goal.sent")
    page.mouse.click(
        box["x"] + (cam.width / 2 - 0.5) * box["width"] / cam.width,
        box["y"] + 420 * box["height"] / cam.height,
    )
    wait_until(lambda: page.evaluate("window.freelook.goal.sent") > before, 5, "a goal sent")
    wait_until(lambda: goal(page).get("state") == "driving", 10, "driving", show=lambda: goal(page))
    expected = (pose["x"] + ahead * math.cos(psi), pose["y"] + ahead * math.sin(psi))
    return {**goal(page), "expected": expected}
