"""The cockpit's own motion stop, in real Chromium against a ``freelook sim`` session (robot,
station and web server in this process, so the robot's wheel commands and the station's
camera frames are in reach): a frozen picture stops the page's motion commands once no frame
was painted for the set time (1 s by default), and a hidden page stops the robot within the
watchdog's time plus one control cycle. Either stop latches: its cause gone, only a click on
its button releases it, and a key held through it never drives until it is pressed again.

The picture freezes where a real one does: the station gets no more of the driving camera's
frames (a camera or its link that stops delivering), while telemetry flows on. Headless
Chromium keeps every page visible (a tab brought to the front over it, a minimised window and
CDP's ``Page.setWebLifecycleState`` leave ``document.visibilityState`` "visible"), so the page
is hidden as the browser tells it: ``document.hidden`` and ``visibilityState`` say hidden and
``visibilitychange`` is dispatched, then the robot's wheels are watched.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from waiting import wait_until

pytestmark = pytest.mark.browser

TICK_S = 0.05  # the page's input poll (freshness.js TICK_MS)
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
  return [performance.timeOrigin + at, at];
}"""


class Session:
    """A running session on its own thread and event loop: its URL, the robot's wheel
    commands (wall s, left, right), and ``freeze``: while set, the station gets no frames of
    the driving camera."""

    def __init__(self) -> None:
        self.url = ""
        self.wheels: list[tuple[float, float, float]] = []
        self.freeze = False
        self.watchdog = 0.0
        self.cycle = 0.0
        self._ready = threading.Event()
        self._stop: asyncio.Event | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self._error: BaseException | None = None

    def start(self) -> None:
        self._thread.start()
        assert self._ready.wait(120), "the session did not start"
        if self._error is not None:
            raise self._error

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    async def _main(self) -> None:
        from freelook.config import load_robot
        from freelook.launch._bench import _free_port
        from freelook.launch._session import SessionOptions, run_session
        from freelook.maps import load_world

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        config = load_robot("pioneer3dx")
        self.watchdog = config.safety.watchdog_timeout
        self.cycle = config.link.control_period
        started = asyncio.Event()
        parts: dict[str, Any] = {}
        options = SessionOptions(
            host="127.0.0.1", port=_free_port(), record=None, open_browser=False, camera=True
        )
        task = asyncio.create_task(
            run_session(config, load_world("lab"), options, lambda _: None, started, parts)
        )
        try:
            waiting = asyncio.create_task(started.wait())
            await asyncio.wait({task, waiting}, return_when=asyncio.FIRST_COMPLETED)
            if task.done():
                task.result()
            self._spy(parts["server"].program.hardware.drive)
            station = parts["station"]
            on_frame = station._on_frame

            def frames(frame: Any, now: float | None = None) -> None:
                if self.freeze and frame.stream == 0:
                    return  # the driving camera's frames stop reaching the station
                on_frame(frame, now)

            station._on_frame = frames
            self.url = parts["url"]
        except BaseException as error:
            self._error = error
            self._ready.set()
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return
        self._ready.set()
        await self._stop.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    def _spy(self, drive: Any) -> None:
        """Notes the track speeds of every command the robot's drive gets (a drive command
        carrying them, or, on a drive that takes only those, the track speeds alone)."""
        if not hasattr(drive, "command_wheels"):
            command = drive.command

            def spy(given: Any) -> None:
                self.wheels.append((time.time(), given.v_left, given.v_right))
                command(given)

            drive.command = spy
            return
        wheels = drive.command_wheels

        def track(left: float, right: float) -> None:
            self.wheels.append((time.time(), left, right))
            wheels(left, right)

        drive.command_wheels = track

    def moving_after(self, t: float) -> bool:
        return any(w[0] >= t and abs(w[1]) + abs(w[2]) > 1e-3 for w in self.wheels)

    def first_zero_after(self, t: float) -> float | None:
        return next((w[0] for w in self.wheels if w[0] >= t and abs(w[1]) + abs(w[2]) < 1e-3), None)


@pytest.fixture(scope="module")
def session() -> Iterator[Session]:
    running = Session()
    running.start()
    yield running
    running.stop()


def open_free_look(browser: Any, session: Session) -> Any:
    # the cockpit's own stop as a user has it (its default 1 s), not the other tests' 10 s
    page = browser.new_page(viewport={"width": 1500, "height": 900}, steady_picture=False)
    page.add_init_script(SENT)
    page.goto(session.url)
    page.wait_for_function(
        "window.freelook && window.freelook.last && window.freelook.last.pose"
        " && window.freelook.framesPainted > 3"
        " && document.getElementById('link-state').textContent === 'link: up'",
        polling=50,
        timeout=60_000,
    )
    page.click("[data-mode=free_look]")
    page.wait_for_function("window.freelook.last.mode === 'free_look'", timeout=10_000)
    return page


def axes_since(page: Any, t: float) -> list[tuple[float, bool]]:
    """The page's axes commands sent since ``t`` (page ms): (time, moving)."""
    sent = page.evaluate(
        "(t) => window.__sent.filter(([at, m]) => at >= t && m.type === 'axes')", t
    )
    keys = ("forward", "left", "turn", "pan", "tilt")
    return [(at, any(m[k] != 0 for k in keys)) for at, m in sent]


def page_now(page: Any) -> float:
    return float(page.evaluate("performance.now()"))


def drive_forward(page: Any, session: Session) -> None:
    t = time.time()
    page.keyboard.down("KeyW")
    wait_until(lambda: session.moving_after(t), 5, "the robot to drive on W")


def test_a_frozen_picture_stops_the_page_motion_within_the_set_time(
    browser: Any, session: Session
) -> None:
    page = open_free_look(browser, session)
    try:
        assert page.input_value("#freeze-s") == "1.0"  # the default, shown in the cockpit
        drive_forward(page, session)
        start = page_now(page)
        session.freeze = True
        page.wait_for_function("window.freelook.guard.cause !== ''", polling=20, timeout=10_000)
        painted = page.evaluate("window.freelook.framePaintedAt")
        engaged = page.evaluate("window.freelook.guard.at")
        page.wait_for_timeout(1500)  # W still held
        sent = axes_since(page, start)
        moving = [at for at, m in sent if m]
        stops = [at for at, m in sent if not m]
        # the last motion went out before the picture was set-time old plus one poll, the
        # zero at once after it, once, and nothing that moves since (W still held)
        late = (max(moving) - painted) / 1e3
        print(
            f"frozen: last motion {late:.3f} s after the last painted frame,"
            f" stop engaged {(engaged - painted) / 1e3:.3f} s after it"
        )
        assert late <= 1.0 + 2 * TICK_S, late
        assert len(stops) == 1, sent
        assert stops[0] >= engaged - 1, sent
        assert (engaged - painted) / 1e3 >= 1.0
        assert not [at for at in moving if at > engaged]
        assert "picture froze" in (page.text_content("#guard-text") or "")
        assert page.is_visible("#guard-note")
        assert page.is_disabled("#guard-resume")  # no fresh frame yet
        wall = page.evaluate("performance.timeOrigin + window.freelook.guard.at") / 1e3
        stopped = session.first_zero_after(wall)
        assert stopped is not None, session.wheels[-5:]
        print(f"frozen: wheels at zero {stopped - wall:.3f} s after the stop engaged")
        # within the watchdog and a cycle, as a page that went silent would be stopped
        assert stopped - wall <= session.watchdog + session.cycle, stopped - wall
        assert not session.moving_after(stopped + session.watchdog + session.cycle)

        # frames again: still stopped (latched) while W stays held, until a deliberate click
        session.freeze = False
        frames = page.evaluate("window.freelook.framesPainted")
        page.wait_for_function(f"window.freelook.framesPainted > {frames + 3}", timeout=10_000)
        page.wait_for_function("!document.getElementById('guard-resume').disabled", timeout=5000)
        again = page_now(page)
        page.focus("#guard-resume")
        page.keyboard.press("Enter")  # a key on the button is no release
        page.wait_for_timeout(400)
        assert page.evaluate("window.freelook.guard.cause") != ""
        page.click("#guard-resume")
        page.wait_for_function("window.freelook.guard.cause === ''", timeout=5000)
        page.wait_for_timeout(400)  # released, W still held from before: it does not drive
        assert not [at for at, m in axes_since(page, again) if m]
        assert not page.is_visible("#guard-note")
        page.keyboard.up("KeyW")
        drive_forward(page, session)  # pressed again: it drives
        page.keyboard.up("KeyW")
    finally:
        session.freeze = False
        page.close()


def test_a_hidden_page_stops_the_robot_within_the_watchdog_and_one_cycle(
    browser: Any, session: Session
) -> None:
    page = open_free_look(browser, session)
    try:
        drive_forward(page, session)
        wall, start = page.evaluate(HIDE, True)
        hidden_at = wall / 1e3
        page.wait_for_timeout(300)
        page.keyboard.down("KeyD")  # a motion input while hidden: dropped
        page.wait_for_timeout(1200)
        stopped = session.first_zero_after(hidden_at)
        assert stopped is not None, session.wheels[-5:]
        print(
            f"hidden: wheels at zero {stopped - hidden_at:.3f} s after visibilitychange"
            f" (watchdog {session.watchdog} s + cycle {session.cycle} s)"
        )
        assert stopped - hidden_at <= session.watchdog + session.cycle, stopped - hidden_at
        assert not session.moving_after(stopped + session.cycle)  # W and D held: nothing moves
        sent = axes_since(page, start)
        assert sent, sent  # zero at once
        assert not any(m for _, m in sent), sent  # then no motion
        assert "page was hidden" in (page.text_content("#guard-text") or "")

        page.evaluate(HIDE, False)  # shown again: still stopped until the click
        page.wait_for_timeout(300)
        assert page.evaluate("window.freelook.guard.cause") != ""
        page.click("#guard-resume")
        page.wait_for_function("window.freelook.guard.cause === ''", timeout=5000)
        page.keyboard.up("KeyD")
        page.keyboard.up("KeyW")
        drive_forward(page, session)
        page.keyboard.up("KeyW")
    finally:
        page.close()
