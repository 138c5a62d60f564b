"""The thesis's operator in the reckless experiment, as the thesis describes the station, fixed
before its rows were run (and not to be changed after a row is seen).

From the thesis:

* **What the operator sees** is the newest position packet that arrived (Table 5.6): the pose,
  the velocities, 35 laser readings spread evenly over the scan ("uniformly divided 35 laser
  range readings") and the eight sonars of the rear ring ("from the back side of the robot").
  Not the front sonar ring, not the other laser readings. The packet is made by
  :func:`freelook.link.position_from_telemetry`, the thesis profile's own encoder. The robot
  sends one every 31 ms (§6.1); each is lost at the trial's robot → UI rate (Table 7.1).
* **What the operator commands** is manual control's keys (§5.3.1): each arrow-key event
  steps the set-point by 20 mm/s (↑/↓) or 2 °/s (←/→), the space bar sets v = ω = 0; the
  set-point is capped at direct control's 500 mm/s and 50 °/s (§6.1) and sent every 47 ms
  (§6.1), each packet lost at the trial's UI → robot rate.
* **How fast**: the zones give "the operator a complete confidence in driving the robot with
  high speeds" (§5.2.1): the operator wants the mode's full speed.

Ours (the thesis does not describe its operator's decisions; each named in the rows):

* a held key repeats at :data:`KEY_RATE` events a second (Windows' default repeat rate; the
  station ran on Windows), ↑ or ↓ and ← or → held at once;
* the operator acts on what a packet showed :data:`REACTION_TIME` after it arrived (a
  driver's reaction when expecting the event, 0.7–0.75 s: Green 2000, "How long does it take
  to stop?", Transportation Human Factors 2(3));
* **wandering** (the thesis's 9 trials and our seeded sets): full speed ahead; when a laser
  reading of the packet within ±:data:`AHEAD_HALF_ANGLE` ahead is nearer than
  :data:`LOOK_AHEAD`, hold ← or → towards the side whose readings there have more room, and
  keep that side until nothing is that near ahead; nearer than :data:`CLOSE_AHEAD`, press
  space once and turn on the spot. From a standing set-point at the start, ↑ from the first
  moment: no look before driving off.
* **the narrow passage** (§7.1.4's drive through the narrow part): full speed, steering by the
  pose on the map towards a point :data:`AIM_AHEAD` ahead on the passage's centre line
  (ω wanted :data:`AIM_GAIN` × the bearing to it, within the mode's 50 °/s), not turning away
  from the passage's walls; space once through.
"""

from __future__ import annotations

import functools
import math
from collections import deque
from dataclasses import dataclass

from freelook.link import PositionReport, Telemetry, position_from_telemetry

__all__ = [
    "AHEAD_HALF_ANGLE",
    "AIM_AHEAD",
    "AIM_GAIN",
    "CLOSE_AHEAD",
    "KEY_RATE",
    "LOOK_AHEAD",
    "REACTION_TIME",
    "Keys",
    "PacketView",
    "Passage",
    "Wander",
]

#: m: the operator turns away from a laser reading this near ahead (within ±AHEAD_HALF_ANGLE)
LOOK_AHEAD = 1.0
AHEAD_HALF_ANGLE = math.radians(40.0)
#: m: within this the operator stops (space) and turns on the spot
CLOSE_AHEAD = 0.5
#: s: the operator acts on what a packet showed this long after it arrived (Green 2000)
REACTION_TIME = 0.7
#: key events a second while an arrow key is held (Windows' default repeat rate)
KEY_RATE = 30.0
#: the keys' steps (the thesis §5.3.1) and manual control's limits (§6.1)
V_STEP, W_STEP = 0.02, math.radians(2.0)
V_MAX, W_MAX = 0.5, math.radians(50.0)
#: the narrow passage: the point aimed at is this far ahead on its centre line (m), ω wanted
#: this many times its bearing (1/s)
AIM_AHEAD = 1.0
AIM_GAIN = 2.0


class Keys:
    """The station's manual set-point, moved only as its keys move it (the thesis §5.3.1)."""

    def __init__(self) -> None:
        self.v = 0.0
        self.w = 0.0
        self._events = 0.0  # key events owed since the last step (fractions carried)

    def space(self) -> None:
        self.v = self.w = 0.0

    def step(self, dt: float, v_wanted: float, w_wanted: float) -> tuple[float, float]:
        """Hold the keys towards (``v_wanted``, ``w_wanted``) for ``dt`` seconds; the set-point."""
        self._events += dt * KEY_RATE
        n = int(self._events)
        self._events -= n
        self.v = _towards(self.v, min(V_MAX, max(-V_MAX, v_wanted)), n * V_STEP)
        self.w = _towards(self.w, min(W_MAX, max(-W_MAX, w_wanted)), n * W_STEP)
        return self.v, self.w


def _towards(now: float, wanted: float, most: float) -> float:
    """``now`` moved towards ``wanted`` by at most ``most`` (whole key steps: never past it)."""
    if abs(wanted - now) <= most:
        return wanted
    return now + math.copysign(most, wanted - now)


@dataclass(frozen=True)
class _Seen:
    """What one packet showed the operator: the laser's 35 readings and their bearings."""

    packet: PositionReport
    bearings: tuple[float, ...]


@functools.cache
def _picked(beams: int, readings: int) -> tuple[int, ...]:
    """Which of a scan's ``beams`` the packet's ``readings`` are (the same few every packet)."""
    return tuple(round(i * (beams - 1) / (readings - 1)) for i in range(readings))


class PacketView:
    """The packets the station received, each seen :data:`REACTION_TIME` after it arrived."""

    def __init__(self) -> None:
        self._arrived: deque[tuple[float, _Seen]] = deque()
        self.acting_on: _Seen | None = None
        self.received = 0

    def arrive(self, now: float, telemetry: Telemetry) -> None:
        """A position packet made from ``telemetry`` reached the station at ``now``."""
        packet = position_from_telemetry(telemetry)
        picked = _picked(len(telemetry.laser), len(packet.laser))
        start, step = telemetry.laser_angle_min, telemetry.laser_angle_increment
        self._arrived.append((now, _Seen(packet, tuple(start + i * step for i in picked))))
        self.received += 1

    def look(self, now: float) -> _Seen | None:
        """The newest packet whose reaction time has passed at ``now``."""
        while self._arrived and self._arrived[0][0] <= now - REACTION_TIME:
            self.acting_on = self._arrived.popleft()[1]
        return self.acting_on


class Wander:
    """The wandering operator: full speed, turning away from what the packet's laser shows."""

    def __init__(self) -> None:
        self.keys = Keys()
        self._side = 0.0  # the side being turned to (+1 left, −1 right), 0 when not turning

    def command(self, seen: _Seen | None, dt: float) -> tuple[float, float]:
        if seen is None or len(seen.packet.laser) < 2:  # nothing shown yet: ↑
            return self.keys.step(dt, V_MAX, 0.0)
        ahead = [
            (b, r)
            for b, r in zip(seen.bearings, seen.packet.laser, strict=True)
            if abs(b) <= AHEAD_HALF_ANGLE
        ]
        ahead = [(b, r) for b, r in ahead if r > 0.0]  # 0 (and NaN): no reading
        nearest = min((r for _, r in ahead), default=math.inf)
        if nearest >= LOOK_AHEAD:
            self._side = 0.0
            return self.keys.step(dt, V_MAX, 0.0)
        if self._side == 0.0:
            left = [r for b, r in ahead if b > 0.0]
            right = [r for b, r in ahead if b < 0.0]
            room_left = sum(left) / len(left) if left else 0.0
            room_right = sum(right) / len(right) if right else 0.0
            self._side = 1.0 if room_left >= room_right else -1.0
        if nearest < CLOSE_AHEAD:
            if self.keys.v != 0.0:
                self.keys.space()
            return self.keys.step(dt, 0.0, self._side * W_MAX)
        return self.keys.step(dt, V_MAX, self._side * W_MAX)


class Passage:
    """The operator driving through the narrow passage by the map: along ``line_y`` towards
    +x, full speed, space once past ``through_x``."""

    def __init__(self, line_y: float, through_x: float) -> None:
        self.keys = Keys()
        self.line_y, self.through_x = line_y, through_x
        self.done = False

    def command(self, seen: _Seen | None, dt: float) -> tuple[float, float]:
        if seen is None:
            return self.keys.step(dt, V_MAX, 0.0)
        p = seen.packet
        if self.done or p.x >= self.through_x:
            if not self.done:
                self.keys.space()
            self.done = True
            return self.keys.step(dt, 0.0, 0.0)
        bearing = math.remainder(math.atan2(self.line_y - p.y, AIM_AHEAD) - p.theta, math.tau)
        return self.keys.step(dt, V_MAX, AIM_GAIN * bearing)
