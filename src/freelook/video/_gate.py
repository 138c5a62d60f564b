"""The operator's side of inter-frame video (sans-I/O): which frames a decoder can use, and
the :class:`VideoFeedback` that reports loss and asks for keyframes.

A delta frame decodes only after every frame since its keyframe. The robot numbers the frames
it sends one by one, so a gap in a stream's frame ids is a lost frame: from it on, deltas are
dropped until the next keyframe, and a keyframe is asked for (at most every
``request_spacing`` seconds a stream; on a lossy link in several copies). JPEG frames always
pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from freelook.link import VideoCodec, VideoFeedback, VideoFrame

__all__ = ["FeedbackReporter", "FrameGate"]

REQUEST_COPY_ABOVE = 0.04  # loss from which a keyframe request goes out more than once


@dataclass(slots=True)
class _StreamSync:
    last_id: int | None = None
    synced: bool = False
    want_key: bool = False
    last_request: float | None = None


class FrameGate:
    """Per camera stream: whether each complete frame can be decoded after those before it."""

    def __init__(self) -> None:
        self._streams: dict[int, _StreamSync] = {}
        self.passed = 0
        self.held = 0  # deltas dropped while waiting for a keyframe
        self.gaps = 0  # frames found missing

    def streams(self) -> list[int]:
        return sorted(self._streams)

    def sync(self, stream: int) -> _StreamSync:
        """The state of ``stream`` (made on first use)."""
        state = self._streams.get(stream)
        if state is None:
            state = self._streams[stream] = _StreamSync()
        return state

    def admit(self, frame: VideoFrame) -> bool:
        """Whether ``frame`` can be decoded; a gap before it marks a keyframe as wanted."""
        if frame.codec == VideoCodec.JPEG:
            self.passed += 1
            return True
        state = self.sync(frame.stream)
        previous, state.last_id = state.last_id, frame.frame_id
        consecutive = previous is not None and (frame.frame_id - previous) & 0xFFFFFFFF == 1
        if previous is not None and not consecutive:
            self.gaps += 1
        if frame.keyframe:
            state.synced, state.want_key = True, False
        elif not (state.synced and consecutive):
            state.synced = False
            state.want_key = True
            self.held += 1
            return False
        self.passed += 1
        return True

    def request_keyframe(self, stream: int) -> None:
        """A decoder further on (a page) lost its place: ask for a keyframe on ``stream``."""
        self.sync(stream).want_key = True

    def wants_keyframe(self, stream: int) -> bool:
        state = self._streams.get(stream)
        return state is not None and state.want_key


class FeedbackReporter:
    """:class:`VideoFeedback` for each stream seen: every ``period`` seconds the loss since the
    last report, and at once (at most every ``request_spacing`` s) when a keyframe is wanted."""

    def __init__(self, gate: FrameGate, period: float = 0.5, request_spacing: float = 0.2):
        self.gate = gate
        self.period = period
        self.request_spacing = request_spacing
        self._last_report: float | None = None
        self._counts: tuple[int, int] | None = None  # (received, lost) at the last report
        self.loss = 0.0
        self.sent = 0

    def poll(self, now: float, received: int, lost: int) -> list[VideoFeedback]:
        """The reports due at ``now``; ``received`` and ``lost``: the link's packet counts
        from the robot so far (they only grow)."""
        periodic = self._last_report is None or now - self._last_report >= self.period
        if periodic:
            if self._counts is not None:
                got, missed = received - self._counts[0], lost - self._counts[1]
                self.loss = missed / (got + missed) if got + missed > 0 else self.loss
            self._counts = (received, lost)
            self._last_report = now
        out: list[VideoFeedback] = []
        for stream in self.gate.streams():
            state = self.gate.sync(stream)
            key = state.want_key and (
                state.last_request is None or now - state.last_request >= self.request_spacing
            )
            if key:
                state.last_request = now
            if periodic or key:
                report = VideoFeedback(stream, min(1.0, max(0.0, self.loss)), key)
                out.extend([report] * (self.request_copies() if key else 1))
        self.sent += len(out)
        return out

    def request_copies(self) -> int:
        """How many times a keyframe request goes out: once on a clean link; on a lossy one
        (the loss measured on the robot's packets, the way back assumed alike) often enough
        that all are lost one time in fifty at most, four at the most. Every lost request
        freezes the picture until the next one, and a request is a few dozen bytes."""
        if self.loss < REQUEST_COPY_ABOVE:
            return 1
        return max(1, min(4, math.ceil(math.log(0.02) / math.log(min(self.loss, 0.99)))))
