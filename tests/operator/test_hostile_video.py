"""A hostile robot's video does not freeze the station (the security issue's item 6).

A fake robot holding the right key opens a real session with a real :class:`OperatorStation`
on loopback UDP and, instead of its camera, sends real VP9 keyframes (made here with PyAV's
encoder, 64 × 64) whose headers or bitstreams lie: a header claiming 16384 × 8192; a header
claiming the camera's own 640 × 480 over a bitstream patched to 16384 × 8192 (FFmpeg allocates
~200 MB for each before it finds the picture's data missing); a 0 × 0 header; then honest tiny
keyframes at 300 a second. A page without WebCodecs is attached the whole time, so the
station's JPEG fallback decodes what it lets through.

Meanwhile the station never leaves the robot without a packet for as long as its watchdog
timeout (the robot would stop for a lost link; an unharmed station sends 25-30 a second, and
before the station bounded the robot's video it fell to about one), its memory stays
bounded, and each refusal is counted by its reason.
The fake robot runs on a thread of its own with its own event loop: the station's loop is
the one measured.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import pytest

from freelook.config import load_robot
from freelook.link import (
    Accepted,
    Heartbeat,
    LinkDriver,
    LinkEvent,
    LinkSession,
    NativeCodec,
    UdpEndpoint,
    VideoCodec,
    VideoFrame,
)
from freelook.operator import OperatorStation
from freelook.web import BrowserSlot
from keys_for_tests import KEY_A
from loopback import OPENS, session_open
from tools.attack._video import longest_gap, vp9_keyframes
from waiting import wait_until_async

KEY = bytes.fromhex(KEY_A)
ROBOT = 100
PHASE = 3.0  # s of each attack, measured whole
#: the most the station's resident memory may grow under the attack (each forged keyframe
#: cost FFmpeg ~200 MB before; the station's own working set is a few MB)
MAX_GROWTH_MB = 120


def claiming(keyframe: bytes, width: int, height: int) -> bytes:
    """A profile-0 VP9 keyframe whose uncompressed header says ``width`` × ``height``: after
    the frame marker and flags (8 bits), the sync code (24) and the colour space and range
    (4), each side less one in 16 bits."""
    head = int.from_bytes(keyframe[:10], "big")
    assert head >> 72 == 0b10000010, "a shown profile-0 keyframe"
    for at, side in ((36, width), (52, height)):
        shift = 80 - at - 16
        head = (head & ~(0xFFFF << shift)) | ((side - 1) << shift)
    return head.to_bytes(10, "big") + keyframe[10:]


def resident_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20


def sample(peak: list[float], stop: threading.Event) -> None:
    """The largest resident memory seen into ``peak[0]`` until ``stop``."""
    while not stop.wait(0.02):
        peak[0] = max(peak[0], resident_mb())


@dataclass
class HostileRobot:
    """A robot end with the right key: answers the station's session, sends whatever frames
    :meth:`attack` is given, and counts the packets the station sends it."""

    loop: asyncio.AbstractEventLoop = field(default_factory=asyncio.new_event_loop)
    address: tuple[str, int] | None = None
    session: LinkSession | None = None
    driver: LinkDriver | None = None
    frame_id: int = 0
    _thread: threading.Thread | None = None
    _endpoint: UdpEndpoint | None = None
    _link: asyncio.Task[None] | None = None
    #: when each of the station's packets was taken (the robot's thread appends)
    arrivals: list[float] = field(default_factory=list)

    def received(self) -> int:
        """Packets from the station the robot's session took (read from any thread)."""
        return self.session.stats.received if self.session is not None else 0

    def start(self) -> None:
        ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(ready,), name="hostile robot")
        self._thread.start()
        assert ready.wait(10), "the hostile robot did not start"

    def _run(self, ready: threading.Event) -> None:
        asyncio.set_event_loop(self.loop)
        try:
            self.loop.run_until_complete(self._open(ready))
            self.loop.run_forever()
        finally:
            self.loop.close()

    async def _open(self, ready: threading.Event) -> None:
        endpoint = self._endpoint = await UdpEndpoint.open(("127.0.0.1", 0))
        self.address = endpoint.local_address
        clock = time.monotonic
        self.session = LinkSession(
            NativeCodec(KEY, sender=ROBOT),
            spacing=0.031,
            periodic=lambda now: [Heartbeat()],
            wire_offset=LinkDriver.wall_offset(clock),
            role="robot",
        )
        self.driver = LinkDriver(self.session, endpoint, clock, self._on_event)
        self._link = self.loop.create_task(self.driver.run())
        ready.set()

    def _on_event(self, event: LinkEvent) -> None:
        if isinstance(event, Accepted):  # what the station says is only timed
            self.arrivals.append(time.monotonic())

    def attack(self, frames: Callable[[int], VideoFrame], fps: float, seconds: float) -> None:
        """Send ``frames(i)`` at ``fps`` for ``seconds`` (blocks the caller's thread)."""
        done = asyncio.run_coroutine_threadsafe(self._send(frames, fps, seconds), self.loop)
        done.result(seconds + 10)

    async def _send(self, frames: Callable[[int], VideoFrame], fps: float, seconds: float) -> None:
        assert self.driver is not None
        start = time.monotonic()
        i = 0
        while (elapsed := time.monotonic() - start) < seconds:
            while i < elapsed * fps:  # behind: catch up in a burst, as a flood does
                self.frame_id += 1
                self.driver.send(frames(i))
                i += 1
            await asyncio.sleep(0.002)

    def stop(self) -> None:
        asyncio.run_coroutine_threadsafe(self._close(), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        assert self._thread is not None
        self._thread.join(10)

    async def _close(self) -> None:
        if self._link is not None:
            self._link.cancel()
            await asyncio.gather(self._link, return_exceptions=True)
        if self._endpoint is not None:
            self._endpoint.close()


@pytest.fixture(scope="module")
def keyframes() -> list[bytes]:
    frames = vp9_keyframes(12)
    assert len(frames) == 12  # one chunk a frame: each a keyframe on its own
    return frames


@pytest.fixture
def robot() -> Iterator[HostileRobot]:
    hostile = HostileRobot()
    hostile.start()
    yield hostile
    hostile.stop()


def test_a_hostile_robots_video_does_not_freeze_the_station(
    robot: HostileRobot, keyframes: list[bytes]
) -> None:
    config = load_robot("pioneer3dx")  # its camera is 640 × 480: frames up to 1280 × 960
    assert (config.camera.width, config.camera.height) == (640, 480)
    forged = claiming(keyframes[0], 16384, 8192)

    def frame(data: bytes, width: int, height: int) -> Callable[[int], VideoFrame]:
        return lambda i: VideoFrame(
            robot.frame_id, time.time(), width, height, data, 0, 0, VideoCodec.VP9, True
        )

    attacks = {
        # a header claiming 16384 × 8192, 15 a second
        "huge header": (frame(keyframes[0], 16384, 8192), 15.0),
        # the camera's own size in the header, 16384 × 8192 in the bitstream
        "huge bitstream": (frame(forged, 640, 480), 15.0),
        "0 × 0 header": (frame(keyframes[0], 0, 0), 15.0),
        # honest tiny keyframes, 300 a second
        "300 keyframes/s": (
            lambda i: VideoFrame(
                robot.frame_id,
                time.time(),
                64,
                64,
                keyframes[i % len(keyframes)],
                0,
                0,
                VideoCodec.VP9,
                True,
            ),
            300.0,
        ),
    }
    rates: dict[str, float] = {}
    gaps: dict[str, float] = {}
    peaks: dict[str, float] = {}
    stations: list[OperatorStation] = []

    async def body() -> None:
        assert robot.address is not None
        station = OperatorStation(config, None, robot.address, key=KEY)
        page, webcodecs = BrowserSlot(), BrowserSlot()
        station.attach(page)
        station.attach(webcodecs)
        assert await station.handle_browser({"type": "video", "decoder": False}, page) is None
        assert await station.handle_browser({"type": "video", "decoder": True}, webcodecs) is None
        running = asyncio.create_task(station.run())
        try:
            await wait_until_async(lambda: session_open(station), OPENS, "the session opened")
            await asyncio.sleep(0.5)
            baseline = resident_mb()
            for name, (frames, fps) in attacks.items():
                before = robot.received()
                start = time.monotonic()
                peak = [resident_mb()]
                sampling = threading.Event()
                sampler = threading.Thread(target=sample, args=(peak, sampling))
                sampler.start()  # on a thread: a held loop would miss the peak
                await asyncio.get_running_loop().run_in_executor(
                    None, robot.attack, frames, fps, PHASE
                )
                sampling.set()
                sampler.join()
                rates[name] = (robot.received() - before) / PHASE
                gaps[name] = longest_gap(list(robot.arrivals), start, time.monotonic())
                peaks[name] = peak[0] - baseline
            stations.append(station)
            # what got through was decoded by the fallback, off the loop, and reached its page
            assert station._fallback is not None
            assert station._fallback.decoded > 0
            assert page.replaced_frames + len(await page.next()) > 0
        finally:
            running.cancel()
            await asyncio.gather(running, return_exceptions=True)

    asyncio.run(body())
    print("packets/s to the robot", rates, "longest silences (s)", gaps, "memory (MB)", peaks)
    watchdog = config.safety.watchdog_timeout
    for name, gap in gaps.items():
        assert gap < watchdog, f"{name}: the station left the robot {gap:.2f} s silent {gaps}"
    for name, growth in peaks.items():
        assert growth < MAX_GROWTH_MB, f"{name}: the station grew by {growth:.0f} MB {peaks}"
    # each refusal counted by its reason, where a probe reads them
    refused = stations[0].video_refusals
    assert refused["size"] >= 3 * 15 * PHASE * 0.8, refused  # the first three attacks
    assert refused["keyframe_rate"] > 200 * PHASE, refused
    assert stations[0].refused_video_frames == sum(refused.values())
