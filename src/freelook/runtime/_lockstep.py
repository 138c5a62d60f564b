"""Lock-step runtime: a virtual clock that fires periodic jobs exactly on time, in a fixed order.

Jobs are kept on an integer-microsecond time line (no floating-point drift over long runs);
jobs due at the same instant fire in registration order. Two runs that register the same jobs
fire them identically, which makes experiments bit-for-bit repeatable from a seed.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from dataclasses import dataclass

__all__ = ["Job", "LockstepRuntime"]

_US = 1_000_000


@dataclass(eq=False)
class Job:
    due_us: int
    order: int  # registration index: breaks ties between jobs due at the same instant
    period_us: int
    name: str
    callback: Callable[[float], None]
    active: bool = True
    fired: int = 0


class _RuntimeClock:
    """The runtime's virtual time as a :class:`Clock`."""

    def __init__(self, runtime: LockstepRuntime) -> None:
        self._runtime = runtime

    def now(self) -> float:
        return self._runtime.now()


class LockstepRuntime:
    """Fires registered jobs at their periods on a virtual clock, as fast as the CPU allows."""

    def __init__(self, start: float = 0.0) -> None:
        self.clock = _RuntimeClock(self)
        self._now_us = round(start * _US)
        self._queue: list[tuple[int, int, Job]] = []
        self._count = 0
        self.jobs: dict[str, Job] = {}

    def now(self) -> float:
        return self._now_us / _US

    def add_periodic(
        self, name: str, period: float, callback: Callable[[float], None], phase: float = 0.0
    ) -> Job:
        """Call ``callback(now)`` every ``period`` seconds, first at now + ``phase`` (≥ 0)."""
        period_us = round(period * _US)
        if period_us <= 0:
            raise ValueError(f"period of {name!r} must be ≥ 1 µs, got {period}")
        if not phase >= 0.0:  # a job cannot start in the past (NaN is refused too)
            raise ValueError(f"phase of {name!r} must be ≥ 0 s, got {phase}")
        if name in self.jobs:
            raise ValueError(f"a job named {name!r} is already registered")
        job = Job(self._now_us + round(phase * _US), self._count, period_us, name, callback)
        self.jobs[name] = job
        heapq.heappush(self._queue, (job.due_us, job.order, job))
        self._count += 1
        return job

    def remove(self, name: str) -> None:
        job = self.jobs.pop(name)
        job.active = False

    def run_until(self, t: float) -> None:
        """Fire every job due up to and including time ``t``; the clock ends at ``t``."""
        end_us = round(t * _US)
        queue = self._queue
        while queue and queue[0][0] <= end_us:
            due, order, job = queue[0]
            if not job.active:
                heapq.heappop(queue)
                continue
            self._now_us = due
            job.callback(due / _US)
            job.fired += 1
            job.due_us = due + job.period_us
            # the job is still first: a job its callback added is due no earlier and was
            # registered later, so one sift replaces the pop and the push
            heapq.heapreplace(queue, (job.due_us, order, job))
        self._now_us = max(self._now_us, end_us)

    def run_for(self, duration: float) -> None:
        self.run_until(self._now_us / _US + duration)
