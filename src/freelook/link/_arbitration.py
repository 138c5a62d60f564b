"""Control arbitration in the spirit of JAUS access control (sans-I/O).

One station controls the robot at a time; others observe. A request from a station with
higher authority than the holder takes over; equal or lower is rejected while the holder is
active. Control lapses after ``timeout`` seconds without renewal (any admitted command or a
new request from the holder renews it). Commands from other stations are dropped and counted.
"""

from __future__ import annotations

from dataclasses import dataclass

from freelook.link._messages import RejectReason

__all__ = ["ControlArbiter", "Decision"]


@dataclass(frozen=True, slots=True)
class Decision:
    granted: bool
    holder: int | None
    reason: RejectReason | None = None


class ControlArbiter:
    def __init__(self, timeout: float = 2.0) -> None:
        self.timeout = timeout
        self._holder: int | None = None
        self._authority = -1
        self._renewed = 0.0
        self.dropped: dict[int, int] = {}

    def holder(self, now: float) -> int | None:
        if self._holder is not None and now - self._renewed > self.timeout:
            self._holder = None
            self._authority = -1
        return self._holder

    def request(self, station: int, authority: int, now: float) -> Decision:
        holder = self.holder(now)
        if holder is None or holder == station or authority > self._authority:
            self._holder = station
            self._authority = authority
            self._renewed = now
            return Decision(True, station)
        return Decision(False, holder, RejectReason.LOWER_AUTHORITY)

    def release(self, station: int, now: float) -> bool:
        if self.holder(now) == station:
            self._holder = None
            self._authority = -1
            return True
        return False

    def admit(self, station: int, now: float) -> bool:
        """Whether a command from ``station`` may act; renews the holder's lease."""
        if self.holder(now) == station:
            self._renewed = now
            return True
        self.dropped[station] = self.dropped.get(station, 0) + 1
        return False
