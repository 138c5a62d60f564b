"""Link statistics per direction (sans-I/O): rates, drops from sequence gaps, latency.

The receiver calls :meth:`LinkStatistics.on_received` for every accepted packet and
:meth:`on_rejected` for every refused one; the sender side calls :meth:`on_sent`. A packet that
arrives after a later one fills its gap: it counts as reordered, not lost. One-way latency is
estimated as receive time minus send stamp (a minimum filter over the recent window, which is
the clock offset plus the smallest delay when clocks differ; equal to the delay on one machine).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from freelook.link._stats_report import LinkStatsReport

__all__ = ["LinkStatistics", "TableRow"]

_WINDOW = 64  # how far back a late packet can still fill a gap


@dataclass(frozen=True, slots=True)
class TableRow:
    """The thesis's Table 7.1 figures for one direction."""

    drop_percent: float
    node_failures: int
    operation_time: float
    packets_received: int
    packets_lost: int


class _StreamState:
    __slots__ = ("highest", "missing")

    def __init__(self, sequence: int) -> None:
        self.highest = sequence
        self.missing: set[int] = set()


class LinkStatistics:
    """Receiver-side statistics of one direction of a link."""

    def __init__(self, rate_window: float = 2.0, failure_gap: float = 1.0) -> None:
        self.rate_window = rate_window
        self.failure_gap = failure_gap
        self._streams: dict[tuple[int, int], _StreamState] = {}
        self._rx_times: deque[float] = deque()
        self._tx_times: deque[float] = deque()
        self._latency: deque[tuple[float, float]] = deque()
        self.received = 0
        self.lost = 0
        self.duplicates = 0
        self.reordered = 0
        self.crc_failures = 0
        self.auth_failures = 0
        self.malformed = 0
        self.refused: dict[str, int] = {}  # by reason: crc, auth, session, replay, rate, value…
        self.node_failures = 0
        self.first_rx: float | None = None
        self.last_rx: float | None = None

    def on_sent(self, now: float) -> None:
        self._tx_times.append(now)
        self._trim(self._tx_times, now)

    def on_rejected(self, reason: str, now: float) -> None:
        """``reason``: "crc"; "auth", "session", "replay" and "rate" (counted as authentication
        failures); "value" or "malformed" (counted as malformed). Each is counted in
        :attr:`refused` by its own name too."""
        self.refused[reason] = self.refused.get(reason, 0) + 1
        if reason == "crc":
            self.crc_failures += 1
        elif reason in ("auth", "session", "replay", "rate"):
            self.auth_failures += 1
        else:
            self.malformed += 1

    def forget(self, sender: int) -> None:
        """Start ``sender``'s sequence numbers afresh (a new session numbers from 0)."""
        for key in [k for k in self._streams if k[0] == sender]:
            del self._streams[key]

    def _trim(self, times: deque[float], now: float) -> None:
        while times and times[0] < now - self.rate_window:
            times.popleft()

    def on_received(
        self,
        stream: int,
        sequence: int | None,
        sent_time: float | None,
        now: float,
        sender: int = 0,
    ) -> None:
        """An accepted packet; ``sequence`` None for profiles without sequence numbers."""
        if self.last_rx is not None and now - self.last_rx > self.failure_gap:
            self.node_failures += 1
        if self.first_rx is None:
            self.first_rx = now
        self.last_rx = now
        self._rx_times.append(now)
        self._trim(self._rx_times, now)
        if sent_time is not None:
            self._latency.append((now, now - sent_time))
            while self._latency and self._latency[0][0] < now - self.rate_window:
                self._latency.popleft()
        if sequence is None:
            self.received += 1
            return
        key = (sender, stream)
        state = self._streams.get(key)
        if state is None:
            self._streams[key] = _StreamState(sequence)
            self.received += 1
            return
        ahead = (sequence - state.highest) & 0xFFFFFFFF
        if 0 < ahead < 0x80000000:
            gap = ahead - 1
            for k in range(1, min(gap, _WINDOW) + 1):
                state.missing.add((sequence - k) & 0xFFFFFFFF)
            self.lost += gap
            state.highest = sequence
            if len(state.missing) > _WINDOW:
                oldest = sorted(state.missing, key=lambda s: (sequence - s) & 0xFFFFFFFF)
                state.missing = set(oldest[:_WINDOW])
            self.received += 1
        elif ahead == 0:
            self.duplicates += 1
        elif sequence in state.missing:
            state.missing.discard(sequence)
            self.lost -= 1
            self.reordered += 1
            self.received += 1
        else:
            self.duplicates += 1

    def report(self, now: float) -> LinkStatsReport:
        self._trim(self._rx_times, now)
        self._trim(self._tx_times, now)
        span = self.rate_window
        if self.first_rx is not None:
            span = min(self.rate_window, max(now - self.first_rx, 1e-9))
        rx_rate = len(self._rx_times) / span if self._rx_times else 0.0
        tx_rate = len(self._tx_times) / self.rate_window if self._tx_times else 0.0
        total = self.received + self.lost
        latency = min((d for _, d in self._latency), default=0.0)
        return LinkStatsReport(
            packets_received=self.received,
            packets_lost=self.lost,
            duplicates=self.duplicates,
            reordered=self.reordered,
            crc_failures=self.crc_failures,
            auth_failures=self.auth_failures,
            rx_rate_hz=rx_rate,
            tx_rate_hz=tx_rate,
            drop_percent=100.0 * self.lost / total if total else 0.0,
            latency_s=latency,
        )

    def table_row(self) -> TableRow:
        total = self.received + self.lost
        duration = 0.0
        if self.first_rx is not None and self.last_rx is not None:
            duration = self.last_rx - self.first_rx
        return TableRow(
            100.0 * self.lost / total if total else 0.0,
            self.node_failures,
            duration,
            self.received,
            self.lost,
        )
