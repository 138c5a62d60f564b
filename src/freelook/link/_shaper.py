"""A link shaped on this machine, to rehearse driving through a radio's delay (sans-I/O).

:class:`LinkShaper` holds what one end sends: each item is lost with probability ``loss`` (a
seeded draw), else released ``delay`` plus a uniform 0…``jitter`` later, never before the one
sent ahead of it (a radio's queue keeps order: jitter bunches packets, it does not reorder
them). The caller owns the clock and the sockets: :meth:`LinkShaper.push` at the time an item
is sent, :meth:`LinkShaper.due` for what is released by now. At most ``max_held`` items wait;
beyond that the newest is dropped and counted, as a full radio buffer drops it.
"""

from __future__ import annotations

import math
import random
from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

__all__ = ["LinkShaper", "LinkShaping"]

T = TypeVar("T")

MAX_DELAY = 60.0  # s: any delay or jitter a rehearsal can ask for


@dataclass(frozen=True, slots=True)
class LinkShaping:
    """How the link is shaped: one-way delay and jitter (s), loss (0…1), the seed."""

    delay: float = 0.0
    jitter: float = 0.0
    loss: float = 0.0
    seed: int = 0

    def __post_init__(self) -> None:
        for name, value, high in (
            ("delay", self.delay, MAX_DELAY),
            ("jitter", self.jitter, MAX_DELAY),
            ("loss", self.loss, 1.0),
        ):
            if not (math.isfinite(value) and 0.0 <= value <= high):
                raise ValueError(f"link {name} {value!r} outside 0…{high:g}")

    @property
    def shapes(self) -> bool:
        """Whether it changes anything (a zero shaping is no shaper at all)."""
        return self.delay > 0 or self.jitter > 0 or self.loss > 0


class LinkShaper(Generic[T]):
    """What one end sends, delayed, jittered and thinned as :class:`LinkShaping` says."""

    def __init__(self, shaping: LinkShaping, max_held: int = 8192) -> None:
        self.shaping = shaping
        self.max_held = max_held
        self._random = random.Random(shaping.seed)
        self._held: deque[tuple[float, T]] = deque()
        self._last_due = -math.inf
        self.passed = 0
        self.lost = 0
        self.overflowed = 0

    def push(self, now: float, item: T) -> float | None:
        """Send ``item`` at ``now``; returns when it is released (None: lost or dropped)."""
        shaping = self.shaping
        if self._random.random() < shaping.loss:
            self.lost += 1
            return None
        if len(self._held) >= self.max_held:
            self.overflowed += 1
            return None
        due = now + shaping.delay + self._random.random() * shaping.jitter
        due = max(due, self._last_due)  # in order
        self._last_due = due
        self._held.append((due, item))
        self.passed += 1
        return due

    def due(self, now: float) -> list[T]:
        """The items released by ``now``, in the order they were sent."""
        out: list[T] = []
        while self._held and self._held[0][0] <= now:
            out.append(self._held.popleft()[1])
        return out

    def next_due(self) -> float | None:
        """When the next held item is released (None: nothing held)."""
        return self._held[0][0] if self._held else None

    @property
    def held(self) -> int:
        return len(self._held)
