"""Reassembling video frames from fragments: latest frame wins, never a half frame."""

from __future__ import annotations

import struct

from freelook.link._errors import ValueRangeError
from freelook.link._messages import VideoFragment, VideoFrame
from freelook.link._values import check_values

__all__ = ["FrameAssembler"]

_FRAME_HEAD = struct.Struct("<dHH")


class FrameAssembler:
    """Collects fragments of the newest frame; older incomplete frames are dropped.

    Memory is bounded: one frame in progress, at most ``max_fragments`` parts.
    """

    def __init__(self, max_fragments: int = 4096) -> None:
        self.max_fragments = max_fragments
        self._frame_id: int | None = None
        self._parts: dict[int, bytes] = {}
        self._count = 0
        self.completed = 0
        self.dropped = 0  # frames abandoned with fragments missing
        self.stale = 0  # fragments of frames older than the one in progress
        self._last_done: int | None = None

    @staticmethod
    def _newer(a: int, b: int) -> bool:
        """Whether frame id a is newer than b (32-bit wrap-around)."""
        return 0 < (a - b) & 0xFFFFFFFF < 0x80000000

    def add(self, fragment: VideoFragment) -> VideoFrame | None:
        """Add one fragment; return the frame when it is complete."""
        if fragment.count > self.max_fragments or fragment.index >= fragment.count:
            self.stale += 1
            return None
        fid = fragment.frame_id
        if self._last_done is not None and not self._newer(fid, self._last_done):
            self.stale += 1
            return None
        if self._frame_id is None or self._newer(fid, self._frame_id):
            if self._frame_id is not None and self._parts:
                self.dropped += 1
            self._frame_id = fid
            self._parts = {}
            self._count = fragment.count
        elif fid != self._frame_id:
            self.stale += 1
            return None
        if fragment.count != self._count:
            self.stale += 1
            return None
        self._parts[fragment.index] = fragment.data
        if len(self._parts) < self._count:
            return None
        blob = b"".join(self._parts[i] for i in range(self._count))
        self._parts = {}
        self._frame_id = None
        self._last_done = fid
        if len(blob) < _FRAME_HEAD.size:
            self.dropped += 1
            return None
        stamp, width, height = _FRAME_HEAD.unpack_from(blob)
        frame = VideoFrame(fid, stamp, width, height, blob[_FRAME_HEAD.size :])
        try:
            check_values(frame)  # a NaN or absurd capture stamp never reaches the page
        except ValueRangeError:
            self.dropped += 1
            return None
        self.completed += 1
        return frame
