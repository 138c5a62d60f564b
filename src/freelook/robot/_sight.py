"""Whether the driver can see (sans-I/O): the stations' reception reports, judged.

A station that reports what it receives (:class:`ReceptionReport`) vouches for its commands
only while it sees the robot: when it has missed more than ``blind_after`` of the telemetry
the robot sent it, it drives blind, so its commands stop feeding the watchdog and the robot
stops as if they had stopped coming. The robot judges from what it sent each station (its
own stamps) and the newest stamp the station acknowledges: the span between the oldest
telemetry sent and not acknowledged and the newest sent. A robot whose loop ran late sent
nothing meanwhile, so its own lateness never counts against the driver. A station the robot
has no record of sending to (a core driven without its server) is judged by how overdue it
says its telemetry is. A station that never reported (the thesis profile, a plain client)
is judged by the watchdog alone.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from freelook.link import ReceptionReport

__all__ = ["DriverSight", "SightChange"]


@dataclass(frozen=True, slots=True)
class SightChange:
    """A station went blind or saw again; ``why`` is the log line."""

    station: int
    blind: bool
    why: str


#: telemetry stamps kept per station, not yet acknowledged: at the shortest spacing a station
#: may ask (5 ms) 20 s of them, beyond any ``blind_after``; older ones are dropped, so the
#: span measured is then at least as long as the one it stands for
MAX_UNACKNOWLEDGED = 4096


class DriverSight:
    """Which stations report that they cannot see the robot."""

    def __init__(self, blind_after: float) -> None:
        self.blind_after = blind_after  # s: the watchdog's timeout
        self._blind: dict[int, bool] = {}  # station → blind, for the stations that report
        self._saw: set[int] = set()  # the stations that have seen the robot
        #: station → stamps of the telemetry sent it and not yet acknowledged, oldest first
        self._unacknowledged: dict[int, deque[float]] = {}

    def sent(self, stations: Iterable[int], stamp: float) -> None:
        """Telemetry stamped ``stamp`` went to ``stations``."""
        for station in stations:
            kept = self._unacknowledged.get(station)
            if kept is None:
                kept = self._unacknowledged[station] = deque(maxlen=MAX_UNACKNOWLEDGED)
            kept.append(stamp)

    def missed(self, station: int, report: ReceptionReport) -> float | None:
        """How much of the robot's sending ``station`` has missed (s): from the oldest
        telemetry sent it and not acknowledged to the newest sent; None when the robot has
        no record of sending to it."""
        kept = self._unacknowledged.get(station)
        if kept is None:
            return None
        acknowledged = report.telemetry_stamp
        while kept and kept[0] <= acknowledged:
            kept.popleft()
        return kept[-1] - kept[0] if kept else 0.0

    def report(self, station: int, report: ReceptionReport) -> SightChange | None:
        """Take a station's report; returns the change when a station that had seen the
        robot went blind or saw again (one that never saw it is blind, and no news)."""
        missed = self.missed(station, report)
        if missed is None:
            behind, what = report.telemetry_overdue, "overdue"
        else:
            behind, what = missed, "sent and not acknowledged"
        blind = not behind <= self.blind_after  # an age that is NaN: blind
        was = self._blind.get(station, False)
        self._blind[station] = blind
        had_seen = station in self._saw
        if not blind:
            self._saw.add(station)
        if blind == was or not had_seen:
            return None
        if blind:
            why = (
                f"station {station} cannot see: {behind:.2f} s of its telemetry {what} "
                f"(more than {self.blind_after:g} s); its commands no longer keep the robot "
                "moving"
            )
        else:
            why = f"station {station} sees again"
        return SightChange(station, blind, why)

    def sees(self, station: int) -> bool:
        """Whether ``station``'s commands may feed the watchdog."""
        return not self._blind.get(station, False)
