"""Clocks: the runtime owns time; components only ever receive it as an argument."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

__all__ = ["Clock", "ManualClock", "MonotonicClock", "Runtime"]


class Clock(Protocol):
    def now(self) -> float:
        """Seconds since an arbitrary epoch."""
        ...


class ManualClock:
    """A clock that moves only when told to (lock-step runtime, tests)."""

    def __init__(self, start: float = 0.0) -> None:
        self._now = start

    def now(self) -> float:
        return self._now

    def set(self, t: float) -> None:
        if t < self._now:
            raise ValueError(f"time cannot go backwards ({t} < {self._now})")
        self._now = t


class MonotonicClock:
    """Wall-clock seconds from ``time.monotonic``, for the real-time runtime."""

    def __init__(self) -> None:
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0


class Runtime(Protocol):
    """What components need from a runtime: the time, and periodic jobs."""

    def now(self) -> float: ...

    def add_periodic(
        self, name: str, period: float, callback: Callable[[float], None], phase: float = 0.0
    ) -> object: ...
