"""An impaired in-memory channel for tests and experiments: seeded, driven by injected time.

Bernoulli or Gilbert–Elliott burst loss, delay with jitter (which reorders), explicit
reordering, duplication, bit-flip corruption, a bandwidth cap with a bounded queue, and radio
lock-ups: a node that goes silent for seconds, as the thesis's half-duplex radios did when their
buffers overran (the thesis §7.2). Both directions through one radio share its lock-ups.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

__all__ = ["ChannelCounters", "ImpairedChannel", "Impairments", "RadioLockups", "Silences"]


class Silences(Protocol):
    """When a radio carries nothing (:class:`RadioLockups`, ``DeadRadio``)."""

    def silent(self, now: float) -> bool: ...


class Impairments(BaseModel):
    """What the channel does to packets. Probabilities per packet unless stated."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    loss: float = Field(default=0.0, ge=0, le=1, description="Bernoulli loss (good state)")
    burst_p_enter: float = Field(default=0.0, ge=0, le=1, description="P(good → bad)")
    burst_p_exit: float = Field(default=1.0, gt=0, le=1, description="P(bad → good)")
    burst_loss: float = Field(default=1.0, ge=0, le=1, description="loss in the bad state")
    delay: float = Field(default=0.0, ge=0, description="base one-way delay, s")
    jitter: float = Field(default=0.0, ge=0, description="uniform extra delay 0…jitter, s")
    reorder: float = Field(default=0.0, ge=0, le=1, description="P(extra hold-back)")
    reorder_delay: float = Field(default=0.05, ge=0)
    duplicate: float = Field(default=0.0, ge=0, le=1)
    corrupt: float = Field(default=0.0, ge=0, le=1, description="P(packet has bit flips)")
    bandwidth_bps: float | None = Field(default=None, gt=0, description="bits per second")
    queue_bytes: int = Field(default=16384, ge=0, description="send queue under the cap")
    lockup_rate: float = Field(
        default=0.0, ge=0, description="radio lock-ups per second of operation (Poisson)"
    )
    lockup_duration: float = Field(
        default=5.0, ge=0, description="mean s a locked-up radio stays silent (exponential)"
    )

    def expected_loss(self) -> float:
        """Long-run loss probability of the Gilbert–Elliott chain with Bernoulli loss."""
        if self.burst_p_enter == 0:
            return self.loss
        pi_bad = self.burst_p_enter / (self.burst_p_enter + self.burst_p_exit)
        return (1 - pi_bad) * self.loss + pi_bad * self.burst_loss


@dataclass
class ChannelCounters:
    sent: int = 0
    delivered: int = 0
    lost: int = 0
    duplicated: int = 0
    corrupted: int = 0
    reordered: int = 0
    queue_dropped: int = 0
    silenced: int = 0  # sent while the radio was locked up


class RadioLockups:
    """When a radio is locked up: silent intervals of a Poisson process, drawn as time goes on
    from their own seeded generator (so adding lock-ups leaves the other draws unchanged)."""

    def __init__(self, rate: float, mean_duration: float, seed: int = 0) -> None:
        self.rate = rate
        self.mean_duration = mean_duration
        self._rng = np.random.default_rng([seed, 0x10C])
        self.intervals: list[tuple[float, float]] = []  # (start, end), in order
        self._drawn_until = 0.0

    def _draw_until(self, now: float) -> None:
        while self.rate > 0 and self._drawn_until <= now:
            start = self._drawn_until + float(self._rng.exponential(1.0 / self.rate))
            end = start + float(self._rng.exponential(self.mean_duration))
            self.intervals.append((start, end))
            self._drawn_until = end

    def silent(self, now: float) -> bool:
        """Whether the radio is locked up at ``now``."""
        self._draw_until(now)
        return any(start <= now < end for start, end in reversed(self.intervals[-4:]))

    def ended_by(self, now: float) -> list[tuple[float, float]]:
        """The lock-ups that began and ended by ``now``."""
        self._draw_until(now)
        return [(a, b) for a, b in self.intervals if b <= now]


@dataclass(order=True)
class _InFlight:
    due: float
    order: int
    data: bytes = field(compare=False)


class ImpairedChannel:
    """One direction of a lossy link. ``send`` at time t; ``receive(now)`` what is due."""

    def __init__(
        self, impairments: Impairments, seed: int = 0, lockups: Silences | None = None
    ) -> None:
        """``lockups``: share one radio's lock-ups between the two directions through it (by
        default each channel draws its own from ``impairments``)."""
        self.impairments = impairments
        self.lockups: Silences = lockups or RadioLockups(
            impairments.lockup_rate, impairments.lockup_duration, seed
        )
        self.rng = np.random.default_rng(seed)
        self.counters = ChannelCounters()
        self._bad = False
        self._heap: list[_InFlight] = []
        self._order = 0
        self._line_free_at = 0.0
        self._queued: list[tuple[float, int]] = []  # (finish time, size) under the cap

    def _lose(self) -> bool:
        imp = self.impairments
        if imp.burst_p_enter > 0:
            if self._bad:
                if self.rng.random() < imp.burst_p_exit:
                    self._bad = False
            elif self.rng.random() < imp.burst_p_enter:
                self._bad = True
        p = imp.burst_loss if self._bad else imp.loss
        return bool(self.rng.random() < p)

    def _corrupt(self, data: bytes) -> bytes:
        buf = bytearray(data)
        flips = 1 + int(self.rng.integers(0, 3))
        for _ in range(flips):
            bit = int(self.rng.integers(0, 8 * len(buf)))
            buf[bit // 8] ^= 1 << (bit % 8)
        return bytes(buf)

    def send(self, data: bytes, now: float) -> None:
        imp = self.impairments
        self.counters.sent += 1
        if self.lockups.silent(now):
            self.counters.silenced += 1
            return
        start = now
        if imp.bandwidth_bps is not None:
            self._queued = [(t, n) for t, n in self._queued if t > now]
            backlog = sum(n for _, n in self._queued)
            if backlog + len(data) > imp.queue_bytes:
                self.counters.queue_dropped += 1
                return
            start = max(now, self._line_free_at)
            self._line_free_at = start + 8 * len(data) / imp.bandwidth_bps
            self._queued.append((self._line_free_at, len(data)))
            start = self._line_free_at
        if self._lose():
            self.counters.lost += 1
            return
        copies = 2 if self.rng.random() < imp.duplicate else 1
        if copies == 2:
            self.counters.duplicated += 1
        for _ in range(copies):
            payload = data
            if imp.corrupt and self.rng.random() < imp.corrupt:
                payload = self._corrupt(data)
                self.counters.corrupted += 1
            due = start + imp.delay + (self.rng.random() * imp.jitter if imp.jitter else 0.0)
            if imp.reorder and self.rng.random() < imp.reorder:
                due += imp.reorder_delay
                self.counters.reordered += 1
            heapq.heappush(self._heap, _InFlight(due, self._order, payload))
            self._order += 1

    def receive(self, now: float) -> list[bytes]:
        out = []
        while self._heap and self._heap[0].due <= now:
            out.append(heapq.heappop(self._heap).data)
        self.counters.delivered += len(out)
        return out
