"""The cockpit end to end: real ``freelook sim``, real Chromium, real WebSocket and UDP."""

from __future__ import annotations

import math
import os
import time
from pathlib import Path
from typing import Any

import pytest
from cockpit_scenes import (
    ellipse_tracking,
    free_look,
    motion,
    open_cockpit,
    robot_time_passes,
    state,
    wait_until,
)

pytestmark = pytest.mark.browser


def camera_pose(s: dict[str, Any]) -> tuple[float, float, float]:
    pose = s["pose"]
    psi = pose["theta"] + s["pan"]
    x = pose["x"] + 0.15 * math.cos(pose["theta"])
    y = pose["y"] + 0.15 * math.sin(pose["theta"])
    return x, y, psi


def screenshot_path(tmp_path: Path, name: str) -> str:
    """docs/ when FREELOOK_SCREENSHOTS names the folder to refresh, else a temporary file."""
    folder = os.environ.get("FREELOOK_SCREENSHOTS")
    return str(Path(folder) / name if folder else tmp_path / name)


def test_page_loads_and_updates(browser: Any, sim: Any, tmp_path: Path) -> None:
    page, errors = open_cockpit(browser, sim)
    with free_look(page):  # frames painted, the link graph filling
        assert page.evaluate("window.freelook.hello.map.width") > 100
        assert page.locator("#link-state").inner_text() == "link: up"
        # on loopback the picture is where the robot is: shown as taken, marked so (under a
        # tenth of a second one way as the station measures it; a machine busy enough to
        # delay the loopback longer has the view moved, as a slow radio would)
        view, mark, delay = page.evaluate(
            "() => [document.getElementById('camera').dataset.view,"
            " document.getElementById('view-mark').innerText,"
            " (window.freelook.last.prediction || { delay: 0 }).delay]"
        )
        if delay < 0.1:
            assert (view, mark.startswith("raw frame")) == ("raw", True), delay
        else:
            assert (view, mark.startswith("predicted view")) == ("predicted", True), delay
        page.screenshot(path=screenshot_path(tmp_path, "cockpit-free-look.png"))
    assert errors == []
    page.close()


def test_the_token_leaves_the_address_bar_and_a_reload_still_connects(
    browser: Any, sim: Any
) -> None:
    page, errors = open_cockpit(browser, sim)
    assert "token" not in page.url
    assert page.evaluate("Object.values(sessionStorage)") == [sim.token]
    page.evaluate("window.freelook.last = null")
    page.reload()
    page.wait_for_function(
        "window.freelook && window.freelook.last && window.freelook.last.pose", timeout=30_000
    )
    assert errors == []
    page.close()


# Timed in the page's own clock: when each key went down or up, and when each state message
# showed the robot's commanded motion (no polling from the test in between).
KEY_TIMING = """
window.__timing = [];
for (const kind of ['keydown', 'keyup']) {
  window.addEventListener(kind, (e) => {
    if (!e.repeat) window.__timing.push([performance.now(), kind, e.code]);
  }, true);
}
const seen = () => {
  const s = window.freelook && window.freelook.last;
  if (s && s.cmd && s !== window.__lastSeen) {
    window.__lastSeen = s;
    window.__timing.push([performance.now(), 'cmd', Math.abs(s.cmd.v) + Math.abs(s.cmd.omega)]);
  }
  requestAnimationFrame(seen);
};
requestAnimationFrame(seen);
"""


#: s from a key's press or release to the robot's state showing it, on a busy machine
PROMPT = 1.0


def _delays(timing: list[list[Any]]) -> dict[str, tuple[float, float]]:
    """Per key: (key down → first state with motion, key up → first state without), in s."""
    out: dict[str, tuple[float, float]] = {}
    for index, (t, kind, code) in enumerate(timing):
        if kind != "keydown":
            continue
        later = timing[index + 1 :]
        up = next(e[0] for e in later if e[1] == "keyup" and e[2] == code)
        went = next((e[0] for e in later if e[1] == "cmd" and e[0] >= t and e[2] > 1e-3), None)
        stopped = next((e[0] for e in later if e[1] == "cmd" and e[0] >= up and e[2] < 1e-3), None)
        out[code] = (
            math.inf if went is None or went > up else (went - t) / 1e3,
            math.inf if stopped is None else (stopped - up) / 1e3,
        )
    return out


def test_w_s_a_d_move_at_once_from_the_first_press_and_stop_at_release(
    browser: Any, sim: Any
) -> None:
    page, errors = open_cockpit(browser, sim, init_script=KEY_TIMING)
    page.click("[data-mode=free_look]")
    before = camera_pose(state(page))

    def moved() -> tuple[float, float]:
        """Forward and sideways travel of the camera since the first key went down."""
        after = camera_pose(state(page))
        dx, dy = after[0] - before[0], after[1] - before[1]
        return (
            dx * math.cos(before[2]) + dy * math.sin(before[2]),
            -dx * math.sin(before[2]) + dy * math.cos(before[2]),
        )

    travel = {}
    for key in ("KeyW", "KeyS", "KeyA", "KeyD"):
        page.keyboard.down(key)  # pressed once: Playwright sends no repeats
        time.sleep(1.5)  # the key held (an input's length, not a wait)
        page.keyboard.up(key)
        wait_until(  # released: the robot stops (the page times the stop itself)
            lambda: abs(state(page)["cmd"]["v"]) + abs(state(page)["cmd"]["omega"]) < 1e-3,
            5,
            f"the stop on {key}'s release",
            show=lambda: motion(page),
        )
        travel[key] = moved()
        if key == "KeyW":
            assert travel[key][0] > 0.1  # forward, in the camera's direction
            assert abs(travel[key][1]) < 0.5 * travel[key][0]
    delays = _delays(page.evaluate("window.__timing"))
    for key, (went, stopped) in delays.items():
        # within the watchdog's 0.5 s (a later command is no command) and as much again for a
        # busy machine: a page that moved only on a key's repeats would never move here
        assert went <= PROMPT, f"{key}: the robot moved {went:.2f} s after the key went down"
        assert stopped <= PROMPT, f"{key}: the robot stopped {stopped:.2f} s after release"
    assert set(delays) == {"KeyW", "KeyS", "KeyA", "KeyD"}
    assert travel["KeyS"][0] < travel["KeyW"][0] - 0.1  # S came back
    assert errors == []
    page.close()


def test_mouse_look_turns_the_camera(browser: Any, sim: Any) -> None:
    page, _ = open_cockpit(browser, sim)
    page.click("[data-mode=free_look]")
    # pointer lock cannot be granted headless without a gesture; drive the same handler
    before = camera_pose(state(page))[2]
    for _ in range(20):
        page.evaluate("""() => { window.freelook.pointerLocked = true;
            document.dispatchEvent(new MouseEvent('mousemove', {movementX: -20})); }""")
        time.sleep(0.05)  # the mouse moved at 20 events a second
    page.evaluate("() => { window.freelook.pointerLocked = false; }")
    wait_until(
        lambda: abs(state(page)["cmd"]["omega"]) < 1e-3,
        3,
        "the turn to end once the mouse stopped",
        show=lambda: motion(page),
    )
    after = camera_pose(state(page))[2]
    turned = math.remainder(after - before, 2 * math.pi)
    assert turned > math.radians(5)  # mouse left → camera turns left
    page.close()


GAMEPAD = """
(() => {
  const pad = { id: 'fake standard pad', mapping: 'standard', connected: true, index: 0,
    axes: [0, -1, 0, 0],
    buttons: Array.from({length: 17}, (_, i) => ({pressed: i === 4, value: i === 4 ? 1 : 0})),
    timestamp: 0 };
  window.__pad = pad;
  navigator.getGamepads = () => [window.__pad];
})();
"""


def test_fake_gamepad_drives_and_deadman_release_stops(browser: Any, sim: Any) -> None:
    page, _ = open_cockpit(browser, sim, init_script=GAMEPAD)
    page.click("[data-mode=free_look]")
    before = camera_pose(state(page))
    wait_until(
        lambda: state(page)["cmd"]["v"] > 0.05,
        5,
        "the gamepad to drive forward",
        show=lambda: motion(page),
    )
    time.sleep(1.0)  # the stick held forward for a second
    page.evaluate("() => { window.__pad.buttons[4] = {pressed: false, value: 0}; }")
    wait_until(
        lambda: abs(state(page)["cmd"]["v"]) < 1e-3,
        3,
        "the stop on the deadman's release",
        show=lambda: motion(page),
    )
    after = camera_pose(state(page))
    assert math.hypot(after[0] - before[0], after[1] - before[1]) > 0.1
    page.close()


def test_estop_latches_in_any_mode_until_released(browser: Any, sim: Any) -> None:
    page, _ = open_cockpit(browser, sim)
    page.click("[data-mode=tank]")
    page.keyboard.down("KeyW")
    wait_until(
        lambda: state(page)["cmd"]["v"] > 0.05,
        5,
        "W to drive forward in Tank",
        show=lambda: motion(page),
    )
    page.click("#estop")
    wait_until(
        lambda: state(page)["estop"] and abs(state(page)["cmd"]["v"]) < 1e-6,
        3,
        "the e-stop engaged and the robot stopped",
        show=lambda: motion(page),
    )
    robot_time_passes(page, 0.5, "time for W to drive, were the stop released")
    assert abs(state(page)["cmd"]["v"]) < 1e-6  # W still held: stays stopped
    page.keyboard.up("KeyW")
    page.click("#estop")
    wait_until(
        lambda: not state(page)["estop"], 3, "the e-stop released", show=lambda: motion(page)
    )
    page.close()


def test_keyboard_mode_increments_and_space_stops_and_latches(browser: Any, sim: Any) -> None:
    page, _ = open_cockpit(browser, sim)
    for _ in range(5):
        page.keyboard.press("ArrowUp")  # arrow keys take over, thesis increments
    assert page.evaluate("window.freelook.mode") == "keyboard"
    wait_until(
        lambda: abs(state(page)["cmd"]["v"] - 0.10) < 0.011,
        5,
        "five increments to command 0.10 m/s",
        show=lambda: motion(page),
    )
    page.keyboard.press("ArrowLeft")
    wait_until(
        lambda: abs(math.degrees(state(page)["cmd"]["omega"]) - 2.0) < 0.3,
        5,
        "ArrowLeft to command 2 °/s",
        show=lambda: motion(page),
    )
    page.keyboard.press("Space")  # the thesis keyboard's stop is the e-stop: it latches
    wait_until(
        lambda: abs(state(page)["cmd"]["v"]) < 1e-6 and state(page)["estop"],
        3,
        "Space to stop the robot and engage the e-stop",
        show=lambda: motion(page),
    )
    page.click("#estop")  # the deliberate release
    wait_until(lambda: not state(page)["estop"], 3, "the e-stop released")
    page.close()


def test_ellipse_runs_with_reference_and_trail(browser: Any, sim: Any, tmp_path: Path) -> None:
    page, errors = open_cockpit(browser, sim)
    with ellipse_tracking(page):  # the reference drawn, the mode running, a trail behind
        page.screenshot(path=screenshot_path(tmp_path, "cockpit-trajectory.png"))
    assert errors == []
    page.close()


def _open_way_along_x(x: float, y: float, length: float) -> int:
    """+1 or -1: the direction along the map's x axis with ``length`` of free hall (0.6 m wide)
    from (x, y) in the sim's world; the tests before leave the robot anywhere in it."""
    from freelook.maps import load_world

    world = load_world("lab")
    grid = world.obstacles()

    def free(direction: int) -> bool:
        for step in range(int(length / 0.05) + 1):
            for dy in (-0.3, 0.0, 0.3):
                col = int((x + direction * step * 0.05 - world.origin[0]) / world.resolution)
                row = int((y + dy - world.origin[1]) / world.resolution)
                inside = 0 <= row < grid.shape[0] and 0 <= col < grid.shape[1]
                if not inside or grid[row, col]:
                    return False
        return True

    return 1 if free(1) or not free(-1) else -1


def test_linear_drive_shuttles(browser: Any, sim: Any) -> None:
    page, _ = open_cockpit(browser, sim)
    page.click("[data-mode=linear]")
    pose = state(page)["pose"]
    x0 = pose["x"]
    way = _open_way_along_x(x0, pose["y"], 1.6)
    page.fill("#lin-x0", f"{x0:.2f}")
    page.fill("#lin-x1", f"{x0 + way * 1.0:.2f}")
    page.click("#lin-start")
    try:
        wait_until(
            lambda: way * (state(page)["pose"]["x"] - x0) > 0.7,
            30,
            "the robot out to the far end",
            show=lambda: motion(page),
        )
        # and back from the far end
        wait_until(
            lambda: way * (state(page)["pose"]["x"] - x0) < 0.5,
            30,
            "the robot back from the far end",
            show=lambda: motion(page),
        )
    finally:  # the robot runs linear drive by itself: stop it even if the test failed
        page.click("#lin-stop")
        page.close()


def test_closing_the_tab_stops_the_robot_through_the_watchdog(browser: Any, sim: Any) -> None:
    page, _ = open_cockpit(browser, sim)
    page.click("[data-mode=tank]")
    # turning on the spot: wherever the tests before left the robot, nothing blocks it
    page.keyboard.down("KeyA")
    wait_until(
        lambda: abs(state(page)["cmd"]["omega"]) > 0.05,
        5,
        "A to turn the robot",
        show=lambda: motion(page),
    )
    page.close()  # no key-up ever arrives
    watcher, _ = open_cockpit(browser, sim)
    # stopped, the watchdog's reason shown while it lasts (the new page's own commands may
    # end it before the first look): as before, a stop within 10 s is what is asserted
    wait_until(
        lambda: abs(state(watcher)["cmd"]["omega"]) < 1e-3,
        10,
        "the robot to stop with its page closed and no key-up",
        show=lambda: state(watcher)["safety"],
    )
    watcher.close()


def test_find_searches_the_map_and_comes_back_to_the_pose(browser: Any, sim: Any) -> None:
    # last: the robot has been driven around by every test above, and tracked all the way
    page, _ = open_cockpit(browser, sim)
    before, odom_before = state(page)["pose"], state(page)["odom"]
    page.click("#relocalize")
    wait_until(
        lambda: state(page)["localizing"], 3, "the search to start", show=lambda: motion(page)
    )
    wait_until(
        lambda: page.inner_text("#pose").startswith("searching the map"),
        3,
        "the pose panel to say it searches",
    )
    # one view can fit several places; the operator turns on the spot to show the robot more
    for _ in range(10):
        page.keyboard.press("ArrowLeft")  # 20 °/s
    wait_until(
        lambda: not state(page)["localizing"], 40, "the search to end", show=lambda: motion(page)
    )
    page.keyboard.press("Space")
    wait_until(
        lambda: abs(state(page)["cmd"]["omega"]) < 1e-6,
        3,
        "Space to stop the turn",
        show=lambda: motion(page),
    )
    page.click("#estop")  # Space latched the e-stop: released, for the tests after
    wait_until(lambda: not state(page)["estop"], 3, "the e-stop released")
    after, odom_after = state(page)["pose"], state(page)["odom"]
    assert math.hypot(after["x"] - before["x"], after["y"] - before["y"]) < 0.1
    # the search found the heading it turned to, as far as odometry can tell: under the
    # simulated Pioneer's error model (config/errors/pioneer3dx.toml: the track 1.5 % wider
    # than described, the ICR spread 2-3 % off) odometry miscounts a turn by up to ~3 % of it
    turned = odom_after["theta"] - odom_before["theta"]
    mismatch = abs(math.remainder(after["theta"] - before["theta"] - turned, math.tau))
    assert mismatch < 0.02 + 0.03 * abs(turned), (mismatch, turned)
    assert not page.inner_text("#pose").startswith("searching the map")
    page.close()


def test_the_estop_key_only_engages_and_only_a_click_on_the_button_releases(
    browser: Any, sim: Any
) -> None:
    page, errors = open_cockpit(browser, sim)
    page.click("[data-mode=tank]")
    page.keyboard.down("KeyA")  # turning on the spot: nothing blocks it wherever the robot is
    wait_until(
        lambda: abs(state(page)["cmd"]["omega"]) > 0.05,
        5,
        "A to turn the robot",
        show=lambda: motion(page),
    )
    page.keyboard.press("Space")
    wait_until(
        lambda: state(page)["estop"] and abs(state(page)["cmd"]["omega"]) < 1e-6,
        3,
        "the e-stop key to engage the stop",
        show=lambda: motion(page),
    )
    # the key again, Escape, and keys on the focused button: none of them releases it
    page.keyboard.press("Space")
    robot_time_passes(page, 1.0, "time for the key's release to show, were there one")
    assert state(page)["estop"], "the e-stop key released the e-stop"
    assert "ENGAGED" in page.inner_text("#estop")
    page.keyboard.press("Escape")
    page.focus("#estop")
    page.keyboard.press("Enter")
    page.keyboard.press("Space")
    robot_time_passes(page, 1.0, "time for the keys' release to show, were there one")
    assert state(page)["estop"]
    assert abs(state(page)["cmd"]["omega"]) < 1e-6  # A still held: it stays stopped
    page.click("#estop")  # the deliberate act
    wait_until(
        lambda: not state(page)["estop"],
        3,
        "the button to release the e-stop",
        show=lambda: motion(page),
    )
    robot_time_passes(page, 0.5, "time for A to turn the robot, were it obeyed")
    # A is still down, but it went down before the stop: released, the robot does not drive off
    assert abs(state(page)["cmd"]["omega"]) < 1e-6
    page.keyboard.up("KeyA")
    assert page.inner_text("#estop") == "E-STOP"
    assert errors == []
    page.close()


def test_free_look_frees_the_mouse_without_stopping_and_the_modes_stay_clickable(
    browser: Any, sim: Any
) -> None:
    page, errors = open_cockpit(browser, sim)
    page.click("[data-mode=free_look]")
    locked = "document.pointerLockElement && document.pointerLockElement.id"
    page.click("#camera")
    wait_until(lambda: page.evaluate(locked) == "camera", 3, "the view to capture the mouse")
    page.keyboard.press("Escape")
    wait_until(lambda: page.evaluate(locked) is None, 3, "Escape to free the mouse")
    page.click("#camera")
    wait_until(lambda: page.evaluate(locked) == "camera", 3, "the view to capture the mouse again")
    # while captured every click lands on the view: a click on Tank frees the mouse...
    box = page.locator("[data-mode=tank]").bounding_box()
    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    wait_until(lambda: page.evaluate(locked) is None, 3, "a click on Tank to free the mouse")
    page.click("[data-mode=tank]", timeout=5_000)  # ...and the next one selects it
    wait_until(lambda: page.evaluate("window.freelook.mode") == "tank", 3, "Tank selected")
    robot_time_passes(page, 0.5, "time for a stop to show, were there one")
    assert not state(page)["estop"]  # freeing the mouse never stopped the robot
    page.click("[data-mode=free_look]")
    hint = page.inner_text("#camera-hint") + " " + page.inner_text("#keys-help")
    assert "Esc or a click frees the mouse" in hint
    assert "Space E-stop" in hint
    assert "Esc E-stop" not in hint
    assert "Space/Esc" not in hint
    assert errors == []
    page.close()


def test_the_link_shows_telemetry_and_video_apart_from_packets(browser: Any, sim: Any) -> None:
    page, errors = open_cockpit(browser, sim)
    wait_until(
        lambda: page.evaluate("window.freelook.framesPainted") > 5,
        20,
        "more than 5 camera frames painted",
    )
    wait_until(
        lambda: page.evaluate("window.freelook.graph.length") > 20,
        10,
        "more than 20 points on the link graph",
    )
    s = state(page)
    packets = s["link"]["down"]["rx_rate_hz"]
    telemetry, fps = s["rates"]["telemetry_hz"], s["rates"]["video_fps"]
    assert telemetry > 0
    assert fps > 0
    assert packets > telemetry + 2 * fps  # a camera frame is many packets
    shown = page.inner_text("#down-stats")
    assert shown.startswith("telemetry ")
    assert " fps" in shown
    # the graph's scale is the rates' (commands, telemetry, video), never the packets'
    scale, rates = page.evaluate(
        "[window.freelook.graphScale, Math.max(40, ...window.freelook.graph.map("
        "(r) => Math.max(r[1], r[2], r[3])))]"
    )
    assert scale == pytest.approx(1.1 * rates, rel=0.15)  # drawn a state or two ago
    assert scale < packets
    assert errors == []
    page.close()
