"""One camera stream's robot side (sans-I/O): when a frame is due, at which setting it is
encoded, and the :class:`VideoFrame` it goes out as.

Frames are thinned to the link's budget *before* they are encoded (a token bucket that may
run into debt by one frame), so with an inter-frame codec every encoded frame is sent and the
operator's decoder never misses a reference it could not know was skipped. The operator's
:class:`VideoFeedback` sets the bitrate (through :class:`RateController`) and asks for
keyframes, honoured at most every ``keyframe_spacing`` seconds.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from freelook.link import FrameLayout, VideoFeedback, VideoFrame
from freelook.video._encoder import VideoEncoder
from freelook.video._rate import RateController

__all__ = ["LOSS_SPACING", "ByteBudget", "VideoSender"]

LOSS_SPACING = 0.25  # s: half the operator's reporting period


class ByteBudget:
    """Bytes per second for video: a frame may start while the bucket is not in debt, and its
    bytes are taken after (so one large keyframe borrows from the next frames)."""

    def __init__(self, bytes_per_s: float, burst_s: float = 0.5) -> None:
        self.rate = bytes_per_s
        self.capacity = bytes_per_s * burst_s
        self.tokens = self.capacity
        self._last: float | None = None

    def ready(self, now: float) -> bool:
        if self._last is not None:
            self.tokens = min(self.capacity, self.tokens + (now - self._last) * self.rate)
        self._last = now
        return self.tokens > 0

    def spend(self, size: int) -> None:
        self.tokens -= size


class VideoSender:
    """Encodes one stream's frames for the link, within its budget and the operator's loss."""

    def __init__(
        self,
        stream: int,
        encoder: VideoEncoder,
        *,
        controller: RateController | None = None,
        budget: ByteBudget | None = None,
        fps: float | None = None,
        layout: FrameLayout = FrameLayout.MONO,
        keyframe_spacing: float = 0.15,
    ) -> None:
        """``fps``: the rate without a controller (JPEG's fixed camera rate)."""
        self.stream = stream
        self.encoder = encoder
        self.controller = controller
        self.budget = budget
        self._fps = fps
        self.layout = layout
        self.keyframe_spacing = keyframe_spacing
        self._next_id = 0
        self._want_key = False
        self._last_key: float | None = None
        self._loss_taken: float | None = None  # when a report's loss was last taken
        self.sent = 0
        self.skipped = 0
        self.sent_bytes = 0
        self.keyframe_requests = 0

    @property
    def fps(self) -> float:
        """Frames a second the stream runs at now."""
        if self.controller is not None:
            return self.controller.setting.rung.fps
        return self._fps or 10.0

    @property
    def copies(self) -> int:
        """How many times each frame goes out now (two on a lossy link)."""
        return self.controller.setting.copies if self.controller is not None else 1

    def copies_of(self, frame: VideoFrame) -> int:
        """How many times ``frame`` goes out: on a lossy link a keyframe once more than the
        others, since it spans several datagrams, any of which lost loses it, and the picture
        stays frozen until one arrives whole."""
        copies = self.copies
        return copies + 1 if frame.keyframe and copies > 1 else copies

    @property
    def bitrate(self) -> int | None:
        """The encoder's bitrate (bit/s), None for JPEG."""
        return self.encoder.setting.bitrate if self.encoder.inter else None

    def on_feedback(self, feedback: VideoFeedback, now: float) -> None:
        """The operator's report: its loss sets the bitrate; a keyframe request is noted.

        The operator measures the loss every half second or so and repeats the last figure in
        each keyframe request (and in each copy of one): a loss taken within
        :data:`LOSS_SPACING` of the last one taken is that same measurement, not a new one.
        """
        if feedback.stream != self.stream:
            return
        if feedback.keyframe:
            self.keyframe_requests += 1
            self._want_key = True
        if self.controller is None:
            return
        if self._loss_taken is not None and now - self._loss_taken < LOSS_SPACING:
            return
        self._loss_taken = now
        self.encoder.configure(self.controller.on_feedback(feedback.loss, now))

    def ready(self, now: float) -> bool:
        """Whether a frame may be captured and sent now (the budget has room)."""
        if self.budget is None or self.budget.ready(now):
            return True
        self.skipped += 1
        return False

    def encode(self, image: npt.NDArray[np.uint8], now: float, stamp: float) -> VideoFrame | None:
        """The frame to send for ``image`` captured at ``stamp`` (the wire clock); ``now`` is
        the sender's clock. The caller reports the bytes it put on the link with
        :meth:`spent`."""
        key = False
        if self._want_key and (
            self._last_key is None or now - self._last_key >= self.keyframe_spacing
        ):
            key = True
            self._want_key = False
        chunk = self.encoder.encode(image, keyframe=key)
        if chunk is None:
            return None
        if chunk.keyframe:
            self._last_key = now
            self._want_key = False
        frame = VideoFrame(
            self._next_id & 0xFFFFFFFF,
            stamp,
            chunk.width,
            chunk.height,
            chunk.data,
            self.stream,
            self.layout,
            self.encoder.codec,
            chunk.keyframe,
        )
        self._next_id += 1
        self.sent += 1
        return frame

    def spent(self, size: int) -> None:
        """``size`` bytes (datagrams, headers included) went on the link for a frame."""
        self.sent_bytes += size
        if self.budget is not None:
            self.budget.spend(size)
