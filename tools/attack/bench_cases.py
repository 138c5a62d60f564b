"""The flood benchmarks (``link.flood…``): a flood at the robot or at its station while an
operator drives, timed and judged by freelook's bench harness. They are the test rig's, not
the shipped ``freelook bench``'s: ``python -m tools.bench link.flood`` runs them beside it.
Importing this module registers them."""

from __future__ import annotations

from typing import Any

from freelook.bench import Case, benchmark
from tools.attack._flood import flood_trial

__all__ = ["flood", "flood_garbage_many", "flood_line_rate", "flood_station"]


def _flood_case(rate: float, **how: Any) -> Case:
    """A flood at ``rate`` packets/s while an operator drives (the chassis turning); met with
    no watchdog stop, ≥ 90 % of the telemetry and the video the operator gets without the
    flood, and the robot turning as commanded in ≥ 90 % of the telemetry."""
    figures: dict[str, float] = {}

    def run() -> None:
        result = flood_trial(rate, seconds=4.0, **how)
        figures.update(
            flood_pps=result.flood_pps,
            watchdog_stops=float(result.watchdog_stops),
            telemetry_share=result.telemetry_hz / max(result.telemetry_hz_quiet, 1e-9),
            video_share=result.video_fps / max(result.video_fps_quiet, 1e-9),
            refused=float(result.refused),
            delivered=result.delivered,
            driving_share=result.driving_share,
        )

    def met() -> float:
        shares = min(figures["telemetry_share"], figures["video_share"], figures["driving_share"])
        return 0.0 if figures["watchdog_stops"] == 0 and shares >= 0.9 else 1.0

    return Case(run=run, unit="session", target_s=0.0, measured=met, extra=lambda: dict(figures))


@benchmark("link.flood")
def flood() -> Case:
    """A 50k packets/s wrong-key flood at the robot from one socket. Targets: 0 watchdog
    stops, telemetry and video ≥ 90 % of their rates without the flood (1 s: missed)."""
    return _flood_case(50_000.0)


@benchmark("link.flood_line_rate")
def flood_line_rate() -> Case:
    """A 100k packets/s wrong-key flood at the robot (as fast as loopback carries from one
    process); targets as ``link.flood``."""
    return _flood_case(100_000.0)


@benchmark("link.flood_garbage_many")
def flood_garbage_many() -> Case:
    """100k packets/s of garbage at the robot from 64 sockets (64 sources); targets as
    ``link.flood``."""
    return _flood_case(100_000.0, payload="garbage", sockets=64)


@benchmark("link.flood_station")
def flood_station() -> Case:
    """100k packets/s of garbage at the operator station's port from 64 sockets (it hears only
    the robot's address); targets as ``link.flood``, at the station."""
    return _flood_case(100_000.0, target="station", payload="garbage", sockets=64)
