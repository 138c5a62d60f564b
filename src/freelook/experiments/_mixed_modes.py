"""The thesis's trials as a combination of modes: each of Table 7.1's nine trials begins with
one of the automatic modes the thesis tested, from the lab's start at rest, and the operator
drives by hand for the rest of its operation time.

From the thesis (§7.2: "Test trials were the combination of different operational modes"):

* trials 4, 7 and 9 ran the ellipse (Table 7.2), at that table's losses: the thesis's station
  (Algorithm 5.2's targets over eq. 6.1's 101 points, eq. 3.17, Algorithm 5.3's limits, as the
  ellipse experiment runs it: :class:`._ellipse.ThesisStation`) on each position packet, from
  the static position at the ellipse's centre, the thesis's origin (here the lab's start);
* linear drive (§7.1.2) shuttles along x between two points 3 m apart; the thesis's test ran
  it forward, reverse, forward (§7.2's free-wheel measurement).

Ours, where the thesis is silent (fixed before the rows were run):

* which trials ran linear drive: the six without the ellipse;
* the order: the automatic mode first, from the start at rest, then the hand driving;
* the station ends the linear drive (a stop packet) when its position packets have shown the
  robot at the far end, the near end and the far end again, within :data:`AT_END`;
* either mode is given up after :data:`GIVE_UP` (the ellipse experiment's time limit), and the
  operator drives on by hand from there;
* the packets the station sends while the robot drives itself: the start packet until a
  position packet shows the mode, then a heartbeat every 47 ms, the thesis's continuous
  transmission (§8.1), so the robot's 1 s watchdog stays fed.
"""

from __future__ import annotations

from dataclasses import dataclass

from freelook.control import ellipse_points
from freelook.experiments._ellipse import THESIS_LOOP, TIME_LIMIT, ThesisStation
from freelook.link import (
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    Message,
    Mode,
    PositionReport,
    Telemetry,
    ThesisCodec,
    position_from_telemetry,
)

__all__ = [
    "AT_END",
    "ELLIPSE_LOSSES",
    "ELLIPSE_TRIALS",
    "GIVE_UP",
    "LINEAR_LENGTH",
    "AutomaticMode",
    "AutomaticOutcome",
    "EllipseRun",
    "LinearRun",
    "automatic_mode",
]

#: the thesis Table 7.2: the losses (UI → robot, robot → UI, fractions) of its trajectory
#: following runs, by the Table 7.1 trial they were part of
ELLIPSE_LOSSES = {
    9: (0.001771, 0.00295),
    7: (0.062831, 0.04978),
    4: (0.045317, 0.022063),
}
#: the Table 7.1 trials that ran the ellipse (Table 7.2)
ELLIPSE_TRIALS = frozenset(ELLIPSE_LOSSES)
#: m: linear drive's two points, 3 m apart along x (§7.1.2)
LINEAR_LENGTH = 3.0
#: m/s: linear drive's speed cap (the mode's 400 mm/s, §6.1)
LINEAR_SPEED = 0.4
#: m: the station counts an end reached when a packet shows the robot this near it
AT_END = 0.05
#: s: an automatic mode not finished by then is given up (the ellipse experiment's limit)
GIVE_UP = TIME_LIMIT
_CODEC = ThesisCodec()


def _as_sent(telemetry: Telemetry) -> PositionReport:
    """The position packet as the station decodes it (integer mm and degrees)."""
    report = position_from_telemetry(telemetry)
    decoded = _CODEC.decode(_CODEC.encode(report, telemetry.stamp)).message
    assert isinstance(decoded, PositionReport)
    return decoded


class EllipseRun:
    """The thesis's station round its ellipse about ``centre``, a command per position packet."""

    name = "the ellipse"

    def __init__(self, centre: tuple[float, float], losses: tuple[float, float]) -> None:
        _, ex, ey = ellipse_points(101)
        self.station = ThesisStation(ex + centre[0], ey + centre[1], THESIS_LOOP)
        self.losses = losses

    @property
    def finished(self) -> bool:
        return self.station.targets.done

    def arrive(self, telemetry: Telemetry) -> None:
        self.station.position(_as_sent(telemetry))

    def command(self) -> Message:
        return self.station.command


class LinearRun:
    """Linear drive forward, reverse, forward over :data:`LINEAR_LENGTH` from ``x0``."""

    name = "linear drive"

    def __init__(self, x0: float, losses: tuple[float, float]) -> None:
        self.start = LinearDriveStart(x0, x0 + LINEAR_LENGTH, LINEAR_SPEED)
        self.ends = (x0 + LINEAR_LENGTH, x0, x0 + LINEAR_LENGTH)
        self.losses = losses
        self.reached = 0  # ends the packets have shown the robot at, in order
        self.in_mode = False
        self.stopped = False

    @property
    def finished(self) -> bool:
        return self.stopped

    def arrive(self, telemetry: Telemetry) -> None:
        report = _as_sent(telemetry)
        self.in_mode |= telemetry.mode is Mode.LINEAR
        if self.reached < len(self.ends) and abs(report.x - self.ends[self.reached]) <= AT_END:
            self.reached += 1

    def command(self) -> Message:
        if self.reached == len(self.ends):
            self.stopped = True
            return LinearDriveStop()
        return Heartbeat() if self.in_mode else self.start


AutomaticMode = EllipseRun | LinearRun


@dataclass(frozen=True)
class AutomaticOutcome:
    """What a trial's automatic mode did: its name and how long it took (None: given up)."""

    name: str
    seconds: float | None


def automatic_mode(
    trial: int, start: tuple[float, float, float], losses: tuple[float, float]
) -> AutomaticMode:
    """Table 7.1's ``trial``'s automatic mode from the nominal ``start``: the ellipse at Table
    7.2's losses for trials 4, 7, 9; linear drive at the trial's own ``losses`` otherwise."""
    if trial in ELLIPSE_TRIALS:
        return EllipseRun((start[0], start[1]), ELLIPSE_LOSSES[trial])
    return LinearRun(start[0], losses)
