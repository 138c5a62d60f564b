"""A camera's frames are hostile input: a JPEG cut short, one whose header claims 20000 × 20000
and a raw frame far larger than described are refused and counted on the video thread, never
decoded on the event loop the control cycle runs on, and the stream goes on with the next
good frame."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pytest
import simplejpeg

import freelook.robot._video as video
from forged_images import claim_size
from freelook.link import VideoCodec, VideoFrame
from freelook.robot._video import InterStream

GOOD = simplejpeg.encode_jpeg(np.full((48, 64, 3), 90, np.uint8), quality=90, colorspace="RGB")
TRUNCATED = GOOD[: GOOD.index(b"\xff\xda") + 16]
HUGE = claim_size(GOOD, 20000, 20000)


class ScriptedCamera:
    """An encoded camera (a ROS ``CompressedImage`` topic) that delivers ``frames`` in turn."""

    def __init__(self, frames: list[bytes]) -> None:
        self.frames = list(frames)

    def capture(self) -> None:
        return None

    def capture_jpeg(self, quality: int) -> tuple[bytes, int, int] | None:
        if not self.frames:
            return None
        data = self.frames.pop(0)
        return data, 64, 48


def run_stream(camera: object, sent: list[VideoFrame], frames: int) -> InterStream:
    """``camera`` streamed with VP9 until ``frames`` frames went out (or 5 s passed)."""
    inter = InterStream(0, camera, VideoCodec.VP9, (640, 480), 30.0, 2e6, shaped=False)  # type: ignore[arg-type]

    async def main() -> None:
        loop = asyncio.get_running_loop()
        task = asyncio.create_task(
            inter.run(lambda: True, loop.time, lambda: 0.0, lambda f: sent.append(f) or 1)
        )
        try:
            async with asyncio.timeout(5.0):
                while len(sent) < frames:
                    await asyncio.sleep(0.01)
                    if task.done():
                        task.result()  # a crash of the stream fails the test with its error
        finally:
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

    asyncio.run(main())
    return inter


def test_corrupt_and_forged_jpegs_are_refused_and_the_stream_goes_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    decoded_on: set[int] = set()
    decode = video.decode_jpeg

    def watched(data: bytes, limit: tuple[int, int] | None = None) -> np.ndarray:
        decoded_on.add(threading.get_ident())
        return decode(data, limit)

    monkeypatch.setattr(video, "decode_jpeg", watched)
    camera = ScriptedCamera([TRUNCATED, HUGE, GOOD, TRUNCATED, HUGE, GOOD, GOOD])
    sent: list[VideoFrame] = []
    inter = run_stream(camera, sent, frames=3)
    assert len(sent) == 3
    assert inter.refused == 4
    assert (sent[0].width, sent[0].height) == (64, 48)
    assert threading.get_ident() not in decoded_on  # the loop's thread decoded nothing


class RawCamera:
    """A raw camera whose first frame is 8000 × 8000 (its description says 640 × 480)."""

    def __init__(self) -> None:
        self.frames = [np.zeros((8000, 8000, 3), np.uint8), np.zeros((48, 64, 3), np.uint8)]

    def capture(self) -> np.ndarray | None:
        return self.frames.pop(0) if self.frames else None


def test_a_raw_frame_beyond_the_described_camera_is_refused_not_encoded() -> None:
    sent: list[VideoFrame] = []
    inter = run_stream(RawCamera(), sent, frames=1)
    assert inter.refused == 1
    assert (sent[0].width, sent[0].height) == (64, 48)
