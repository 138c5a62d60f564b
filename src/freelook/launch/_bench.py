"""End-to-end latency benchmarks: browser input to wheel command, camera render to paint."""

from __future__ import annotations

import asyncio
import json
import math
import socket
import statistics
import time
from typing import Any

from freelook.bench import Case, benchmark
from freelook.hal import DriveCommand
from freelook.runtime import run_event_loop


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _with_session(body: Any, camera: bool) -> dict[str, float]:
    from freelook.config import load_robot
    from freelook.launch._session import SessionOptions, run_session
    from freelook.maps import load_world

    port = _free_port()
    started = asyncio.Event()
    options = SessionOptions(port=port, record=None, open_browser=False, camera=camera)
    holder: dict[str, Any] = {}

    def announce(line: str) -> None:
        holder.setdefault("lines", []).append(line)

    session = asyncio.create_task(
        run_session(load_robot("pioneer3dx"), load_world("lab"), options, announce, started, holder)
    )
    await started.wait()
    try:
        result: dict[str, float] = await body(port, holder)
    finally:
        session.cancel()
        await asyncio.gather(session, return_exceptions=True)
    return result


async def _input_to_wheel(port: int, holder: dict[str, Any]) -> dict[str, float]:
    import websockets

    server = holder["server"]
    drive = server.program.hardware.drive
    applied: list[tuple[float, float, float]] = []
    original = drive.command

    def spy(command: DriveCommand) -> None:
        left, right = command.v_left, command.v_right
        applied.append((time.perf_counter(), left, right))
        original(command)

    drive.command = spy
    latencies: list[float] = []
    url = f"ws://127.0.0.1:{port}/ws?token={holder['token']}"
    async with websockets.connect(url, max_size=None) as ws:
        await ws.send(json.dumps({"type": "mode", "mode": "tank"}))
        await asyncio.sleep(1.0)
        for k in range(40):
            turn = 0.2 if k % 2 else -0.2
            sent = time.perf_counter()
            await ws.send(
                json.dumps(
                    {
                        "type": "axes",
                        "mode": "tank",
                        "forward": 0.0,
                        "left": 0.0,
                        "turn": turn,
                        "pan": 0.0,
                        "tilt": 0.0,
                    }
                )
            )
            sign = 1.0 if turn > 0 else -1.0
            deadline = sent + 0.5
            while time.perf_counter() < deadline:
                hits = [
                    t for t, left, right in applied if t >= sent and (right - left) * sign > 1e-6
                ]
                if hits:
                    latencies.append(hits[0] - sent)
                    break
                await asyncio.sleep(0.001)
            await asyncio.sleep(0.08)
    return {
        "p50_ms": statistics.median(latencies) * 1e3,
        "p95_ms": _p95(latencies) * 1e3,
        "samples": float(len(latencies)),
    }


@benchmark("web.input_to_wheel")
def input_to_wheel() -> Case:
    """A browser message (real WebSocket) until the robot applies the wheel command (real UDP,
    native profile, 20 ms control cycle). Target: p95 ≤ one control cycle + 10 ms."""
    figures: dict[str, float] = {}

    def run() -> None:
        figures.update(run_event_loop(_with_session(_input_to_wheel, camera=False)))

    return Case(run=run, unit="session", extra=lambda: dict(figures))


async def _headless_chromium(p: Any) -> Any:
    """Debian's Chromium, headless and without a GPU, as the paint benchmarks run it."""
    return await p.chromium.launch(
        executable_path="/usr/bin/chromium",
        headless=True,
        args=[
            "--no-sandbox",
            "--disable-gpu",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
        ],
    )


async def _render_to_paint(port: int, holder: dict[str, Any]) -> dict[str, float]:
    from playwright.async_api import async_playwright

    station = holder["station"]
    async with async_playwright() as p:
        browser = await _headless_chromium(p)
        page = await browser.new_page(viewport={"width": 1500, "height": 900})
        await page.goto(holder["url"])
        await page.wait_for_function(
            "() => window.freelook && window.freelook.framesPainted > 5", timeout=30_000
        )
        station.painted.clear()
        frames0 = await page.evaluate("window.freelook.framesPainted")
        t0 = time.perf_counter()
        await asyncio.sleep(4.0)
        frames = await page.evaluate("window.freelook.framesPainted") - frames0
        elapsed = time.perf_counter() - t0
        await browser.close()
    latencies = [arrival - stamp for stamp, arrival in station.painted]
    return {
        "p50_ms": statistics.median(latencies) * 1e3,
        "p95_ms": _p95(latencies) * 1e3,
        "fps": frames / elapsed,
    }


@benchmark("web.render_to_paint")
def render_to_paint() -> Case:
    """Camera frame rendered on the robot until painted in headless Chromium (640×480, JPEG,
    fragments over UDP, WebSocket, decode). Targets: p95 ≤ 60 ms, ≥ 25 frames/s."""
    figures: dict[str, float] = {}

    def run() -> None:
        figures.update(run_event_loop(_with_session(_render_to_paint, camera=True)))

    return Case(run=run, unit="session", extra=lambda: dict(figures))


_KEY_DOWN_CLOCK = """
window.__keyDown = null;
window.addEventListener('keydown', (e) => {
  if (window.__keyDown === null) window.__keyDown = performance.timeOrigin + performance.now();
}, true);
"""


async def _first_press(port: int, holder: dict[str, Any]) -> dict[str, float]:
    """One fresh session: the cockpit opens, Free Look is chosen, W goes down once."""
    from playwright.async_api import async_playwright

    drive = holder["server"].program.hardware.drive
    moved: list[float] = []
    original = drive.command

    def spy(command: DriveCommand) -> None:
        left, right = command.v_left, command.v_right
        if not moved and abs(left) + abs(right) > 1e-3:
            moved.append(time.time() * 1e3)  # the page's clock is wall-clock ms too
        original(command)

    drive.command = spy
    async with async_playwright() as p:
        browser = await p.chromium.launch(
            executable_path="/usr/bin/chromium",
            headless=True,
            args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
        )
        page = await browser.new_page()
        await page.add_init_script(_KEY_DOWN_CLOCK)
        await page.goto(holder["url"])
        await page.wait_for_function(
            "() => window.freelook && window.freelook.last && window.freelook.last.pose"
        )
        await page.click("[data-mode=free_look]")
        await asyncio.sleep(0.5)
        await page.keyboard.down("KeyW")
        await asyncio.sleep(0.5)
        await page.keyboard.up("KeyW")
        down = await page.evaluate("window.__keyDown")
        await browser.close()
    if not moved or down is None:
        return {"latency_ms": math.inf}
    return {"latency_ms": moved[0] - float(down)}


@benchmark("web.first_press")
def first_press() -> Case:
    """The first key press of a fresh session (real Chromium, WebSocket, UDP, 20 ms cycle):
    W down in the page until the robot applies a non-zero wheel command. Target: p95 over the
    sessions ≤ one control cycle + 30 ms."""
    latencies: list[float] = []

    def run() -> None:
        figures = run_event_loop(_with_session(_first_press, camera=True))
        latencies.append(figures["latency_ms"] / 1e3)

    def p95() -> float:
        return _p95(latencies)

    return Case(
        run=run,
        unit="session",
        target_s=0.020 + 0.030,
        measured=p95,
        extra=lambda: {
            "p50_ms": statistics.median(latencies) * 1e3,
            "p95_ms": p95() * 1e3,
            "max_ms": max(latencies) * 1e3,
            "sessions": float(len(latencies)),
        },
    )
