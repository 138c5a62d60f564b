"""Reassembling video frames from fragments: latest frame wins, never a half frame.

Each camera stream is assembled on its own, so a driving-camera frame never abandons an arm
camera's frame in progress (and frame ids are compared within one stream only).
"""

from __future__ import annotations

from freelook.errors import ProtocolError
from freelook.link._messages import VideoFragment, VideoFrame
from freelook.link._native_payloads import read_frame_head
from freelook.link._values import MAX_STREAMS, check_values

__all__ = ["FrameAssembler"]


class _Assembly:
    """The newest frame in progress of one stream."""

    __slots__ = ("count", "frame_id", "last_done", "parts")

    def __init__(self) -> None:
        self.frame_id: int | None = None
        self.parts: dict[int, bytes] = {}
        self.count = 0
        self.last_done: int | None = None


class FrameAssembler:
    """Collects fragments of each stream's newest frame; older incomplete frames are dropped.

    Memory is bounded: one frame in progress per stream (at most :data:`MAX_STREAMS`), at
    most ``max_fragments`` parts each.
    """

    def __init__(self, max_fragments: int = 4096) -> None:
        self.max_fragments = max_fragments
        self._streams: dict[int, _Assembly] = {}
        self.completed = 0
        self.dropped = 0  # frames abandoned with fragments missing, or refused
        self.stale = 0  # fragments of frames older than the one in progress
        self.refused = 0  # complete frames whose header held a value out of range

    @staticmethod
    def _newer(a: int, b: int) -> bool:
        """Whether frame id a is newer than b (32-bit wrap-around)."""
        return 0 < (a - b) & 0xFFFFFFFF < 0x80000000

    def add(self, fragment: VideoFragment) -> VideoFrame | None:
        """Add one fragment; return the frame when it is complete."""
        stream = fragment.stream
        if (
            fragment.count > self.max_fragments
            or fragment.index >= fragment.count
            or not 0 <= stream < MAX_STREAMS
        ):
            self.stale += 1
            return None
        state = self._streams.get(stream)
        if state is None:
            state = self._streams[stream] = _Assembly()
        fid = fragment.frame_id
        if state.last_done is not None and not self._newer(fid, state.last_done):
            self.stale += 1
            return None
        if state.frame_id is None or self._newer(fid, state.frame_id):
            if state.frame_id is not None and state.parts:
                self.dropped += 1
            state.frame_id = fid
            state.parts = {}
            state.count = fragment.count
        elif fid != state.frame_id:
            self.stale += 1
            return None
        if fragment.count != state.count:
            self.stale += 1
            return None
        state.parts[fragment.index] = fragment.data
        if len(state.parts) < state.count:
            return None
        blob = b"".join(state.parts[i] for i in range(state.count))
        state.parts = {}
        state.frame_id = None
        state.last_done = fid
        try:
            frame = read_frame_head(blob, fid, stream)
            check_values(frame)  # a NaN stamp or an unknown layout never reaches the page
        except ProtocolError:  # short, an unknown codec or flag, a value out of range
            self.dropped += 1
            self.refused += 1
            return None
        self.completed += 1
        return frame
