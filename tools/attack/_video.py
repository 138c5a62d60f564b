"""The campaign's hostile-robot video probe: a robot end inside the probe that holds the key
opens a real native-profile session with a real ``freelook operator`` process (its cockpit
page attached without WebCodecs, so the station's own decoder takes the frames) and, in
place of a camera, sends VP9 keyframes that lie: a header claiming 16384 × 8192, a header
claiming the camera's size over a bitstream patched to 16384 × 8192, then honest tiny
keyframes at 300 a second. What it judges is the longest the station leaves the robot without
a packet during each attack: as long as the robot's watchdog timeout is an effect (a station
that stops talking to its robot stops driving it); beside it, the packets a second the station
still sends (an unharmed station sends 25-30). A crash is the operator ending or printing a
traceback.
"""

from __future__ import annotations

import asyncio
import contextlib
import fractions
import itertools
import json
import random
import re
import time
from collections.abc import Callable

from tools.attack._tally import ProcessUnderAttack, Tally

__all__ = ["STALL", "attack_video", "judge_gap", "longest_gap"]

START = 120.0  # s: a bound for the operator to start
#: s: the longest the station may leave its robot without a packet under attack: the robot's
#: watchdog timeout (pioneer3dx's, as configured), after which it would stop for a lost link
STALL = 0.5
ROBOT = 100
_URL = re.compile(r"(https?://\S+token=\S+)")


def longest_gap(arrivals: list[float], start: float, end: float) -> float:
    """The longest time within [``start``, ``end``] without one of the sorted ``arrivals``."""
    times = [start, *(t for t in arrivals if start < t < end), end]
    return max(b - a for a, b in itertools.pairwise(times))


def judge_gap(kind: str, gap: float, rate: float, quiet: float, tally: Tally) -> None:
    """The station's longest silence to the robot under ``kind`` into ``tally`` (an effect when
    the robot would have stopped for it), with its packets a second beside the quiet's."""
    if gap >= STALL:
        tally.effect(
            f"{kind}: the station left the robot {gap:.2f} s without a packet "
            f"(its watchdog stops it at {STALL:g} s)"
        )
    tally.notes.append(
        f"{kind}: {rate:.1f} packets/s to the robot (quiet {quiet:.1f}), "
        f"the longest silence {gap:.3f} s"
    )


def vp9_keyframes(count: int, size: int = 64) -> list[bytes]:
    """``count`` real VP9 keyframes, ``size`` × ``size`` (libvpx through PyAV)."""
    import av
    import numpy as np

    context = av.CodecContext.create("libvpx-vp9", "w")
    assert isinstance(context, av.VideoCodecContext)
    context.width = context.height = size
    context.pix_fmt = "yuv420p"
    context.time_base = fractions.Fraction(1, 30)
    context.options = {"deadline": "realtime", "cpu-used": "8", "lag-in-frames": "0"}
    chunks: list[bytes] = []
    for i in range(count):
        image = np.zeros((size, size, 3), np.uint8)
        image[:, : (5 * i) % size] = (200, 120, 40)
        frame = av.VideoFrame.from_ndarray(image, format="rgb24")
        frame.pts = i
        frame.pict_type = av.video.frame.PictureType.I
        chunks += [bytes(p) for p in context.encode(frame)]
    chunks += [bytes(p) for p in context.encode(None)]
    return chunks


def _claiming(keyframe: bytes, width: int, height: int) -> bytes:
    """A profile-0 VP9 keyframe whose uncompressed header says ``width`` × ``height``."""
    head = int.from_bytes(keyframe[:10], "big")
    for at, side in ((36, width), (52, height)):
        shift = 80 - at - 16
        head = (head & ~(0xFFFF << shift)) | ((side - 1) << shift)
    return head.to_bytes(10, "big") + keyframe[10:]


async def _video_campaign(seconds: float, seed: int, tally: Tally) -> None:
    import websockets

    from freelook.link import (
        Accepted,
        Heartbeat,
        LinkDriver,
        LinkSession,
        NativeCodec,
        UdpEndpoint,
        VideoCodec,
        VideoFrame,
    )

    key = random.Random(seed).randbytes(32)  # the frames are fixed; the key is drawn
    keyframes = vp9_keyframes(12)
    endpoint = await UdpEndpoint.open(("127.0.0.1", 0))
    clock = time.monotonic
    session = LinkSession(
        NativeCodec(key, sender=ROBOT),
        spacing=0.031,
        periodic=lambda now: [Heartbeat()],
        wire_offset=LinkDriver.wall_offset(clock),
        role="robot",
    )
    arrivals: list[float] = []  # when each of the station's packets was taken

    def taken(event: object) -> None:
        if isinstance(event, Accepted):
            arrivals.append(clock())

    driver = LinkDriver(session, endpoint, clock, taken)
    link = asyncio.create_task(driver.run())
    port = endpoint.local_address[1]
    operator = ProcessUnderAttack(
        *("operator", "--robot", f"udp://127.0.0.1:{port}", "--wire", "native"),
        *("--key", key.hex(), "--station", "1", "--port", "0"),
        *("--no-browser", "--no-record"),
    )
    frame_id = 0

    def frames(data: bytes, width: int, height: int) -> Callable[[int], VideoFrame]:
        return lambda i: VideoFrame(frame_id, time.time(), width, height, data, 0, 0, 2, True)

    forged = _claiming(keyframes[0], 16384, 8192)
    attacks: tuple[tuple[str, Callable[[int], VideoFrame], float], ...] = (
        ("keyframes claiming 16384 × 8192, 15/s", frames(keyframes[0], 16384, 8192), 15.0),
        ("a bitstream of 16384 × 8192 in a 640 × 480 frame, 15/s", frames(forged, 640, 480), 15.0),
        (
            "honest 64 × 64 keyframes, 300/s",
            lambda i: VideoFrame(
                frame_id,
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
    )
    try:
        found = None
        deadline = time.monotonic() + START
        while found is None and time.monotonic() < deadline:
            line = await asyncio.to_thread(operator.wait_line, "http")
            found = _URL.search(line)
        assert found is not None
        url = found.group(1).replace("http", "ws", 1).split("/?")[0]
        token = found.group(1).split("token=")[1]
        async with websockets.connect(f"{url}/ws?token={token}", max_size=None) as page:
            await page.send(json.dumps({"type": "video", "decoder": False}))
            loop = asyncio.get_running_loop()
            end = loop.time() + 60
            while session.stats.received < 20:
                if loop.time() > end:
                    raise RuntimeError("campaign: the operator opened no session")
                await asyncio.sleep(0.1)
            before = session.stats.received
            await asyncio.sleep(seconds)
            quiet = (session.stats.received - before) / seconds
            tally.notes.append(f"quiet: {quiet:.1f} packets/s from the station")
            for kind, make, fps in attacks:
                before = session.stats.received
                start = loop.time()
                i = 0
                while (elapsed := loop.time() - start) < seconds:
                    while i < elapsed * fps:  # behind: catch up in a burst, as a flood does
                        frame_id += 1
                        driver.send(make(i))
                        i += 1
                        tally.tried(kind)
                    with contextlib.suppress(TimeoutError):  # the page's frames drained
                        await asyncio.wait_for(page.recv(), 0.002)
                rate = (session.stats.received - before) / seconds
                gap = longest_gap(arrivals, start, loop.time())
                judge_gap(kind, gap, rate, quiet, tally)
    finally:
        link.cancel()
        await asyncio.gather(link, return_exceptions=True)
        endpoint.close()
        for problem in operator.problems():
            tally.crash(f"operator: {problem}")
        operator.stop()


def attack_video(seconds: float, seed: int) -> Tally:
    """Each hostile video attack for ``seconds`` at a real ``freelook operator``."""
    tally = Tally("station under hostile video")
    asyncio.run(_video_campaign(seconds, seed, tally))
    return tally
