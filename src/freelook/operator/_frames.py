"""The robot's video frames at the operator station: screened, sent to the browsers, recorded.

:class:`_Frames` is :class:`~._station.OperatorStation`'s way with a complete frame: refused
when the screen says so (logged the first time and every :data:`LOG_EVERY` th after), then to
every page, the pages without a video decoder through the JPEG fallback decoded on its worker
thread, and into the recording on its stream's topic.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from freelook.config import StreamCameraConfig
from freelook.link import VideoFrame
from freelook.operator._core import StationCore
from freelook.operator._video import (
    LOG_EVERY,
    FallbackBatch,
    FallbackResult,
    FrameScreen,
    JpegFallback,
    StationVideo,
)
from freelook.record import VIDEO_FORMATS, StreamWriter, compressed_video, video_topic
from freelook.web import BrowserSlot, encode_frame

__all__: list[str] = []

log = logging.getLogger(__name__)


class _Frames:
    """Frames in, to pages and the recording (a mixin of :class:`~._station.OperatorStation`)."""

    clock: Callable[[], float]
    core: StationCore
    recorder: StreamWriter | None
    screen: FrameScreen
    video: StationVideo
    oversized_pictures: int
    _cameras: dict[int, StreamCameraConfig]
    _slots: set[BrowserSlot]
    _jpeg_slots: set[BrowserSlot]
    _fallback: JpegFallback | None
    _fallback_pool: ThreadPoolExecutor | None

    def _on_frame(self, frame: VideoFrame, now: float | None = None) -> None:
        """A complete frame: screened (a stream the robot's config does not list, a size of 0
        or beyond the stream's limit, keyframes too often: dropped and counted), then to every
        browser, and into the recording on its stream's topic. The JPEG fallback's decoding
        runs on its worker thread; its pictures go to their pages when they are made."""
        now = self.clock() if now is None else now
        why = self.screen.refusal(frame, now)
        if why is not None:
            self._log_refusal(frame, why)
            return
        if frame.stream == 0:
            self.core.frame_received(now)
            topic, name = "/camera/image/compressed", "camera"
        else:
            camera = self._cameras[frame.stream]  # the screen let through listed streams only
            topic, name = f"/camera/{camera.name}/compressed", camera.name
        if not self.video.admit(frame):
            return  # a delta after a lost frame: undecodable until the next keyframe
        if self.video.inter(frame):
            payload = self.video.page_frame(frame)
            jpeg = None
            if self._fallback is not None:
                self._fallback_start(self._fallback, self._fallback.offer(frame))
                if self._fallback.wants_keyframe(frame.stream):
                    self.video.page_lost(frame.stream)
        else:
            payload = jpeg = encode_frame(
                frame.stamp, frame.frame_id, frame.data, frame.stream, frame.layout
            )
        for slot in list(self._slots):
            chosen = jpeg if slot in self._jpeg_slots else payload
            if chosen is not None:
                slot.offer_frame(chosen, frame.stream)
        if self.recorder is None:
            return
        if self.video.inter(frame):  # Foxglove's CompressedVideo, on the camera's video topic
            fmt = VIDEO_FORMATS[frame.codec]
            topic = video_topic(None if frame.stream == 0 else name)
            self.recorder.submit(
                lambda r: compressed_video(r, frame.stamp, frame.data, fmt, name, topic)
            )
        else:
            self.recorder.submit(lambda r: r.image(frame.stamp, frame.data, name, topic))

    def _log_refusal(self, frame: VideoFrame, why: str) -> None:
        """The first refusal, and every :data:`LOG_EVERY` th after: a hostile robot's
        stream of them does not flood the terminal."""
        total = self.screen.total
        if total % LOG_EVERY == 1:
            log.warning(
                "video from the robot refused: stream %d, frame %d (%s); %d refused so far %s",
                frame.stream,
                frame.frame_id,
                why,
                total,
                self.screen.refused,
            )

    def _fallback_start(self, fallback: JpegFallback, batch: FallbackBatch | None) -> None:
        """Decode ``batch`` on the fallback's worker; its picture goes to the pages without a
        decoder when it is made (the loop never waits for it)."""
        if batch is None:
            return
        if self._fallback_pool is None:
            self._fallback_pool = ThreadPoolExecutor(1, thread_name_prefix="freelook-fallback")
        future = asyncio.get_running_loop().run_in_executor(
            self._fallback_pool, fallback.decode, batch
        )
        future.add_done_callback(lambda done: self._fallback_done(fallback, done))

    def _fallback_done(self, fallback: JpegFallback, done: asyncio.Future[FallbackResult]) -> None:
        if done.cancelled():
            return
        error = done.exception()
        if error is not None:  # a bug in decoding: the stream starts again at a keyframe
            log.error("the JPEG fallback's decoding failed", exc_info=error)
            return
        result = done.result()
        following = fallback.finish(result)
        if fallback is not self._fallback:
            return  # its pages left meanwhile
        self.oversized_pictures += result.oversized
        if result.oversized:
            log.warning(
                "video stream %d: a picture decoded beyond the stream's limit %s, discarded "
                "(the bitstream claims another size than its header); %d so far",
                result.stream,
                fallback.limits.get(result.stream),
                self.oversized_pictures,
            )
        if result.payload is not None:
            for slot in list(self._jpeg_slots):
                slot.offer_frame(result.payload, result.stream)
        if fallback.wants_keyframe(result.stream):
            self.video.page_lost(result.stream)
        self._fallback_start(fallback, following)

    def _stop_fallback(self) -> None:
        self._fallback = None
        if self._fallback_pool is not None:
            self._fallback_pool.shutdown(wait=False, cancel_futures=True)
            self._fallback_pool = None
