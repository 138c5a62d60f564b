"""Virtual operator station benchmarks: TAROS in ``eod`` with its stereo arm camera, the
``/station`` page in headless Chromium inside a WebXR session that iwer (npm) emulates.

``web.station_frame_time``: the page's work per XR frame (panels, the views' HIT, controller
input, three.js drawing both eyes), median over the frames of a few seconds, with the canvas at
the emulated headset's resolution (Meta Quest 3: 2064 × 2208 per eye). Chromium runs without a
GPU here, so the interval between XR frames (the software rasteriser's pace) is reported beside
it, not judged. ``web.stereo_capture_to_drawn``: a stereo frame's capture stamp (the robot's
wall clock at render) until the XR frame that first drew both eyes from it (the page's wall
clock), p95, everything on loopback.
"""

from __future__ import annotations

import asyncio
import itertools
import re
import signal
import socket
import statistics
import sys
from pathlib import Path
from typing import Any

from freelook.bench import Case, benchmark

#: Meta Quest 3, one eye (px); iwer draws both eyes side by side on the page's canvas.
EYE = (2064, 2208)
_HEADSET = """
window.__xr = new IWER.XRDevice(IWER.metaQuest3);
window.__xr.stereoEnabled = true;
window.__xr.installRuntime({ forceInstall: true });
"""


def _iwer() -> Path:
    for parent in Path(__file__).resolve().parents:
        candidate = parent / "node_modules" / "iwer" / "build" / "iwer.min.js"
        if candidate.is_file():
            return candidate
    raise FileNotFoundError("iwer is not installed: run npm ci in the repository")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _p95(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


async def _in_headset(width: int, height: int, seconds: float) -> dict[str, Any]:
    """One session: the station page in an emulated headset for ``seconds``; the page's frame
    times, XR frame intervals, capture → drawn latencies and their stages (ms, each frame's
    [arrived, decoded, drawn] after its capture) over that time."""
    from playwright.async_api import async_playwright

    # the robot, the station and its web server in their own process, as ``freelook sim``
    # runs them (not sharing this process's event loop with the browser's driver)
    sim = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "freelook.cli", "sim", "--robot", "taros", "--world", "eod",
        "--no-browser", "--no-record", "--port", str(_free_port()),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
    )  # fmt: skip
    assert sim.stdout is not None
    url = ""
    while not url:
        line = (await asyncio.wait_for(sim.stdout.readline(), 90)).decode()
        if not line:
            raise RuntimeError("freelook sim did not start")
        found = re.search(r"station \(WebXR\): (\S+)", line)
        url = found.group(1) if found else ""
    drain = asyncio.create_task(sim.stdout.read())  # its later lines never fill the pipe
    try:
        async with async_playwright() as p:
            browser = await p.chromium.launch(
                executable_path="/usr/bin/chromium",
                headless=True,
                args=["--no-sandbox", "--disable-gpu", "--disable-background-networking"],
            )
            page = await browser.new_page(viewport={"width": width, "height": height})
            await page.add_init_script(path=str(_iwer()))
            await page.add_init_script(_HEADSET)
            await page.goto(url)
            await page.wait_for_function("() => station.mainFrames > 2", timeout=60_000)
            await page.click("#enter-vr")
            await page.wait_for_function(
                "() => station.inXR && station.xrFrames > 10", timeout=60_000
            )
            await page.evaluate(
                "station.frameTimes.length = 0; station.latencies.length = 0;"
                " station.stages.length = 0; station.renderTimes.length = 0;"
                " station.frameStarts = []"
            )
            await asyncio.sleep(seconds)
            figures: dict[str, Any] = await page.evaluate(
                "({frame: station.frameTimes.slice(), latency: station.latencies.slice(),"
                " starts: station.frameStarts.slice(), width: [station.xrViews[0].viewport.width],"
                " stages: station.stages.slice(), render: station.renderTimes.slice()})"
            )
            await browser.close()
    finally:
        sim.send_signal(signal.SIGINT)
        try:
            await asyncio.wait_for(sim.wait(), 20)
        except TimeoutError:
            sim.kill()
            await sim.wait()
        await drain
    starts = figures.pop("starts")
    figures["interval"] = [b - a for a, b in itertools.pairwise(starts)]
    return figures


@benchmark("web.station_frame_time")
def station_frame_time() -> Case:
    """The station page's work per XR frame at a Quest 3's resolution (both eyes), median.
    Target ≤ 11 ms (a 90 Hz headset's frame)."""
    figures: dict[str, float] = {}

    def run() -> None:
        out = asyncio.run(_in_headset(2 * EYE[0], EYE[1], 12.0))
        frame = out["frame"]
        figures.update(
            frame_ms_p50=statistics.median(frame),
            frame_ms_p95=_p95(frame),
            render_ms_p50=statistics.median(out["render"]),
            xr_interval_ms_p50=statistics.median(out["interval"]) if out["interval"] else 0.0,
            frames=float(len(frame)),
            eye_width_px=out["width"][0],
        )

    return Case(
        run=run,
        unit="session",
        calls=1,
        target_s=0.011,
        measured=lambda: figures["frame_ms_p50"] / 1e3,
        extra=lambda: dict(figures),
    )


@benchmark("web.stereo_capture_to_drawn")
def stereo_capture_to_drawn() -> Case:
    """A stereo frame's capture until both eyes are drawn in the headset, p95 (loopback; a
    1280 × 720 canvas so the software rasteriser does not set the pace). Target ≤ 80 ms."""
    figures: dict[str, float] = {}

    def run() -> None:
        out = asyncio.run(_in_headset(1280, 720, 8.0))
        latency, stages = out["latency"], out["stages"]
        figures.update(
            p50_ms=statistics.median(latency), p95_ms=_p95(latency), samples=float(len(latency))
        )
        # the link's share (capture → in the page) and the page's (decode, cut, draw)
        for k, name in enumerate(("arrived", "decoded", "drawn")):
            figures[f"{name}_p50_ms"] = statistics.median(row[k] for row in stages)
        figures["xr_interval_ms_p50"] = statistics.median(out["interval"])

    return Case(
        run=run,
        unit="session",
        calls=1,
        target_s=0.080,
        measured=lambda: figures["p95_ms"] / 1e3,
        extra=lambda: dict(figures),
    )
