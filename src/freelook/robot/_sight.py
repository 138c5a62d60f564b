"""Whether the driver can see (sans-I/O): the stations' reception reports, judged.

A station that reports what it receives (:class:`ReceptionReport`) vouches for its commands
only while it sees the robot: when its telemetry is overdue by more than the watchdog's
timeout, it drives blind, so its commands stop feeding the watchdog and the robot stops as if
they had stopped coming. A station that never reported (the thesis profile, a plain client)
is judged by the watchdog alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from freelook.link import ReceptionReport

__all__ = ["DriverSight", "SightChange"]


@dataclass(frozen=True, slots=True)
class SightChange:
    """A station went blind or saw again; ``why`` is the log line."""

    station: int
    blind: bool
    why: str


class DriverSight:
    """Which stations report that they cannot see the robot."""

    def __init__(self, blind_after: float) -> None:
        self.blind_after = blind_after  # s: the watchdog's timeout
        self._blind: dict[int, bool] = {}  # station → blind, for the stations that report
        self._saw: set[int] = set()  # the stations that have seen the robot

    def report(self, station: int, report: ReceptionReport) -> SightChange | None:
        """Take a station's report; returns the change when a station that had seen the
        robot went blind or saw again (one that never saw it is blind, and no news)."""
        blind = not report.telemetry_overdue <= self.blind_after  # an age that is NaN: blind
        was = self._blind.get(station, False)
        self._blind[station] = blind
        had_seen = station in self._saw
        if not blind:
            self._saw.add(station)
        if blind == was or not had_seen:
            return None
        if blind:
            why = (
                f"station {station} cannot see: its telemetry is "
                f"{report.telemetry_overdue:.2f} s overdue (more than {self.blind_after:g} s); "
                "its commands no longer keep the robot moving"
            )
        else:
            why = f"station {station} sees again"
        return SightChange(station, blind, why)

    def sees(self, station: int) -> bool:
        """Whether ``station``'s commands may feed the watchdog."""
        return not self._blind.get(station, False)
