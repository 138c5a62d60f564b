"""The receiving half of a packet transport: packets by source, verified sources first.

Packets from sources the link verified wait in a queue of their own and are read first (the
newest wins when it is full); all the rest share a small queue that drops its oldest. A flood
from strangers (wrong keys, garbage) therefore costs only what it takes to refuse it and never
pushes the operator's commands out.

The fast path: with :attr:`Inbox.on_verified` set, a packet from a verified source that finds
that source's queue empty is handed to it at once, as it arrives, instead of waking a reader
task in a later turn of the event loop. Anything queued is still read first, so the order
stays what the queues give.

UDP and Zenoh endpoints share this; each decides who is verified and what is dropped before.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections import deque
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Inbox"]

log = logging.getLogger(__name__)
Source = TypeVar("Source")


class Inbox(Generic[Source]):
    """Bounded queues of (packet, source) on one event loop, with one reader at a time."""

    def __init__(self, max_queue: int = 1024, max_strangers: int = 64) -> None:
        self._known: deque[tuple[bytes, Source]] = deque()
        self._strangers: deque[tuple[bytes, Source]] = deque()
        self._max_known = max_queue
        self._max_strangers = max_strangers
        self._waiter: asyncio.Future[None] | None = None  # the one reader waiting, if any
        #: when the waiting reader gives up (loop time; inf: never), and the one timer that
        #: wakes it: a later deadline keeps an earlier timer, which re-arms when it fires
        self._deadline = math.inf
        self._timer: asyncio.TimerHandle | None = None
        self._timer_loop: asyncio.AbstractEventLoop | None = None
        self._handling = False
        #: Verified packets dropped because their queue was full (oldest first).
        self.dropped = 0
        #: Strangers' packets dropped because their queue was full (oldest first).
        self.dropped_strangers = 0
        #: The source of the packet handled or read last.
        self.last_sender: Source | None = None
        #: Called with (data, source) for a verified source's packet when none wait before
        #: it; must not raise (an error is logged and the packet is dropped).
        self.on_verified: Callable[[bytes, Source], None] | None = None

    def _queue(self, data: bytes, source: Source, verified: bool) -> bool:
        """Hand a packet to the fast path or queue it, and wake the reader. True: a verified
        source's packet that found none queued before it (the fast path's, or the first)."""
        if verified:
            handler = self.on_verified
            if handler is not None and not self._known and not self._handling:
                self.last_sender = source
                self._handling = True
                try:
                    handler(data, source)
                except Exception:  # the transport's reader must survive one bad handler call
                    log.exception("handling a packet from %s failed", source)
                finally:
                    self._handling = False
                return True
            alone = not self._known
            if len(self._known) >= self._max_known:
                self._known.popleft()  # newest wins: drop the oldest
                self.dropped += 1
            self._known.append((data, source))
        else:
            alone = False
            if len(self._strangers) >= self._max_strangers:
                self._strangers.popleft()
                self.dropped_strangers += 1
            self._strangers.append((data, source))
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)
        return alone

    def _next(self) -> tuple[bytes, Source] | None:
        if self._known:
            return self._known.popleft()
        if self._strangers:
            return self._strangers.popleft()
        return None

    async def recv_from(self, timeout: float | None = None) -> tuple[bytes, Source] | None:
        """The next packet (verified sources first) and its source; None after ``timeout``.

        One reader at a time. The wait is one bare future that the next packet or a timer
        resolves: the command → acknowledgement path pays no event, task-cancelling timeout
        or extra wake-up per packet. Nor a timer per wait: a wait moves the deadline, and the
        timer already armed for an earlier one stays (it re-arms for the deadline when it
        fires), so a reader woken by packets every few microseconds schedules a timer about
        once a timeout.
        """
        item = self._next()
        if item is None:
            if self._waiter is not None:
                raise RuntimeError(f"a {type(self).__name__} has one reader at a time")
            loop = asyncio.get_running_loop()
            waiter = self._waiter = loop.create_future()
            if timeout is None:
                self._deadline = math.inf
            else:
                self._arm(loop, loop.time() + timeout)
            try:
                await waiter
            finally:
                self._waiter = None
            item = self._next()
            if item is None:
                return None
        self.last_sender = item[1]
        return item

    async def recv(self, timeout: float | None = None) -> bytes | None:
        item = await self.recv_from(timeout)
        return None if item is None else item[0]

    def _arm(self, loop: asyncio.AbstractEventLoop, deadline: float) -> None:
        """Wake the reader at ``deadline``: with the timer armed, unless it fires later."""
        self._deadline = deadline
        timer = self._timer
        if timer is not None and self._timer_loop is loop and timer.when() <= deadline:
            return
        if timer is not None:
            timer.cancel()
        self._timer = loop.call_at(deadline, self._expire, deadline)
        self._timer_loop = loop

    def _expire(self, when: float) -> None:
        """The timer armed for ``when`` fired: wake the reader if its deadline has come,
        else arm for the deadline it moved to."""
        self._timer = self._timer_loop = None
        waiter = self._waiter
        if waiter is None or waiter.done():
            return
        if self._deadline <= when:
            waiter.set_result(None)
        elif self._deadline < math.inf:
            self._arm(waiter.get_loop(), self._deadline)

    def _stop_timer(self) -> None:
        """Cancel the timer (the endpoint closes)."""
        if self._timer is not None:
            self._timer.cancel()
        self._timer = self._timer_loop = None
