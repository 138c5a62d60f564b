"""Real-time runtime: the same periodic jobs, fired against the wall clock with asyncio."""

from __future__ import annotations

import asyncio
import heapq
import logging
import math
from collections.abc import Callable
from dataclasses import dataclass, field

from freelook.runtime._clock import MonotonicClock

__all__ = ["RealtimeRuntime"]

log = logging.getLogger(__name__)

#: s: a firing this much later than its time says the process stalled (a job's work between
#: two firings is not done where it was due: an arm jogged on between two checks), and is logged
STALL = 0.1
#: s: at most one stall is logged this often (the first; the others are counted)
STALL_LOG_SPACING = 1.0


@dataclass(order=True)
class _Entry:
    due: float
    order: int
    period: float = field(compare=False)
    name: str = field(compare=False)
    callback: Callable[[float], None] = field(compare=False)


class RealtimeRuntime:
    """Fires ``callback(now)`` jobs at their periods on the monotonic clock.

    A job that falls behind by more than one period skips the missed firings (counted in
    ``overruns``) rather than bursting to catch up: real hardware wants the newest command,
    not a backlog. A firing later than its job's period first lets the event loop take one
    turn, so what arrived while the process was busy (a command in the socket's buffer) is read
    before the job judges the link by it: a stall is not a silent link. A firing more than
    :data:`STALL` late is counted in ``stalls``, the worst in ``worst_late``, and logged (the
    first in each :data:`STALL_LOG_SPACING`). ``stop()`` ends :meth:`run` promptly.
    """

    def __init__(self) -> None:
        self.clock = MonotonicClock()
        self._queue: list[_Entry] = []
        self._count = 0
        self._stopping = asyncio.Event()
        self.overruns: dict[str, int] = {}
        self.fired: dict[str, int] = {}
        self.stalls: dict[str, int] = {}
        self.worst_late: dict[str, float] = {}
        self._stall_logged = -math.inf

    def now(self) -> float:
        return self.clock.now()

    def add_periodic(
        self, name: str, period: float, callback: Callable[[float], None], phase: float = 0.0
    ) -> None:
        if period <= 0:
            raise ValueError(f"period of {name!r} must be > 0, got {period}")
        heapq.heappush(
            self._queue, _Entry(self.clock.now() + phase, self._count, period, name, callback)
        )
        self._count += 1
        self.overruns[name] = 0
        self.fired[name] = 0
        self.stalls[name] = 0
        self.worst_late[name] = 0.0

    def stop(self) -> None:
        self._stopping.set()

    async def run(self, duration: float | None = None) -> None:
        """Fire jobs until :meth:`stop` (or for ``duration`` seconds)."""
        end = None if duration is None else self.clock.now() + duration
        turned = False  # the loop took a turn (read its sockets) since the last firing
        while not self._stopping.is_set() and self._queue:
            now = self.clock.now()
            if end is not None and now >= end:
                return
            entry = self._queue[0]
            wait = entry.due - now
            if end is not None:
                wait = min(wait, end - now)
            if wait > 0 or (not turned and -wait > entry.period):
                try:  # (asyncio.timeout: a cancel that comes with the stop is not dropped)
                    async with asyncio.timeout(min(max(wait, 0.0), 0.1)):
                        await self._stopping.wait()
                    return
                except TimeoutError:
                    turned = True
                    continue
            turned = False
            heapq.heappop(self._queue)
            if now - entry.due > STALL:
                self._stalled(entry.name, now - entry.due, now)
            try:
                entry.callback(now)
            except Exception:
                log.exception("job %s failed", entry.name)
            self.fired[entry.name] += 1
            entry.due += entry.period
            late = self.clock.now() - entry.due
            if late > entry.period:
                skipped = int(late // entry.period)
                self.overruns[entry.name] += skipped
                entry.due += skipped * entry.period
            entry.order = self._count
            self._count += 1
            heapq.heappush(self._queue, entry)

    def _stalled(self, name: str, late: float, now: float) -> None:
        self.stalls[name] += 1
        self.worst_late[name] = max(self.worst_late[name], late)
        if now - self._stall_logged < STALL_LOG_SPACING:
            return
        self._stall_logged = now
        log.warning(
            "%s fired %.2f s late: the process stalled (stall %d of it, the worst %.2f s)",
            name,
            late,
            self.stalls[name],
            self.worst_late[name],
        )
