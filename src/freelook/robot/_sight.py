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
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from freelook.link import ReceptionReport

__all__ = ["FRAME_IN_FLIGHT", "DriverSight", "SightChange"]

#: s a sent camera frame may take to reach the station (fragments on a slow link, its
#: decoding): a frame sent more recently than this is not yet missed
FRAME_IN_FLIGHT = 0.5


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

    def frame_sent(self, now: float) -> None:
        """A frame of the driving camera went out to the stations."""
        self._sent.append(now)

    def _missed(self, age: float, now: float) -> bool:
        """Whether a frame was sent after the station's newest picture that should have
        reached it by now."""
        since, due = now - age, now - FRAME_IN_FLIGHT
        return any(since < t <= due for t in reversed(self._sent))

    def _video_blind(self, station: int, report: ReceptionReport, now: float) -> bool:
        bound = self.video_blind_after
        if bound is None:
            return False
        age = report.video_age if math.isfinite(report.video_age) else math.inf
        if age <= bound:
            self._saw_video.add(station)
            return False
        return station in self._saw_video and self._missed(age, now)

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
                "frames are sent; its commands no longer keep the robot moving"
            )
        else:
            why = f"station {station} sees again"
        return SightChange(station, blind, why)

    def forget(self, station: int) -> None:
        """Drop what ``station`` reported (its session ended: a new one reports afresh)."""
        self._blind.pop(station, None)
        self._saw.discard(station)
        self._saw_video.discard(station)

    def sees(self, station: int) -> bool:
        """Whether ``station``'s commands may feed the watchdog."""
        return not self._blind.get(station, False)
