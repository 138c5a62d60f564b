"""The link-statistics figures that travel in telemetry and feed reports (thesis Table 7.1)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["LinkStatsReport"]


@dataclass(frozen=True, slots=True)
class LinkStatsReport:
    """Statistics of one direction of a link, as seen by its receiver."""

    packets_received: int = 0  # valid packets accepted
    packets_lost: int = 0  # inferred from sequence gaps
    duplicates: int = 0
    reordered: int = 0
    crc_failures: int = 0
    auth_failures: int = 0  # bad tag, replayed or too old
    rx_rate_hz: float = 0.0  # accepted packets per second, recent window
    tx_rate_hz: float = 0.0  # packets this side sent per second, recent window
    drop_percent: float = 0.0  # lost / (received + lost) · 100
    latency_s: float = 0.0  # one-way latency estimate (offset-corrected where possible)
