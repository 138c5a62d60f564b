"""Control arbitration in the spirit of JAUS access control (sans-I/O).

One station controls the robot at a time; others observe. A request from a station with
higher authority than the holder takes over; equal or lower is rejected while the holder is
active. Control lapses after ``timeout`` seconds without renewal (any admitted command or a
new request from the holder renews it), so another station may take over a silent one. Until
another does, the lapsed holder's next command resumes its control at once: a link that comes
back after a long outage drives on its first packet, not on the next control request.
Commands from other stations are dropped and counted.
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
    previous: int | None = None  # the station that held control before a grant (pre-emption)


class ControlArbiter:
    def __init__(self, timeout: float = 2.0) -> None:
        self.timeout = timeout
        self._holder: int | None = None
        self._authority = -1
        self._renewed = 0.0
        self._lapsed: tuple[int, int] | None = None  # (station, authority) whose lease ran out
        self.dropped: dict[int, int] = {}

    def holder(self, now: float) -> int | None:
        if self._holder is not None and now - self._renewed > self.timeout:
            self._lapsed = (self._holder, self._authority)
            self._holder = None
            self._authority = -1
        return self._holder

    def request(self, station: int, authority: int, now: float) -> Decision:
        holder = self.holder(now)
        if holder is None or holder == station or authority > self._authority:
            self._grant(station, authority, now)
            return Decision(True, station, previous=holder)
        return Decision(False, holder, RejectReason.LOWER_AUTHORITY)

    def last_holder(self, now: float) -> int | None:
        """The holder, else the one whose lease ran out and whose next command resumes it."""
        holder = self.holder(now)
        if holder is None and self._lapsed is not None:
            return self._lapsed[0]
        return holder

    def release(self, station: int, now: float) -> bool:
        if self.holder(now) == station:
            self._holder = None
            self._authority = -1
            self._lapsed = None
            return True
        return False

    def admit(self, station: int, now: float) -> bool:
        """Whether a command from ``station`` may act; renews the holder's lease."""
        holder = self.holder(now)
        if holder == station:
            self._renewed = now
            return True
        if holder is None and self._lapsed is not None and self._lapsed[0] == station:
            self._grant(station, self._lapsed[1], now)
            return True
        self.dropped[station] = self.dropped.get(station, 0) + 1
        return False

    def _grant(self, station: int, authority: int, now: float) -> None:
        self._holder = station
        self._authority = authority
        self._renewed = now
        self._lapsed = None
