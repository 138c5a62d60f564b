"""Per-browser latest-value slots: a slow browser skips frames, it never stalls the control path."""

from __future__ import annotations

import asyncio
from collections import deque

__all__ = ["BrowserSlot"]

MAX_REPLIES = 16


class BrowserSlot:
    """Holds the newest state message and the newest video frame of each camera stream for one
    browser, and the replies owed to it (error replies, oldest first, at most :data:`MAX_REPLIES`).

    Producers call :meth:`offer_state` / :meth:`offer_frame` (never blocking, older unsent
    values are replaced and counted) and :meth:`offer_reply` (a reply beyond the bound is
    dropped and counted); the browser's sender task awaits :meth:`next`.
    """

    def __init__(self) -> None:
        self._state: bytes | None = None
        self._frames: dict[int, bytes] = {}  # stream → newest frame
        self._replies: deque[bytes] = deque()
        self._event = asyncio.Event()
        self.replaced_states = 0
        self.replaced_frames = 0
        self.dropped_replies = 0
        self.closed = False

    def offer_state(self, payload: bytes) -> None:
        if self._state is not None:
            self.replaced_states += 1
        self._state = payload
        self._event.set()

    def offer_frame(self, payload: bytes, stream: int = 0) -> None:
        """The newest frame of ``stream`` (one stream's frames never replace another's)."""
        if stream in self._frames:
            self.replaced_frames += 1
        self._frames[stream] = payload
        self._event.set()

    def offer_reply(self, payload: bytes) -> None:
        if len(self._replies) >= MAX_REPLIES:
            self.dropped_replies += 1
            return
        self._replies.append(payload)
        self._event.set()

    async def next(self) -> list[bytes]:
        """Wait for something new; return it (replies, then state, then frames by stream)."""
        await self._event.wait()
        self._event.clear()
        out = list(self._replies)
        self._replies.clear()
        if self._state is not None:
            out.append(self._state)
        out += [self._frames[stream] for stream in sorted(self._frames)]
        self._state = None
        self._frames = {}
        return out

    def close(self) -> None:
        self.closed = True
        self._event.set()
