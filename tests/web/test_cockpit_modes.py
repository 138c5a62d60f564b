"""The cockpit's drive modes and its e-stop key, in real Chromium against real programs.

The page shows the mode the robot reports (never the one only asked for), offers only the modes
the robot and the wire profile can run, says why of the others, says a refusal with its reason
and goes back to a mode the robot runs; a robot starts in a mode it has. Space engages the
latched e-stop in every mode (Keyboard's too) and with the focus anywhere; only a click on the
E-STOP button releases it. Without a report from the robot the State box never says "clear".
"""

from __future__ import annotations

import os
import re
import secrets
import time
from collections.abc import Iterator
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from cockpit_scenes import robot_time_passes
from programs import ANNOUNCED_URL, Program, start, wait_for_line
from test_cockpit import motion, open_cockpit, state

from conftest import Sim, free_port, start_sim  # type: ignore[import-not-found]
from waiting import wait_until as _wait_until

pytestmark = pytest.mark.browser

wait_until = partial(_wait_until, every=0.05)

#: the modes a page's buttons stand for, as the robot names them
BUTTONS = ("keyboard", "tank", "free_look", "linear", "trajectory")


def buttons(page: Any) -> dict[str, dict[str, Any]]:
    """Each mode button as the page shows it: lit (the robot's mode), outlined (asked for),
    greyed out (not offered), and its title."""
    return page.evaluate(  # type: ignore[no-any-return]
        """() => Object.fromEntries([...document.querySelectorAll('[data-mode]')].map((b) => [
            b.dataset.mode, {active: b.classList.contains('active'),
            asked: b.classList.contains('asked'), disabled: b.disabled, title: b.title}]))"""
    )


def lit(page: Any) -> list[str]:
    return [mode for mode, b in buttons(page).items() if b["active"]]


def mode_notes(page: Any) -> str:
    """What the Mode box says of refused and unoffered modes (visible text only)."""
    return " ".join(
        page.locator(f"#{which}").inner_text()
        for which in ("mode-refusal", "mode-unoffered")
        if page.locator(f"#{which}").is_visible()
    )


def _stop(sim: Sim) -> None:
    sim.stop()
    if sim.process.stdout is not None:
        sim.process.stdout.close()


@pytest.fixture(scope="module")
def no_pan(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    """``freelook sim --robot ros2-diff-base``: a fixed camera, no pan joint."""
    running = start_sim(tmp_path_factory.mktemp("no-pan"), "--robot", "ros2-diff-base")
    yield running
    _stop(running)


def test_a_robot_without_a_pan_joint_starts_in_tank_and_says_why_not_free_look(
    browser: Any, no_pan: Sim
) -> None:
    page, errors = open_cockpit(browser, no_pan)
    wait_until(
        lambda: state(page).get("mode") == "tank",
        10,
        "the robot in Tank",
        show=lambda: motion(page),
    )
    wait_until(
        lambda: lit(page) == ["tank"], 3, "Tank lit, the robot's mode", show=lambda: buttons(page)
    )
    shown = buttons(page)
    assert shown["free_look"]["disabled"]
    assert not shown["free_look"]["active"]
    assert "no pan joint" in shown["free_look"]["title"]
    assert "Free Look refused: the camera cannot pan (no pan joint)" in mode_notes(page)
    assert page.inner_text("#mode-chip") == "mode: tank"
    assert page.evaluate("window.freelook.mode") == "tank"
    # and W drives, in the mode the robot is in
    page.keyboard.down("KeyW")
    try:
        wait_until(
            lambda: state(page)["cmd"]["v"] > 0.05,
            5,
            "W to drive in Tank",
            show=lambda: motion(page),
        )
    finally:
        page.keyboard.up("KeyW")
    wait_until(
        lambda: abs(state(page)["cmd"]["v"]) < 1e-3,
        3,
        "the stop on release",
        show=lambda: motion(page),
    )
    assert errors == []
    page.close()
    # the terminal says it too, as `freelook robot` does
    said = "Free Look refused: the camera cannot pan (no pan joint)"
    assert any(said in line for line in no_pan.lines), no_pan.lines


def test_a_fleet_robot_without_a_pan_unit_starts_in_a_mode_it_has(
    browser: Any, tmp_path: Path
) -> None:
    fleet = start_sim(
        tmp_path, "--robots", "2", "--stations", "1", "--zenoh", f"127.0.0.1:{free_port()}"
    )
    try:
        page, errors = open_cockpit(browser, fleet)
        wait_until(
            lambda: state(page).get("mode") == "tank",
            15,
            "robot-1 in Tank",
            show=lambda: motion(page),
        )
        wait_until(lambda: lit(page) == ["tank"], 3, "Tank lit", show=lambda: buttons(page))
        assert buttons(page)["free_look"]["disabled"]
        assert "Free Look refused: the camera cannot pan (no pan-tilt unit)" in mode_notes(page)
        # driven, not left idle: the robot's watchdog (engaged until a first command) releases
        wait_until(
            lambda: "watchdog" not in page.inner_text("#safety-chip"),
            5,
            "the station's commands releasing the robot's watchdog",
            show=lambda: motion(page),
        )
        assert errors == []
        page.close()
        assert any("Free Look refused" in line for line in fleet.lines), fleet.lines
    finally:
        _stop(fleet)


# -- a mode the robot refuses when asked ----------------------------------------------------


def _keys_file(path: Path, passphrase: str, modes: list[str]) -> Path:
    path.write_text(f'[stations.1]\nkey = "{passphrase}"\nmodes = {modes!r}\n'.replace("'", '"'))
    os.chmod(path, 0o600)
    return path


@pytest.fixture
def robot_and_operator(tmp_path: Path) -> Iterator[tuple[Program, Program, str]]:
    """``freelook robot`` whose keys file lets station 1 drive every mode but Free Look, and
    ``freelook operator`` as station 1 with that key."""
    passphrase = secrets.token_hex(32)
    keys = _keys_file(tmp_path / "keys.toml", passphrase, ["tank", "keyboard", "velocity"])
    port = free_port()
    robot = start("robot", "--listen", f"udp://127.0.0.1:{port}", "--keys", str(keys))
    operator: Program | None = None
    try:
        wait_for_line(robot, re.compile(r"native profile on udp://"), 90, "the robot to listen")
        operator = start(
            "operator", "--robot", f"udp://127.0.0.1:{port}", "--key", passphrase,
            "--station", "1", "--no-record", "--no-browser", "--port", str(free_port()),
        )  # fmt: skip
        url = wait_for_line(operator, ANNOUNCED_URL, 60, "the operator's cockpit")
        yield robot, operator, url.split(" ", 1)[1]
    finally:
        if operator is not None:
            operator.stop()
        robot.stop()


def test_a_mode_the_robot_refuses_is_said_with_its_reason_and_the_page_goes_back(
    browser: Any, robot_and_operator: tuple[Program, Program, str]
) -> None:
    _, _, url = robot_and_operator
    page, errors = open_cockpit(browser, SimpleNamespace(url=url))
    # the page starts in Free Look (the robot has a pan unit): the robot refuses it for this
    # station's key, the page says why and drives in the next mode it has
    wait_until(
        lambda: state(page).get("mode") == "tank",
        15,
        "the robot in Tank",
        show=lambda: motion(page),
    )
    page.click("[data-mode=free_look]")
    wait_until(
        lambda: "Free look refused: this station's key does not allow it" in mode_notes(page),
        5,
        "the page to say the robot refused Free Look, and why",
        show=lambda: (mode_notes(page), buttons(page)),
    )
    wait_until(lambda: page.evaluate("window.freelook.mode") == "tank", 5, "the page back in Tank")
    assert lit(page) == ["tank"]  # the robot's mode, never the one asked for
    assert not buttons(page)["free_look"]["active"]
    page.keyboard.down("KeyW")
    try:
        wait_until(
            lambda: state(page)["cmd"]["v"] > 0.05,
            5,
            "W to drive in Tank",
            show=lambda: motion(page),
        )
    finally:
        page.keyboard.up("KeyW")
    assert errors == []
    page.close()


# -- the thesis profile end to end ----------------------------------------------------------


@pytest.fixture(scope="module")
def thesis() -> Iterator[str]:
    """``freelook robot --wire thesis`` and ``freelook operator --wire thesis``: the cockpit."""
    port = free_port()
    robot = start("robot", "--wire", "thesis", "--listen", f"udp://127.0.0.1:{port}")
    operator: Program | None = None
    try:
        wait_for_line(robot, re.compile(r"thesis profile on udp://"), 90, "the robot to listen")
        operator = start(
            "operator", "--robot", f"udp://127.0.0.1:{port}", "--wire", "thesis",
            "--no-record", "--no-browser", "--port", str(free_port()),
        )  # fmt: skip
        url = wait_for_line(operator, ANNOUNCED_URL, 60, "the operator's cockpit")
        yield url.split(" ", 1)[1]
    finally:
        if operator is not None:
            operator.stop()
        robot.stop()


def _speed(page: Any) -> float:
    return abs(state(page).get("v") or 0.0)


def test_the_thesis_profile_offers_only_what_it_carries(browser: Any, thesis: str) -> None:
    page, errors = open_cockpit(browser, SimpleNamespace(url=thesis))
    shown = buttons(page)
    for mode in ("tank", "free_look", "linear"):
        assert shown[mode]["disabled"], mode
        assert "thesis profile" in shown[mode]["title"], shown[mode]
    assert not shown["keyboard"]["disabled"]
    assert not shown["trajectory"]["disabled"]
    assert page.evaluate("window.freelook.mode") == "keyboard"  # the one mode it drives in
    notes = mode_notes(page)
    assert "Free Look refused: the thesis profile carries no Free Look commands" in notes
    assert "Tank refused" in notes
    assert page.inner_text("#mode-chip") == "mode: not reported (thesis profile)"
    assert lit(page) == []  # nothing reported, nothing lit
    page.click("[data-mode=trajectory]")
    assert page.is_disabled("#traj-robot")  # robot-side tracking is not carried
    assert page.is_checked("#traj-operator")
    page.click("[data-mode=keyboard]")
    for _ in range(5):
        page.keyboard.press("ArrowUp")
    wait_until(
        lambda: _speed(page) > 0.05, 10, "the arrow keys to drive", show=lambda: motion(page)
    )
    page.keyboard.press("Space")
    wait_until(lambda: _speed(page) < 0.01, 5, "Space to stop", show=lambda: motion(page))
    page.click("#estop")
    wait_until(lambda: not state(page)["estop"], 3, "the e-stop released")
    assert errors == []
    page.close()


def test_on_the_thesis_profile_space_latches_and_no_arrow_key_drives_through_it(
    browser: Any, thesis: str
) -> None:
    page, errors = open_cockpit(browser, SimpleNamespace(url=thesis))
    for _ in range(5):
        page.keyboard.press("ArrowUp")
    wait_until(
        lambda: _speed(page) > 0.05, 10, "the arrow keys to drive", show=lambda: motion(page)
    )
    page.keyboard.press("Space")  # the thesis keyboard's stop, and the e-stop: it latches
    wait_until(lambda: state(page)["estop"], 3, "the e-stop engaged", show=lambda: motion(page))
    wait_until(lambda: _speed(page) < 0.01, 5, "the robot stopped", show=lambda: motion(page))
    for _ in range(5):
        page.keyboard.press("ArrowUp")
    # time for the keys to drive, were they obeyed (by the wall clock: the thesis profile's
    # reports carry no stamp of the robot's to measure it on)
    time.sleep(1.5)
    assert _speed(page) < 0.01, "an arrow key drove through the e-stop"
    assert state(page)["estop"]
    page.click("#estop")  # the deliberate release
    wait_until(lambda: not state(page)["estop"], 3, "the e-stop released")
    time.sleep(0.5)  # time for the old speed to come back, were it kept
    assert _speed(page) < 0.01  # released at rest: the keyboard starts from zero again
    assert errors == []
    page.close()


def test_without_a_robot_report_the_state_box_never_says_clear(browser: Any, thesis: str) -> None:
    # the thesis profile's position report carries no safety: there is no report of it
    page, errors = open_cockpit(browser, SimpleNamespace(url=thesis))
    assert state(page).get("safety") is None
    assert page.inner_text("#safety") == "unknown (no report from the robot)"
    assert page.inner_text("#safety-chip") == "safety: unknown (no report from the robot)"
    assert errors == []
    page.close()


# -- Space from Keyboard mode and from a focused field, on the native profile -------------


@pytest.fixture(scope="module")
def pioneer(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(tmp_path_factory.mktemp("pioneer"))
    yield running
    _stop(running)


def _engaged_and_stopped(page: Any, what: str) -> None:
    wait_until(
        lambda: state(page)["estop"] and abs(state(page)["cmd"]["v"]) < 1e-6,
        5,
        what,
        show=lambda: motion(page),
    )


def _release(page: Any) -> None:
    page.click("#estop")
    wait_until(lambda: not state(page)["estop"], 3, "the button to release the e-stop")


def test_space_latches_the_estop_from_keyboard_mode(browser: Any, pioneer: Sim) -> None:
    page, errors = open_cockpit(browser, pioneer)
    wait_until(lambda: lit(page) == ["free_look"], 10, "Free Look lit", show=lambda: buttons(page))
    for _ in range(5):
        page.keyboard.press("ArrowUp")  # Keyboard mode: the thesis increments
    wait_until(
        lambda: state(page)["cmd"]["v"] > 0.05,
        5,
        "the arrow keys to drive",
        show=lambda: motion(page),
    )
    assert lit(page) == ["keyboard"]
    page.keyboard.press("Space")
    _engaged_and_stopped(page, "Space in Keyboard mode to engage the e-stop")
    page.keyboard.press("ArrowUp")  # neither an arrow key nor Space again releases it
    page.keyboard.press("Space")
    robot_time_passes(page, 1.0, "time for the keys to drive or release, were they obeyed")
    assert state(page)["estop"]
    assert abs(state(page)["cmd"]["v"]) < 1e-6
    assert "ENGAGED" in page.inner_text("#estop")
    _release(page)
    robot_time_passes(page, 0.5, "time for the old speed to come back, were it kept")
    assert abs(state(page)["cmd"]["v"]) < 1e-6  # released at rest, not at the old speed
    assert errors == []
    page.close()


def test_space_latches_the_estop_with_the_focus_in_a_field_or_on_a_button(
    browser: Any, pioneer: Sim
) -> None:
    page, errors = open_cockpit(browser, pioneer)
    # the focus in a number field (robot Tx ms): Space is still the e-stop, and types nothing
    page.click("[data-mode=tank]")
    page.keyboard.down("KeyA")
    wait_until(
        lambda: abs(state(page)["cmd"]["omega"]) > 0.05, 10, "A to turn", show=lambda: motion(page)
    )
    page.keyboard.up("KeyA")
    page.focus("#rtx-ms")
    before = page.input_value("#rtx-ms")
    page.keyboard.press("Space")
    _engaged_and_stopped(page, "Space in a number field to engage the e-stop")
    assert page.input_value("#rtx-ms") == before
    _release(page)

    # the focus on a mode button: Space engages the stop and never clicks the button
    page.focus("[data-mode=keyboard]")
    page.keyboard.press("Space")
    _engaged_and_stopped(page, "Space on a focused button to engage the e-stop")
    assert page.evaluate("window.freelook.mode") == "tank"
    _release(page)
    assert errors == []
    page.close()
