"""The cockpit on a phone, in real Chromium with touch emulation (a 390 x 844 viewport, touch
and a mobile browser) against a real ``freelook sim``: the two on-screen sticks drive Free
Look, both at once (fingers put down, moved and lifted through CDP's
``Input.dispatchTouchEvent``, as a touch screen gives them); the e-stop is in view without
scrolling and over the sticks, and a tap on it stops the robot, which stays stopped with a
finger still pushing a stick until the e-stop is tapped again (a double tap's second tap is no
release); a hidden page (visibilitychange, or pagehide alone) stops the robot within the
watchdog's time plus one control cycle, and a finger held on a stick through it never drives.

A hidden page is emulated as in tests/web/test_motion_stop.py: headless Chromium keeps every
page visible, so ``document.hidden`` says hidden and ``visibilitychange`` is dispatched."""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from typing import Any

import pytest
from cockpit_scenes import motion, robot_time_passes, state, wait_until

pytestmark = pytest.mark.browser

PHONE = {"width": 390, "height": 844}
#: the page's outgoing messages, in its own clock (ms)
SENT = """
window.__sent = [];
const send = WebSocket.prototype.send;
WebSocket.prototype.send = function (data) {
  if (typeof data === "string") window.__sent.push([performance.now(), JSON.parse(data)]);
  return send.call(this, data);
};
"""
HIDE = """(hidden) => {
  Object.defineProperty(document, "hidden", { configurable: true, get: () => hidden });
  Object.defineProperty(document, "visibilityState", {
    configurable: true, get: () => (hidden ? "hidden" : "visible"),
  });
  const at = performance.now();
  document.dispatchEvent(new Event("visibilitychange"));
  return at;
}"""
#: the page put away without a visibility change (pagehide: a page left, a browser that
#: freezes it), and back (pageshow)
PAGEHIDE = """(hidden) => {
  const at = performance.now();
  const kind = hidden ? "pagehide" : "pageshow";
  window.dispatchEvent(new PageTransitionEvent(kind, { persisted: true }));
  return at;
}"""
#: the last "axes" message the page sent
LAST_AXES = "window.__sent.filter(([, m]) => m.type === 'axes').at(-1)[1]"
#: every drive axis an "axes" message carries, the gamepad's and the sticks' alike
AXES = {"type", "mode", "forward", "left", "turn", "pan", "tilt"}


class Fingers:
    """Fingers on a touch screen through CDP: each call sends the points down now (a finger
    put down or moved), or lifts some; Chromium makes pointer and touch events of them."""

    def __init__(self, page: Any) -> None:
        self._cdp = page.context.new_cdp_session(page)
        self._down: dict[int, tuple[float, float]] = {}

    def _send(self, kind: str, points: dict[int, tuple[float, float]]) -> None:
        touch = [{"x": x, "y": y, "id": i} for i, (x, y) in points.items()]
        self._cdp.send("Input.dispatchTouchEvent", {"type": kind, "touchPoints": touch})

    def down(self, finger: int, x: float, y: float) -> None:
        self._down[finger] = (x, y)
        self._send("touchStart", self._down)

    def move(self, finger: int, x: float, y: float, steps: int = 8) -> None:
        x0, y0 = self._down[finger]
        for k in range(1, steps + 1):
            self._down[finger] = (x0 + (x - x0) * k / steps, y0 + (y - y0) * k / steps)
            self._send("touchMove", self._down)

    def up(self, *fingers: int) -> None:
        lifted = {f: self._down.pop(f) for f in fingers}
        self._send("touchEnd", lifted)

    def cancel(self) -> None:
        self._down.clear()
        self._send("touchCancel", {})

    def tap(self, finger: int, x: float, y: float) -> None:
        self.down(finger, x, y)
        self.up(finger)


def centre(page: Any, selector: str) -> tuple[float, float]:
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"] / 2, box["y"] + box["height"] / 2


def reach(page: Any, selector: str) -> float:
    """How far a finger moves for a full deflection of the stick (touch-sticks.js REACH)."""
    box = page.locator(selector).bounding_box()
    assert box is not None, selector
    return float(box["width"]) * 0.4


def camera_pose(s: dict[str, Any]) -> tuple[float, float, float]:
    pose = s["pose"]
    return pose["x"], pose["y"], pose["theta"] + s["pan"]


def in_camera_frame(before: tuple[float, float, float], after: tuple[float, float, float]) -> Any:
    """How far the camera went, forward and to its left, in its frame at ``before``."""
    dx, dy, psi = after[0] - before[0], after[1] - before[1], before[2]
    return dx * math.cos(psi) + dy * math.sin(psi), -dx * math.sin(psi) + dy * math.cos(psi)


@pytest.fixture
def phone(browser: Any, sim: Any) -> Iterator[Any]:
    """A phone's page on the cockpit, in Free Look, its picture and the robot's state in."""
    context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.add_init_script(SENT)
    page.goto(sim.url)
    page.wait_for_function(
        "window.freelook && window.freelook.last && window.freelook.last.pose"
        " && window.freelook.framesPainted > 3",
        polling=50,
        timeout=60_000,
    )
    page.tap("[data-mode=free_look]")
    page.wait_for_function("window.freelook.last.mode === 'free_look'", timeout=10_000)
    page.evaluate("window.scrollTo(0, 0)")
    yield page
    context.close()
    assert errors == []


def still(page: Any) -> bool:
    cmd = state(page)["cmd"]
    return abs(cmd["v"]) < 1e-3 and abs(cmd["omega"]) < 1e-3


def moving(page: Any) -> bool:
    """The robot driving (Free Look moves the camera: the chassis may drive either way)."""
    return abs(state(page)["cmd"]["v"]) > 0.05


def test_the_phone_shows_both_sticks_and_the_estop_over_them_without_scrolling(
    phone: Any, browser: Any, sim: Any
) -> None:
    for selector in ("#stick-move", "#stick-turn", "#estop"):
        box = phone.locator(selector).bounding_box()
        assert phone.is_visible(selector), selector
        assert box["x"] >= 0, (selector, box)
        assert box["x"] + box["width"] <= PHONE["width"], (selector, box)
        assert box["y"] >= 0, (selector, box)
        assert box["y"] + box["height"] <= PHONE["height"], (selector, box)
        assert box["width"] >= 44, (selector, box)  # a finger's target
    # the e-stop is what a finger on its centre touches, and it stays there when the page scrolls
    x, y = centre(phone, "#estop")
    on_top = "([x, y]) => document.elementFromPoint(x, y).id"
    assert phone.evaluate(on_top, [x, y]) == "estop"
    phone.evaluate("window.scrollTo(0, document.body.scrollHeight)")
    assert phone.evaluate("window.scrollY") > 100  # the page is longer than the screen
    assert centre(phone, "#estop") == (x, y)
    assert phone.evaluate(on_top, [x, y]) == "estop"
    assert "left stick moves" in (phone.text_content("#keys-help") or "")
    # a desktop page (no touch) has no sticks
    desk = browser.new_page(viewport={"width": 1500, "height": 900})
    try:
        desk.goto(sim.url)
        desk.wait_for_function("window.freelook && window.freelook.last", timeout=30_000)
        assert not desk.is_visible("#stick-move")
        assert not desk.is_visible("#stick-turn")
        assert "left stick moves" not in (desk.text_content("#keys-help") or "")
    finally:
        desk.close()


def test_both_sticks_at_once_move_the_camera_forward_and_turn_it_left(phone: Any) -> None:
    fingers = Fingers(phone)
    (mx, my), (tx, ty) = centre(phone, "#stick-move"), centre(phone, "#stick-turn")
    r = reach(phone, "#stick-move")
    start = phone.evaluate("performance.now()")
    before = camera_pose(state(phone))
    fingers.down(1, mx, my)
    fingers.down(2, tx, ty)
    fingers.move(1, mx, my - r)  # left stick up: forward
    fingers.move(2, tx - r, ty)  # right stick left: turn left
    wait_until(
        lambda: state(phone)["cmd"]["v"] > 0.05 and state(phone)["cmd"]["omega"] > 0.05,
        5,
        "both sticks to drive forward and turn left",
        show=lambda: motion(phone),
    )
    time.sleep(1.5)  # both held
    fingers.up(1, 2)
    wait_until(lambda: still(phone), 3, "the stop once both are lifted", show=lambda: motion(phone))
    after = camera_pose(state(phone))
    forward, _ = in_camera_frame(before, after)
    turned = math.remainder(after[2] - before[2], 2 * math.pi)
    print(f"sticks: {forward:.2f} m forward, turned {math.degrees(turned):.0f} deg left")
    assert forward > 0.1, (before, after)
    assert turned > math.radians(10), (before, after)
    sent = phone.evaluate(
        "(t) => window.__sent.filter(([at, m]) => at >= t && m.type === 'axes').map(([, m]) => m)",
        start,
    )
    # the sticks send the gamepad's message, nothing of their own; full travel is ±1
    assert sent
    assert all(set(m) == AXES for m in sent), sent[:3]
    assert max(m["forward"] for m in sent) == pytest.approx(1.0)
    assert max(m["turn"] for m in sent) == pytest.approx(1.0)
    assert all(-1 <= m[k] <= 1 for m in sent for k in AXES - {"type", "mode"})
    assert not any(m["forward"] or m["turn"] for m in sent[-1:])  # zero on release


def test_the_move_stick_to_the_right_moves_the_camera_sideways_and_touchcancel_stops_it(
    phone: Any,
) -> None:
    fingers = Fingers(phone)
    (mx, my), r = centre(phone, "#stick-move"), reach(phone, "#stick-move")
    before = camera_pose(state(phone))
    fingers.down(1, mx, my)
    fingers.move(1, mx + r, my)  # right, in the camera's frame
    wait_until(
        lambda: phone.evaluate(LAST_AXES)["left"] < -0.9,
        3,
        "the stick's full right sent",
    )
    wait_until(
        lambda: in_camera_frame(before, camera_pose(state(phone)))[1] < -0.1,
        8,
        "the camera to move 0.1 m to its right",
        show=lambda: motion(phone),
    )
    fingers.cancel()  # the browser takes the touch (a system gesture, the screen locked)
    wait_until(lambda: still(phone), 3, "the stop on touchcancel", show=lambda: motion(phone))
    assert phone.text_content("#input-state") == "idle"
    forward, left = in_camera_frame(before, camera_pose(state(phone)))
    print(f"sideways: {-left:.2f} m right, {forward:.2f} m forward")
    assert abs(forward) < -left, (forward, left)


def test_a_tapped_estop_stops_the_sticks_and_latches_until_tapped_again(phone: Any) -> None:
    fingers = Fingers(phone)
    (mx, my), r = centre(phone, "#stick-move"), reach(phone, "#stick-move")
    fingers.down(1, mx, my)
    fingers.move(1, mx, my + r)  # back
    wait_until(lambda: moving(phone), 5, "the stick to drive back", show=lambda: motion(phone))
    fingers.tap(2, *centre(phone, "#estop"))  # the other thumb; the first stays on its stick
    wait_until(
        lambda: state(phone)["estop"] and still(phone),
        3,
        "the tapped e-stop engaged and the robot stopped",
        show=lambda: motion(phone),
    )
    assert "tap to release" in (phone.text_content("#estop") or "")  # a phone has no click
    fingers.move(1, mx + 3, my + r)  # the finger still pushing, and moving
    robot_time_passes(phone, 0.8, "time for the stick to drive, were it obeyed")
    assert still(phone), motion(phone)
    assert state(phone)["estop"], motion(phone)
    fingers.up(1)
    fingers.down(1, mx, my)  # put down again: the robot's e-stop holds
    fingers.move(1, mx, my + r)
    robot_time_passes(phone, 0.8, "time for the stick to drive, were it obeyed")
    assert still(phone), motion(phone)
    assert state(phone)["estop"], motion(phone)
    fingers.up(1)
    fingers.tap(2, *centre(phone, "#estop"))  # the deliberate release
    wait_until(lambda: not state(phone)["estop"], 3, "the e-stop released")
    fingers.down(1, mx, my)
    fingers.move(1, mx, my - r)
    wait_until(lambda: moving(phone), 5, "the stick to drive once released")
    fingers.up(1)
    wait_until(lambda: still(phone), 3, "the stop on lifting the finger")


def test_a_double_tap_on_the_estop_engages_it_and_does_not_release_it(phone: Any) -> None:
    fingers = Fingers(phone)
    x, y = centre(phone, "#estop")
    first = time.monotonic()
    fingers.tap(1, x, y)
    fingers.tap(1, x, y)  # at once: a double tap
    apart = time.monotonic() - first
    phone.wait_for_function("window.freelook.estop === true", polling=10, timeout=3000)
    time.sleep(0.8)  # the next tap past the page's 600 ms, and time for a release to show
    assert state(phone)["estop"], (motion(phone), f"the two taps went {apart:.3f} s apart")
    assert "ENGAGED" in phone.inner_text("#estop")
    fingers.tap(1, x, y)  # a tap of its own: the release
    wait_until(lambda: not state(phone)["estop"], 3, "the e-stop released")


@pytest.mark.parametrize("hide", [HIDE, PAGEHIDE], ids=["visibilitychange", "pagehide"])
def test_a_hidden_phone_page_stops_the_robot_within_the_watchdog_and_one_cycle(
    phone: Any, hide: str
) -> None:
    from freelook.config import load_robot

    config = load_robot("pioneer3dx")  # the sim's robot
    bound = config.safety.watchdog_timeout + config.link.control_period
    fingers = Fingers(phone)
    (mx, my), r = centre(phone, "#stick-move"), reach(phone, "#stick-move")
    fingers.down(1, mx, my)
    fingers.move(1, mx, my - r)
    wait_until(lambda: moving(phone), 5, "the stick to drive forward")
    hidden_at = phone.evaluate(hide, True)
    phone.wait_for_function(
        "Math.abs(window.freelook.last.cmd.v) < 1e-3"
        " && Math.abs(window.freelook.last.cmd.omega) < 1e-3",
        polling=10,
        timeout=5_000,
    )
    seen = (phone.evaluate("performance.now()") - hidden_at) / 1e3
    print(f"hidden: the robot's state says stopped {seen:.3f} s after it")
    assert seen <= bound, (seen, bound)  # the robot stopped before its state said so
    fingers.move(1, mx + r, my - r)  # the finger still on the stick, moving: nothing drives
    robot_time_passes(phone, 0.8, "time for the stick to drive, were it obeyed")
    assert still(phone), motion(phone)
    sent = phone.evaluate(
        "(t) => window.__sent.filter(([at, m]) => at >= t && m.type === 'axes').map(([, m]) => m)",
        hidden_at,
    )
    assert sent, sent  # zero at once
    assert not any(m["forward"] or m["left"] or m["turn"] for m in sent), sent
    assert "page was hidden" in (phone.text_content("#guard-text") or "")

    phone.evaluate(hide, False)  # shown again: still stopped until "resume driving"
    robot_time_passes(phone, 0.3, "time for the stick to drive, were it obeyed")
    assert still(phone), motion(phone)
    fingers.up(1)  # a tap is a click only with no other finger down
    fingers.tap(1, *centre(phone, "#guard-resume"))
    phone.wait_for_function("window.freelook.guard.cause === ''", timeout=5000)
    robot_time_passes(phone, 0.3, "time for the lifted stick to drive, were it obeyed")
    assert still(phone), motion(phone)
    fingers.down(1, mx, my)  # put down again: it drives
    fingers.move(1, mx, my + r)
    wait_until(lambda: moving(phone), 5, "the stick to drive once put down again")
    fingers.up(1)
    wait_until(lambda: still(phone), 3, "the stop on lifting the finger")
