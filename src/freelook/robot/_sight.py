"""Whether the driver can see (sans-I/O): the stations' reception reports, judged.

A station that reports what it receives (:class:`ReceptionReport`) vouches for its commands
only while it sees the robot: when its telemetry is overdue by more than the watchdog's
timeout, it drives blind, so its commands stop feeding the watchdog and the robot stops as if
they had stopped coming. So it does when its driving camera's picture is older than its own
bound while the robot is sending that camera (:meth:`DriverSight.frame_sent`): the frames sent
since did not reach it (a radio fading, or forged datagrams crowding them out) and its operator
is steering by a still picture. A station that never reported (the thesis profile, a plain
client) is judged by the watchdog alone; one that has not had a picture yet is judged by its
telemetry alone.

Through a delayed link the report and the frames take time: a report arriving ``now`` was
sent about ``now − up`` and speaks of frames that had ``down`` to reach the station, so a frame
is missed only if it was sent before ``now − round trip − FRAME_IN_FLIGHT`` and after the
newest picture's own send time, about ``now − round trip − age``. The round trip is the
shortest of the station's last :data:`TRIPS_KEPT` the robot measured
(:meth:`DriverSight.round_trip`): jitter only lengthens a packet's way, so the picture's own
frame, which took at least that, is never counted as one sent after it, and a frame waits
:data:`FRAME_IN_FLIGHT` beyond it for its jitter. Without a measure the link counts as instant
(a station that never echoes is judged as at no delay: what a report says is never excused).
A station can only lengthen what the robot measures (it may hold its echoes), and a longer
round trip shifts the window back in time, later to catch a frozen picture: the robot believes
at most ``max_round_trip`` (the telemetry's blind bound), so a forged one delays the judgement
by that at most and never disables it.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from freelook.link import ReceptionReport

__all__ = ["FRAME_IN_FLIGHT", "TRIPS_KEPT", "DriverSight", "SightChange"]

#: s a sent camera frame may take to reach the station beyond the round trip (fragments on a
#: slow link, its decoding, the link's jitter): a frame sent more recently than this and the
#: station's round trip before its report arrived is not yet missed
FRAME_IN_FLIGHT = 0.5
#: a station's round trips remembered (the robot measures one every 0.25 s): the shortest counts
TRIPS_KEPT = 16


@dataclass(frozen=True, slots=True)
class SightChange:
    """A station went blind or saw again; ``why`` is the log line."""

    station: int
    blind: bool
    why: str


class DriverSight:
    """Which stations report that they cannot see the robot."""

    def __init__(self, blind_after: float, video_blind_after: float | None = None) -> None:
        self.blind_after = blind_after  # s: the watchdog's timeout and a grace
        #: s a station's newest picture may be old while frames are sent (None: not judged)
        self.video_blind_after = video_blind_after
        self._blind: dict[int, bool] = {}  # station → blind, for the stations that report
        self._saw: set[int] = set()  # the stations that have seen the robot
        self._saw_video: set[int] = set()  # the stations that have had a picture
        self._sent: deque[float] = deque(maxlen=512)  # when driving-camera frames went out
        #: s: the longest round trip believed of a station (a longer one is taken as this)
        self.max_round_trip = blind_after
        self._trips: dict[int, deque[float]] = {}  # station → its newest round trips, believed
        self.trips_capped = 0  # round trips measured beyond :attr:`max_round_trip`

    def frame_sent(self, now: float) -> None:
        """A frame of the driving camera went out to the stations."""
        self._sent.append(now)

    def round_trip(self, station: int, trip: float) -> None:
        """The robot measured ``trip`` s of round trip to ``station`` (beyond
        :attr:`max_round_trip` it is believed as that, and counted)."""
        if not (math.isfinite(trip) and trip >= 0.0):
            return  # nothing believed: the station is judged as before any measure
        if trip > self.max_round_trip:
            self.trips_capped += 1
            trip = self.max_round_trip
        self._trips.setdefault(station, deque(maxlen=TRIPS_KEPT)).append(trip)

    def trip(self, station: int) -> float:
        """The round trip ``station``'s reports are judged at (s; 0 before any measure)."""
        trips = self._trips.get(station)
        return min(trips) if trips else 0.0

    def _missed(self, station: int, age: float, now: float) -> bool:
        """Whether a frame was sent after the station's newest picture that should have
        reached it by the time it reported (the report arrived ``now``)."""
        trip = self.trip(station)
        since, due = now - trip - age, now - trip - FRAME_IN_FLIGHT
        return any(since < t <= due for t in reversed(self._sent))

    def _video_blind(self, station: int, report: ReceptionReport, now: float) -> bool:
        bound = self.video_blind_after
        if bound is None:
            return False
        age = report.video_age if math.isfinite(report.video_age) else math.inf
        if age <= bound:
            self._saw_video.add(station)
            return False
        return station in self._saw_video and self._missed(station, age, now)

    def report(self, station: int, report: ReceptionReport, now: float) -> SightChange | None:
        """Take a station's report; returns the change when a station that had seen the
        robot went blind or saw again (one that never saw it is blind, and no news)."""
        telemetry_blind = not report.telemetry_overdue <= self.blind_after  # NaN: blind
        video_blind = self._video_blind(station, report, now)
        blind = telemetry_blind or video_blind
        was = self._blind.get(station, False)
        self._blind[station] = blind
        had_seen = station in self._saw
        if not telemetry_blind:
            self._saw.add(station)
        if blind == was or not had_seen:
            return None
        if telemetry_blind:
            why = (
                f"station {station} cannot see: its telemetry is "
                f"{report.telemetry_overdue:.2f} s overdue (more than {self.blind_after:g} s); "
                "its commands no longer keep the robot moving"
            )
        elif blind:
            why = (
                f"station {station} cannot see: its camera picture is "
                f"{report.video_age:.2f} s old (more than {self.video_blind_after:g} s) while "
                f"frames are sent (judged at a {self.trip(station):.2f} s round trip); "
                "its commands no longer keep the robot moving"
            )
        else:
            why = f"station {station} sees again"
        return SightChange(station, blind, why)

    def forget(self, station: int) -> None:
        """Drop what ``station`` reported (its session ended: a new one reports afresh)."""
        self._blind.pop(station, None)
        self._saw.discard(station)
        self._saw_video.discard(station)
        self._trips.pop(station, None)

    def sees(self, station: int) -> bool:
        """Whether ``station``'s commands may feed the watchdog."""
        return not self._blind.get(station, False)
