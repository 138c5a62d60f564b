"""The station's inter-frame video: which frames go on to the pages and the recording (a
delta after a lost frame cannot be decoded: it is held back until the next keyframe), and the
:class:`VideoFeedback` the robot sets its bitrate and keyframes by.

What a robot sends is not trusted (a hostile robot, or someone in the middle with its key):
:class:`FrameScreen` refuses, before anything is decoded or forwarded, a frame of a stream the
robot's description lacks, one whose header or bitstream claims a size of 0 or beyond the
stream's :func:`~freelook.config.frame_limit`, and keyframes beyond a few a second.
:class:`JpegFallback` decodes for pages without WebCodecs off the station's loop (the station
runs :meth:`JpegFallback.decode` on a worker thread): one batch in flight per stream, the newest
keyframe replacing whatever waited before it, a decoder that refuses pictures beyond the limit
before it allocates them.

Sans-I/O: the station gives the clock and the thread.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from freelook.config import RobotConfig, frame_limit
from freelook.link import LinkStatistics, VideoCodec, VideoFeedback, VideoFrame, encode_jpeg
from freelook.operator._bitstream import bitstream_sizes
from freelook.video import FeedbackReporter, FrameGate
from freelook.web import encode_frame, encode_video_frame

__all__ = [
    "KEYFRAME_WINDOW",
    "MAX_KEYFRAMES",
    "REFUSALS",
    "FrameScreen",
    "JpegFallback",
    "StationVideo",
    "bitstream_sizes",
    "stream_limits",
]

_DECODERS = {VideoCodec.VP8: "vp8", VideoCodec.VP9: "vp9", VideoCodec.H264: "h264"}

#: keyframes of one inter-frame stream (not JPEG's) that go on (to the pages, the recording,
#: the JPEG fallback) in any :data:`KEYFRAME_WINDOW` seconds. The robot's rate controller
#: sends one every few seconds and honours the station's requests at most every 0.15 s
#: (under 7/s), but on a lossy link it sends a keyframe three times (two copies, and one more
#: for a keyframe), each its own frame: an honest robot stays at 20/s even then, while a
#: hostile one's 300/s are cut to 20. A keyframe beyond it is dropped like a lost frame (the
#: next delta finds the gap, and one is asked for).
MAX_KEYFRAMES = 20
KEYFRAME_WINDOW = 1.0  # s
#: why a frame was refused (the keys of :attr:`FrameScreen.refused`): a stream the robot's
#: description lacks, a size (header or bitstream) of 0 or beyond the stream's limit, a
#: keyframe beyond :data:`MAX_KEYFRAMES` a second
REFUSALS = ("stream", "size", "keyframe_rate")
#: a refusal is logged the first time and every this many after (per reason)
LOG_EVERY = 100
#: frames of one stream waiting for the JPEG fallback's decoder while it is busy; more, and
#: the stream starts again at its next keyframe (the decoder cannot keep up)
MAX_PENDING = 60


def stream_limits(config: RobotConfig) -> dict[int, tuple[int, int]]:
    """The largest (width, height) a frame of each of the robot's streams may have: the
    driving camera (stream 0) and each ``[[cameras]]`` (a stereo pair's frame is both eyes
    wide), :func:`~freelook.config.frame_limit` of the size described."""
    limits = {0: config.camera.frame_limit}
    for camera in config.cameras:
        limits[camera.stream] = frame_limit(camera.frame_width, camera.height)
    return limits


@dataclass
class FrameScreen:
    """What the station refuses of the robot's frames before anything decodes or forwards
    them: a stream the robot's description lacks, a size (the header's, or one the bitstream
    sets) of 0 or beyond the stream's limit, an inter-frame stream's keyframes beyond
    ``max_keyframes`` in ``window`` seconds. Each refusal is counted by reason
    (:attr:`refused`, the keys :data:`REFUSALS`)."""

    limits: dict[int, tuple[int, int]]
    max_keyframes: int = MAX_KEYFRAMES
    window: float = KEYFRAME_WINDOW
    refused: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REFUSALS, 0))
    _keys: dict[int, deque[float]] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.refused.values())

    def refusal(self, frame: VideoFrame, now: float) -> str | None:
        """Why ``frame`` is refused (a line for the log; counted), None when it goes on."""
        why = self._why(frame, now)
        if why is not None:
            self.refused[why[0]] += 1
            return why[1]
        return None

    def _why(self, frame: VideoFrame, now: float) -> tuple[str, str] | None:
        limit = self.limits.get(frame.stream)
        if limit is None:
            return "stream", "a stream the robot's description does not have"
        width, height = limit
        if not (0 < frame.width <= width and 0 < frame.height <= height):
            return "size", f"a {frame.width}×{frame.height} header; at most {width}×{height}"
        for w, h in bitstream_sizes(frame.codec, frame.data):
            if not (0 < w <= width and 0 < h <= height):
                return "size", f"a {w}×{h} bitstream; at most {width}×{height}"
        if frame.keyframe and frame.codec != VideoCodec.JPEG:
            # a JPEG frame is a picture of its own, no decoder's restart: its stream runs at
            # the camera's rate (30/s in the simulator), and counting those cut a third of it
            keys = self._keys.setdefault(frame.stream, deque())
            while keys and now - keys[0] >= self.window:
                keys.popleft()
            if len(keys) >= self.max_keyframes:
                return "keyframe_rate", f"over {self.max_keyframes} keyframes in {self.window:g} s"
            keys.append(now)
        return None


@dataclass
class _FallbackStream:
    """One stream's decoder and the frames waiting for it (only the batch in flight, on the
    worker, touches the decoder)."""

    limit: tuple[int, int]
    codec: int | None = None
    decoder: Any = None
    pending: list[VideoFrame] = field(default_factory=list)
    busy: bool = False


@dataclass(frozen=True)
class FallbackBatch:
    """Frames of one stream, in order, for :meth:`JpegFallback.decode`."""

    stream: int
    frames: list[VideoFrame]
    state: _FallbackStream


@dataclass(frozen=True)
class FallbackResult:
    """What a batch gave: the page frame of its newest picture (None: no picture), how many
    pictures decoded, and whether the decoder lost its place (an error, or a picture beyond
    the stream's limit: the stream starts again at its next keyframe)."""

    stream: int
    payload: bytes | None
    decoded: int
    failed: bool = False
    oversized: bool = False


class JpegFallback:
    """Inter-frame video as JPEG frames, for pages without a WebCodecs decoder (and the
    station page). Every frame that passed the gate is decoded (PyAV), the newest picture of
    each batch re-encoded. Decoding starts at a keyframe: one is asked for when a page first
    needs it.

    :meth:`offer` (on the station's loop) returns a batch to start when the stream's decoder
    is idle; :meth:`decode` runs it (on a worker thread: it touches only that stream's
    decoder); :meth:`finish` (back on the loop) takes its result and returns the next batch,
    if frames came meanwhile. A keyframe replaces whatever waited before it; more than
    :data:`MAX_PENDING` frames waiting, and the stream waits for its next keyframe."""

    def __init__(self, limits: dict[int, tuple[int, int]], quality: int = 80) -> None:
        self.quality = quality
        self.limits = limits
        self._streams: dict[int, _FallbackStream] = {}
        self._gate = FrameGate()
        self.decoded = 0
        self.errors = 0
        #: pictures whose decoded size was beyond the stream's limit (the bitstream claimed
        #: another size than the header): discarded, the decoder started again
        self.oversized = 0
        self.replaced = 0  # frames a newer keyframe made needless before they decoded
        self.overrun = 0  # times a stream's waiting frames passed MAX_PENDING

    def offer(self, frame: VideoFrame) -> FallbackBatch | None:
        """``frame`` (passed the station's screen): a batch to start now, or None (waiting
        for a keyframe, or the stream's decoder is busy: it goes in the next batch)."""
        limit = self.limits.get(frame.stream)
        if limit is None or not self._gate.admit(frame):
            return None
        state = self._streams.get(frame.stream)
        if state is None:
            state = self._streams[frame.stream] = _FallbackStream(limit)
        if frame.keyframe and frame.codec != VideoCodec.JPEG:
            self.replaced += len(state.pending)
            state.pending = [frame]
        elif len(state.pending) >= MAX_PENDING:
            self.overrun += 1
            state.pending = []
            self._lost(frame.stream)
            return None
        else:
            state.pending.append(frame)
        return None if state.busy else self._next(frame.stream, state)

    def _next(self, stream: int, state: _FallbackStream) -> FallbackBatch | None:
        if not state.pending:
            return None
        state.busy = True
        frames, state.pending = state.pending, []
        return FallbackBatch(stream, frames, state)

    def _lost(self, stream: int) -> None:
        self._gate.request_keyframe(stream)
        self._gate.sync(stream).synced = False

    def decode(self, batch: FallbackBatch) -> FallbackResult:
        """Decode ``batch`` (any thread; one batch of a stream at a time): the newest picture
        as a JPEG page frame (kinds 2 and 3)."""
        import av

        state = batch.state
        width, height = state.limit
        newest: tuple[Any, VideoFrame] | None = None
        decoded = 0
        for frame in batch.frames:
            if state.decoder is None or state.codec != frame.codec:
                if not frame.keyframe:
                    return FallbackResult(batch.stream, None, decoded, failed=True)
                context = av.CodecContext.create(_DECODERS[VideoCodec(frame.codec)], "r")
                assert isinstance(context, av.VideoCodecContext)
                # FFmpeg refuses a picture of more pixels before it allocates one; one thread:
                # the fallback never takes more than one core from the station
                context.options = {"max_pixels": str(width * height)}
                context.thread_count = 1
                state.decoder, state.codec = context, frame.codec
            try:
                pictures = state.decoder.decode(av.Packet(frame.data))
            except av.FFmpegError:
                state.decoder = None
                return FallbackResult(batch.stream, None, decoded, failed=True)
            for picture in pictures:
                if not (0 < picture.width <= width and 0 < picture.height <= height):
                    state.decoder = None
                    return FallbackResult(batch.stream, None, decoded, oversized=True)
                decoded += 1
                newest = (picture, frame)
        if newest is None:
            return FallbackResult(batch.stream, None, decoded)
        picture, frame = newest
        image = np.asarray(picture.to_ndarray(format="rgb24"), np.uint8)
        jpeg = encode_jpeg(image, self.quality)
        payload = encode_frame(frame.stamp, frame.frame_id, jpeg, frame.stream, frame.layout)
        return FallbackResult(batch.stream, payload, decoded)

    def finish(self, result: FallbackResult) -> FallbackBatch | None:
        """A batch ended (on the loop again): count it; the stream's next batch, if any."""
        state = self._streams[result.stream]
        state.busy = False
        self.decoded += result.decoded
        if result.failed or result.oversized:
            self.errors += result.failed
            self.oversized += result.oversized
            if not (state.pending and state.pending[0].keyframe):
                state.pending = []  # deltas after the failure: nothing to decode them on
                self._lost(result.stream)
        return self._next(result.stream, state)

    def wants_keyframe(self, stream: int) -> bool:
        return self._gate.wants_keyframe(stream)


class StationVideo:
    """The keyframe gate and the feedback of one station's link to one robot."""

    def __init__(self, period: float = 0.5, request_spacing: float = 0.2) -> None:
        self.gate = FrameGate()
        self.reporter = FeedbackReporter(self.gate, period, request_spacing)
        self.page_requests = 0

    def admit(self, frame: VideoFrame) -> bool:
        """Whether ``frame`` goes on (every JPEG frame; a delta only in an unbroken run)."""
        return self.gate.admit(frame)

    def page_lost(self, stream: int) -> None:
        """A page's decoder lost its place (a frame replaced before it was sent, a decode
        error): the robot is asked for a keyframe, at the reporter's bounded rate."""
        self.page_requests += 1
        self.gate.request_keyframe(stream)

    def feedback(self, now: float, stats: LinkStatistics) -> list[VideoFeedback]:
        """The reports due now (none before the first inter-frame stream was seen)."""
        return self.reporter.poll(now, stats.received, stats.lost)

    @staticmethod
    def page_frame(frame: VideoFrame) -> bytes:
        """``frame`` as the pages' WebCodecs decoders take it."""
        return encode_video_frame(
            frame.stamp,
            frame.frame_id,
            frame.data,
            stream=frame.stream,
            layout=frame.layout,
            codec=frame.codec,
            keyframe=frame.keyframe,
            width=frame.width,
            height=frame.height,
        )

    @staticmethod
    def inter(frame: VideoFrame) -> bool:
        return frame.codec != VideoCodec.JPEG
