"""Capture → painted in Chromium for the driving camera as VP9 and as JPEG, in the same run.

``video.capture_to_paint``: a fresh ``freelook sim`` session (pioneer3dx in ``lab``, its
640 × 480 camera, native profile over UDP on loopback) with the camera sent as VP9, then one
with it sent as JPEG; headless Chromium paints the cockpit's camera for a few seconds each.
Timed from the frame's capture stamp on the robot until the station hears the page's report
that it painted it (so the page's report back is in the figure too): p50 and p95, and the
frames painted a second. VP9 runs at the rate controller's 15 fps, JPEG at the camera's 30.
Target: VP9's p95 ≤ 80 ms.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from typing import Any

from freelook.bench import Case, benchmark
from freelook.launch._bench import _free_port, _headless_chromium, _p95
from freelook.link import VideoCodec

#: s each codec is watched for
WATCH_S = 6.0
TARGET_P95_S = 0.080


async def _paint(url: str, station: Any, seconds: float) -> dict[str, float]:
    """The page at ``url`` painting for ``seconds``: latencies from the station's reports."""
    from playwright.async_api import async_playwright

    async with async_playwright() as p:
        browser = await _headless_chromium(p)
        page = await browser.new_page(viewport={"width": 1500, "height": 900})
        await page.goto(url)
        await page.wait_for_function(
            "() => window.freelook && window.freelook.framesPainted > 10", timeout=60_000
        )
        await asyncio.sleep(1.0)  # past the first keyframe's decoder start
        station.painted.clear()
        read = "[window.freelook.framesPainted, window.freelook.video.decoded]"
        frames0, decoded0 = await page.evaluate(read)
        t0 = time.perf_counter()
        await asyncio.sleep(seconds)
        frames, decoded = await page.evaluate(read)
        elapsed = time.perf_counter() - t0
        await browser.close()
    latencies = [arrival - stamp for stamp, arrival in station.painted]
    if not latencies:
        raise RuntimeError("the page reported no painted frame")
    return {
        "p50_ms": statistics.median(latencies) * 1e3,
        "p95_ms": _p95(latencies) * 1e3,
        "fps": (frames - frames0) / elapsed,
        "decoded_fps": (decoded - decoded0) / elapsed,  # through WebCodecs (0 for JPEG)
    }


async def _session(codec: VideoCodec, seconds: float) -> dict[str, float]:
    """One fresh session with the driving camera sent as ``codec``."""
    from freelook.config import load_robot
    from freelook.launch._session import SessionOptions, run_session
    from freelook.maps import load_world

    started = asyncio.Event()
    holder: dict[str, Any] = {}
    options = SessionOptions(
        port=_free_port(), record=None, open_browser=False, camera=True, video=codec
    )
    session = asyncio.create_task(
        run_session(
            load_robot("pioneer3dx"), load_world("lab"), options, lambda _: None, started, holder
        )
    )
    await started.wait()
    try:
        return await _paint(holder["url"], holder["station"], seconds)
    finally:
        session.cancel()
        await asyncio.gather(session, return_exceptions=True)


@benchmark("video.capture_to_paint")
def capture_to_paint() -> Case:
    """The driving camera from capture until painted in headless Chromium, VP9 (WebCodecs)
    against JPEG in the same run. Target: VP9's p95 ≤ 80 ms."""
    figures: dict[str, float] = {}

    def run() -> None:
        figures.clear()
        for name, codec in (("vp9", VideoCodec.VP9), ("jpeg", VideoCodec.JPEG)):
            measured = asyncio.run(_session(codec, WATCH_S))
            figures.update({f"{name}_{key}": value for key, value in measured.items()})

    return Case(
        run=run,
        unit="session",
        calls=1,
        target_s=TARGET_P95_S,
        measured=lambda: figures["vp9_p95_ms"] / 1e3,
        target_label="VP9's p95 ≤ 80 ms",
        extra=lambda: dict(figures),
    )
