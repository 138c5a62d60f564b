"""The arm in the cockpit end to end: ``freelook sim --robot taros`` in ``eod``, real Chromium,
three.js from the npm registry. Jogged into the body the arm slows, stops and its boxes turn
red in the 3-D view; jogged back out it moves."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_cockpit import screenshot_path  # type: ignore[import-not-found]

from conftest import Sim, start_sim  # type: ignore[import-not-found]

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def taros(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Sim]:
    running = start_sim(tmp_path_factory.mktemp("taros"), "--robot", "taros", "--world", "eod")
    yield running
    running.stop()
    if running.process.stdout is not None:
        running.process.stdout.close()


@pytest.fixture(autouse=True)
def _pages_closed(browser: Any) -> Iterator[None]:
    """Every page a test opened is closed after it, failed or not: a page left open with a key
    held would go on jogging the arm in the next test."""
    yield
    for context in browser.contexts:
        for page in context.pages:
            page.close()


def elbow(page: Any) -> float:
    return float(page.evaluate("window.freelook.last.arm.positions[2]"))


def states_seen(page: Any) -> int:
    return int(page.evaluate("window.freelook.armStates"))


def out_of_the_body(page: Any) -> None:
    """The elbow raised until the check is clear, when an earlier test that failed left the
    arm pressed into the body (the module's tests share one sim): from there a Cartesian
    jog up is stopped (it does not move every touching pair apart)."""
    if page.evaluate("window.freelook.last.arm.phase") == "clear":
        return
    page.keyboard.down("KeyE")
    page.wait_for_function("window.freelook.last.arm.phase === 'clear'", timeout=30_000)
    page.keyboard.up("KeyE")


def test_jogged_into_the_body_the_arm_slows_stops_turns_red_and_backs_out(
    browser: Any, taros: Sim, tmp_path: Path
) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    errors: list[str] = []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(taros.url)
    page.wait_for_function("window.freelook.last && window.freelook.last.arm", timeout=60_000)
    page.wait_for_function("window.freelook.arm3d && window.freelook.arm3d.view.meshes.length")
    assert page.evaluate("window.freelook.arm3d.view.meshes.length") == 26
    page.click("#arm-mode")
    page.wait_for_function("window.freelook.last.mode === 'arm'")
    page.wait_for_function("window.freelook.last.arm.phase === 'clear'")
    assert page.evaluate("window.freelook.arm3d.redBoxes()") == []
    start = elbow(page)
    before = len(page.evaluate("window.freelook.armPhases"))
    said_before = len(taros.lines)  # what the sim said before the jog

    page.keyboard.down("KeyD")  # the elbow down, the fingers onto the bumper
    page.wait_for_function("window.freelook.last.arm.phase === 'stop'", timeout=30_000)
    phases = page.evaluate("window.freelook.armPhases")[before:]
    # it slowed before it stopped (slowed to a quarter, the arm may clear the slow phase's
    # look-ahead and speed up again before the stop phase's catches it: slow, clear, stop);
    # the slow phase lasts about 0.16 s at this jog, so a robot process stalled longer than
    # that (the arm moving on between two checks, as a real one would) goes from clear to
    # stop, and must say it stalled
    if "slow" not in phases[: phases.index("stop")]:
        stalls = [line for line in taros.lines[said_before:] if "the process stalled" in line]
        assert stalls, phases
    assert phases[-1] == "stop"
    red = set(page.evaluate("window.freelook.arm3d.redBoxes()"))
    assert {"bumper", "finger_left", "finger_right"} <= red
    assert page.locator("#arm-phase").inner_text() == "stop"
    seen = states_seen(page)
    page.wait_for_function(f"window.freelook.armStates > {seen + 10}")  # the lag settles
    stopped = elbow(page)
    assert stopped < start - 0.3
    seen = states_seen(page)
    page.wait_for_function(f"window.freelook.armStates > {seen + 15}")  # still pressing on
    assert elbow(page) == pytest.approx(stopped, abs=1e-3)
    assert page.evaluate("window.freelook.last.arm.phase") == "stop"
    page.screenshot(path=screenshot_path(tmp_path, "cockpit-arm-stop.png"))
    page.keyboard.up("KeyD")

    page.keyboard.down("KeyE")  # back up, out of the stop
    page.wait_for_function(f"window.freelook.last.arm.positions[2] > {stopped + 0.2}")
    page.wait_for_function("window.freelook.last.arm.phase === 'clear'")
    page.keyboard.up("KeyE")
    page.wait_for_function("window.freelook.arm3d.redBoxes().length === 0")
    assert page.evaluate("window.freelook.arm3d.view.rendered") > 0  # WebGL drew the view
    assert errors == []
    page.close()


PAD = """
(() => {
  window.__pad = { id: 'fake standard pad', mapping: 'standard', connected: true, index: 0,
    axes: [0, 0, 0, 0],
    buttons: Array.from({length: 17}, () => ({pressed: false, value: 0})), timestamp: 0 };
  navigator.getGamepads = () => [window.__pad];
})();
"""


def palm_height(page: Any) -> float:
    return float(
        page.evaluate(
            "(() => { const a = window.freelook.hello.arm;"
            " const k = a.boxes.findIndex((b) => b.name === 'palm');"
            " return window.freelook.last.arm.centres[k][2]; })()"
        )
    )


def test_cartesian_keys_raise_the_tool_and_the_gamepad_jogs_behind_its_deadman(
    browser: Any, taros: Sim
) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    page.add_init_script(PAD)
    page.goto(taros.url)
    page.wait_for_function("window.freelook.last && window.freelook.last.arm", timeout=60_000)
    page.click("#arm-mode")
    page.wait_for_function("window.freelook.last.mode === 'arm'")
    out_of_the_body(page)
    page.keyboard.press("KeyC")  # the tool point, in the robot's frame
    assert page.is_checked("#arm-cartesian")
    low = palm_height(page)
    page.keyboard.down("KeyR")  # up
    page.wait_for_function(
        "(() => { const a = window.freelook.hello.arm;"
        " const k = a.boxes.findIndex((b) => b.name === 'palm');"
        f" return window.freelook.last.arm.centres[k][2] > {low + 0.1}; }})()"
    )
    page.keyboard.up("KeyR")
    page.keyboard.press("KeyC")  # joint by joint again
    assert not page.is_checked("#arm-cartesian")

    page.wait_for_function(
        "window.freelook.last.arm.velocities.every((v) => Math.abs(v) < 1e-4)"
    )  # the jog's lag has run out
    shoulder = float(page.evaluate("window.freelook.last.arm.positions[1]"))
    page.evaluate("window.__pad.axes[1] = -1; 0")  # left stick forward, deadman not held
    seen = int(page.evaluate("window.freelook.armStates"))
    page.wait_for_function(f"window.freelook.armStates > {seen + 10}")
    assert float(page.evaluate("window.freelook.last.arm.positions[1]")) == pytest.approx(
        shoulder, abs=2e-3
    )
    page.evaluate("window.__pad.buttons[4] = {pressed: true, value: 1}; 0")  # LB held
    page.wait_for_function(f"window.freelook.last.arm.positions[1] > {shoulder + 0.05}")
    page.evaluate("window.__pad.buttons[4] = {pressed: false, value: 0}; 0")  # let go
    page.wait_for_function("Math.abs(window.freelook.last.arm.velocities[1]) < 1e-3")
    page.close()


def canvas_sum(page: Any) -> float:
    return float(
        page.evaluate(
            "(() => { const c = document.getElementById('armcam');"
            " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            " let s = 0; for (let i = 0; i < d.length; i += 4) s += d[i] + d[i + 1] + d[i + 2];"
            " return s / (d.length / 4); })()"
        )
    )


#: keeps the arm camera's picture as it is now, for :func:`changed_share`
KEEP_PICTURE = """() => { const c = document.getElementById('armcam');
  window.__armPicture = c.getContext('2d').getImageData(0, 0, c.width, c.height).data.slice(); }"""


def changed_share(page: Any) -> float:
    """The share of the arm camera's pixels that changed clearly (by more than 48 of the three
    channels' 765) since :data:`KEEP_PICTURE` kept it."""
    return float(
        page.evaluate(
            "(() => { const c = document.getElementById('armcam'), was = window.__armPicture;"
            " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
            " if (d.length !== was.length) return 1;"
            " let n = 0; for (let i = 0; i < d.length; i += 4) {"
            "   const e = Math.abs(d[i] - was[i]) + Math.abs(d[i + 1] - was[i + 1])"
            "     + Math.abs(d[i + 2] - was[i + 2]);"
            "   if (e > 48) n++; }"
            " return n / (d.length / 4); })()"
        )
    )


def test_the_arm_pane_shows_the_stereo_pair_left_eye_or_side_by_side(
    browser: Any, taros: Sim, tmp_path: Path
) -> None:
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(taros.url)
    page.wait_for_function("window.freelook.last && window.freelook.last.arm", timeout=60_000)
    assert page.evaluate("window.freelook.hello.cameras.map((c) => [c.stream, c.name])") == [
        [1, "arm_stereo"],
        [2, "thermal"],
    ]
    page.click("#arm-mode")
    page.wait_for_function("window.freelook.last.mode === 'arm'")
    view = "window.freelook.armCamera.view"
    page.wait_for_function(f"{view}.framesPainted > 3", timeout=30_000)
    assert page.locator("#armcam").is_visible()
    assert page.evaluate(f"[{view}.lastStream, {view}.lastLayout]") == [1, 1]
    assert page.evaluate(f"[{view}.frameWidth, {view}.frameHeight]") == [640, 240]
    assert page.evaluate("document.getElementById('armcam').width") == 320  # the left eye
    assert canvas_sum(page) > 30  # a rendered view, not a blank canvas
    page.check("#armcam-sbs")
    page.evaluate("document.activeElement.blur()")  # keys go to the cockpit, not the checkbox
    seen = int(page.evaluate(f"{view}.framesPainted"))
    page.wait_for_function(f"{view}.framesPainted > {seen + 2}")
    assert page.evaluate("document.getElementById('armcam').width") == 640  # both eyes
    page.screenshot(path=screenshot_path(tmp_path, "cockpit-arm-camera.png"))
    # the camera rides the wrist: pitching the wrist up changes what it sees (at the ready
    # pose the pair looks down more steeply than the 60 degrees the render can tilt, so the
    # wrist is raised past that)
    page.evaluate(KEEP_PICTURE)
    wrist = float(page.evaluate("window.freelook.last.arm.positions[3]"))
    page.keyboard.down("KeyR")
    page.wait_for_function(f"window.freelook.last.arm.positions[3] > {wrist + 0.8}", timeout=30_000)
    page.keyboard.up("KeyR")
    page.wait_for_function("window.freelook.last.arm.velocities.every((v) => Math.abs(v) < 1e-3)")
    # a picture the camera took after the arm came to rest (its capture stamp, on the robot's
    # clock, past the report's), however many frames a busy machine still had on the way
    rest = float(page.evaluate("window.freelook.last.t"))
    page.wait_for_function(f"{view}.lastStamp > {rest}", timeout=30_000)
    changed = changed_share(page)
    assert changed > 0.1, changed  # another view (21 % here; at rest 0 %)
    assert errors == []
    page.close()


def test_dispose_starts_the_task_and_a_mode_button_takes_over(
    browser: Any, taros: Sim, tmp_path: Path
) -> None:
    """The Dispose button hands the robot its task; the phase chip follows it; choosing a
    drive mode takes over (the task pauses, the base stops); Dispose again resumes the phase."""
    page = browser.new_page(viewport={"width": 1500, "height": 900})
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(taros.url)
    page.wait_for_function("window.freelook.last && window.freelook.last.autonomy", timeout=60_000)
    assert page.locator("#autonomy-mode").is_visible()
    odom = "window.freelook.last.odom"
    start = page.evaluate(f"[{odom}.x, {odom}.y, {odom}.theta]")
    page.click("#autonomy-mode")
    page.wait_for_function("window.freelook.last.mode === 'autonomy'")
    page.wait_for_function("window.freelook.last.autonomy.phase !== 'idle'")
    # searching, the robot turns on the spot or drives: it moves by itself
    page.wait_for_function(
        f"Math.abs({odom}.theta - {start[2]}) > 0.1"
        f" || Math.hypot({odom}.x - {start[0]}, {odom}.y - {start[1]}) > 0.05",
        timeout=30_000,
    )
    assert page.locator("#task-chip").inner_text().startswith("task: ")
    assert not page.evaluate("window.freelook.last.autonomy.paused")
    page.screenshot(path=screenshot_path(tmp_path, "cockpit-dispose.png"))

    page.click("button[data-mode='keyboard']")  # the operator takes over
    page.wait_for_function("window.freelook.last.mode === 'keyboard'")
    page.wait_for_function("window.freelook.last.autonomy.paused")
    phase = page.evaluate("window.freelook.last.autonomy.phase")
    page.wait_for_function(
        "Math.abs(window.freelook.last.v) < 1e-3 && Math.abs(window.freelook.last.omega) < 1e-3"
    )
    assert "(paused)" in page.locator("#task-chip").inner_text()

    page.click("#autonomy-mode")  # handed back: the task goes on where it was
    page.wait_for_function("window.freelook.last.mode === 'autonomy'")
    page.wait_for_function("!window.freelook.last.autonomy.paused")
    resumed = page.evaluate("window.freelook.last.autonomy.phase")
    assert resumed == phase or phase == "search_object"  # a search may find the object at once
    page.click("button[data-mode='keyboard']")
    page.wait_for_function("window.freelook.last.autonomy.paused")
    assert errors == []
    page.close()
