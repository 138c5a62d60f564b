"""The cockpit's keys to the robot's wheels, in both of Chromium's GPU-less configurations.

``web.cockpit_keys_disable_gpu`` (software compositing) and ``web.cockpit_keys_swiftshader``
(software GL, as on a machine without a GPU driver, where the page paints a few frames a
second): a fresh ``freelook sim`` session with its camera streaming, the cockpit in Free Look,
and W, S, A, D each pressed once, then W held and the e-stop key (Space) pressed. Each key is
held until the wheels answer it and 0.8 s more, and the next pressed 0.6 s after the wheels
stopped (each wait bounded by :data:`ANSWER_S`), so a slow answer is measured, not cut off.
Timed from the moment the browser took the key in (the key event's time stamp, wall clock)
until the robot applied the wheel command that answers it (wall clock, in the same process):
the first motion the way the key asks, the first zero after its release, the first zero after
Space. Met when every press moves and every release stops within 0.5 s and Space stops within
0.3 s.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from typing import Any

from freelook.bench import Case, benchmark
from freelook.hal import DriveCommand
from freelook.runtime import run_event_loop

CONFIGURATIONS = {
    "disable_gpu": ["--disable-gpu"],
    "swiftshader": ["--use-angle=swiftshader", "--enable-unsafe-swiftshader"],
}
MOVE_S, STOP_S, ESTOP_S = 0.5, 0.5, 0.3
#: s the session waits for the wheels to answer a key before it goes on without (the figure
#: then is infinite)
ANSWER_S = 10.0

_KEYS = """
window.__keys = [];
for (const kind of ['keydown', 'keyup']) {
  window.addEventListener(kind, (e) => {
    if (!e.repeat) window.__keys.push([performance.timeOrigin + e.timeStamp, kind, e.code]);
  }, true);
}
"""
_MOVING = {
    "KeyW": lambda left, right: left + right > 1e-3,
    "KeyS": lambda left, right: left + right < -1e-3,
    "KeyA": lambda left, right: abs(left) + abs(right) > 1e-3,
    "KeyD": lambda left, right: abs(left) + abs(right) > 1e-3,
}


def _after(wheels: list[tuple[float, float, float]], t: float, test: Any) -> float:
    """Seconds from ``t`` (wall ms) to the first wheel command after it that passes ``test``."""
    hit = next((w[0] for w in wheels if w[0] >= t and test(w[1], w[2])), None)
    return math.inf if hit is None else (hit - t) / 1e3


def _stopped(left: float, right: float) -> bool:
    return abs(left) + abs(right) < 1e-3


def latencies(keys: list[list[Any]], wheels: list[tuple[float, float, float]]) -> dict[str, float]:
    """Per key: ``KeyW_move_ms``, ``KeyW_stop_ms``, …, and ``estop_ms``, from the key events
    (wall ms, kind, code) and the wheel commands the robot applied (wall ms, left, right)."""
    out: dict[str, float] = {}
    for index, (t, kind, code) in enumerate(keys):
        if kind != "keydown" or code not in _MOVING or f"{code}_move_ms" in out:
            continue
        up = next(k[0] for k in keys[index:] if k[1] == "keyup" and k[2] == code)
        moved = _after(wheels, t, _MOVING[code])
        out[f"{code}_move_ms"] = 1e3 * (moved if t + moved * 1e3 <= up else math.inf)
        out[f"{code}_stop_ms"] = 1e3 * _after(wheels, up, _stopped)
    space = next((k[0] for k in keys if k[1] == "keydown" and k[2] == "Space"), None)
    out["estop_ms"] = math.inf if space is None else 1e3 * _after(wheels, space, _stopped)
    return out


class _WheelWatch:
    """The wheel commands the robot applies (wall ms, left, right), and a wait for the first
    that passes a test."""

    def __init__(self, drive: Any) -> None:
        self.wheels: list[tuple[float, float, float]] = []
        self._answered = asyncio.Event()
        self._awaited: Callable[[float, float], bool] | None = None
        self._apply = drive.command
        drive.command = self._spy

    def _spy(self, command: DriveCommand) -> None:
        left, right = command.v_left, command.v_right
        self.wheels.append((time.time() * 1e3, left, right))  # the page's clock: wall ms too
        if self._awaited is not None and self._awaited(left, right):
            self._awaited = None
            self._answered.set()
        self._apply(command)

    def expect(self, test: Callable[[float, float], bool]) -> None:
        """From now on, the first wheel command that passes ``test`` is the answer."""
        self._answered.clear()
        self._awaited = test

    async def answer(self) -> None:
        """Until the wheels answered what :meth:`expect` was told (at most :data:`ANSWER_S`)."""
        try:
            async with asyncio.timeout(ANSWER_S):
                await self._answered.wait()
        except TimeoutError:
            self._awaited = None


async def _keys_session(args: list[str]) -> dict[str, float]:
    """One fresh session in one Chromium configuration: the latencies (ms)."""
    from playwright.async_api import async_playwright

    from freelook.config import load_robot
    from freelook.launch._bench import _free_port
    from freelook.launch._session import SessionOptions, run_session
    from freelook.maps import load_world

    started = asyncio.Event()
    parts: dict[str, Any] = {}
    options = SessionOptions(port=_free_port(), record=None, open_browser=False, camera=True)
    session = asyncio.create_task(
        run_session(
            load_robot("pioneer3dx"), load_world("lab"), options, lambda _: None, started, parts
        )
    )
    await started.wait()
    watch = _WheelWatch(parts["server"].program.hardware.drive)
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(
                executable_path="/usr/bin/chromium",
                headless=True,
                args=["--no-sandbox", "--no-first-run", "--disable-background-networking", *args],
            )
            page = await browser.new_page(viewport={"width": 1500, "height": 900})
            await page.add_init_script(_KEYS)
            await page.goto(parts["url"])
            await page.wait_for_function(
                "() => window.freelook && window.freelook.last && window.freelook.last.pose",
                polling=50,
                timeout=60_000,
            )
            await page.click("[data-mode=free_look]")
            await asyncio.sleep(1.0)  # the camera streams: the renderer is as busy as it gets
            for key in ("KeyW", "KeyS", "KeyA", "KeyD"):
                watch.expect(_MOVING[key])
                await page.keyboard.down(key)
                await watch.answer()
                await asyncio.sleep(0.8)  # held on, driving
                watch.expect(_stopped)
                await page.keyboard.up(key)
                await watch.answer()
                await asyncio.sleep(0.6)  # at rest before the next key
            watch.expect(_MOVING["KeyW"])
            await page.keyboard.down("KeyW")
            await watch.answer()
            await asyncio.sleep(0.8)
            watch.expect(_stopped)
            await page.keyboard.press("Space")
            await watch.answer()
            await asyncio.sleep(0.6)  # W still held: the e-stop keeps the robot still
            await page.keyboard.up("KeyW")
            keys = await page.evaluate("window.__keys")
            await browser.close()
    finally:
        session.cancel()
        await asyncio.gather(session, return_exceptions=True)
    return latencies(keys, watch.wheels)


def _case(configuration: str) -> Case:
    figures: dict[str, float] = {}

    def run() -> None:
        figures.clear()
        figures.update(run_event_loop(_keys_session(CONFIGURATIONS[configuration])))
        moves = [v for k, v in figures.items() if k.endswith("_move_ms")]
        stops = [v for k, v in figures.items() if k.endswith("_stop_ms")]
        figures["worst_move_ms"] = max(moves, default=math.inf)
        figures["worst_stop_ms"] = max(stops, default=math.inf)

    def met() -> float:
        within = (
            figures["worst_move_ms"] <= 1e3 * MOVE_S
            and figures["worst_stop_ms"] <= 1e3 * STOP_S
            and figures["estop_ms"] <= 1e3 * ESTOP_S
        )
        return 0.0 if within else 1.0

    return Case(
        run=run,
        unit="session",
        calls=1,
        target_s=0.0,
        measured=met,  # 0 s when every key is within its bound, else 1 s
        target_label="moves ≤ 0.5 s, stops ≤ 0.5 s, e-stop ≤ 0.3 s",
        extra=lambda: dict(figures),
    )


@benchmark("web.cockpit_keys_disable_gpu")
def cockpit_keys_disable_gpu() -> Case:
    """W/S/A/D and the e-stop key to the wheels, Chromium with ``--disable-gpu``."""
    return _case("disable_gpu")


@benchmark("web.cockpit_keys_swiftshader")
def cockpit_keys_swiftshader() -> Case:
    """W/S/A/D and the e-stop key to the wheels, Chromium on SwiftShader (software GL)."""
    return _case("swiftshader")
