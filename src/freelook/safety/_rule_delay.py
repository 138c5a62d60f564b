"""Rule: a speed that fits the link's delay (``"delay_speed"`` in ``[safety] rules``).

What the operator sees is half a round trip old, and what they command about it arrives half a
round trip later: to stop for something in their picture, the robot drives on for the whole
round trip, one control cycle more (the filter's latency, a command's way to the wheels), and
then brakes. So the speed is capped to the largest v whose stopping distance fits the clear
range ahead, less a margin::

    v · (RTT + cycle) + v² / (2 · a_max) ≤ clear − margin

The clear range is measured along the direction of travel, over the footprint's width (plus the
margin): the nearest point in that lane, from the footprint's front (rear when reversing); the
seen range when the lane is empty. The command is scaled, ratio kept (the robot keeps its arc,
only slower); a point turn is left alone.

The round trip is the robot's own measure, from its clock exchanges with the station in
control (:meth:`DelaySpeedRule.measured`, fed by the robot's server): the longest of the last
``window`` seconds, so a burst counts at once. Nothing measured for ``stale_after`` seconds,
a value that cannot be a round trip (not finite, negative), or one longer than
``max_round_trip`` count as ``max_round_trip``: a missing value caps to the slowest, never to
the fastest.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import numpy.typing as npt

from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, SafetyEvent, register_rule
from freelook.types import SafetyFlags

__all__ = ["DelaySpeedRule", "delay_speed_cap"]

_Array = npt.NDArray[np.float64]


def delay_speed_cap(clear: float, round_trip: float, cycle: float, deceleration: float) -> float:
    """The largest speed v ≥ 0 with v·(round_trip + cycle) + v²/(2·deceleration) ≤ clear."""
    if not clear > 0.0:
        return 0.0
    reaction = (round_trip + cycle) * deceleration
    return -reaction + math.sqrt(reaction * reaction + 2.0 * deceleration * clear)


class DelaySpeedRule(Rule):
    name = "delay_speed"
    flag = int(SafetyFlags.DELAY)

    def __init__(self, setting: RuleSetting) -> None:
        config = setting.safety.delay_speed
        self.config = config
        self.margin = config.margin
        self.cycle = setting.latency
        self.deceleration = setting.drive.max_deceleration
        footprint = setting.footprint
        self._front = footprint.center_forward + footprint.length / 2
        self._rear = footprint.center_forward - footprint.length / 2
        self._middle = footprint.center_forward
        self._half_width = footprint.width / 2 + config.margin
        self._with_prior = config.clear_range == "sensors_and_map"
        #: the lowest cap: the approach check, when it runs, stops a creep short on its own
        safety = setting.safety
        approach = "approach" in safety.rules and safety.approach_check and safety.zones_enabled
        self.floor = config.min_speed if approach else 0.0
        self._trips: deque[tuple[float, float]] = deque(maxlen=256)  # (when, round trip)
        #: values refused as round trips (not finite, negative)
        self.refused = 0
        #: the last cycle's cap (m/s, the way it drove; forward when standing), the round trip
        #: it was computed at (s) and the clear range (m): for the telemetry and the log
        self.cap = 0.0
        self.round_trip = config.max_round_trip
        self.clear = math.inf

    # -- input -------------------------------------------------------------------------------

    def measured(self, now: float, round_trip: float) -> bool:
        """A round trip (s) the robot measured at ``now`` (its clock); False, and counted,
        for a value that cannot be one."""
        if not (math.isfinite(now) and math.isfinite(round_trip) and round_trip >= 0.0):
            self.refused += 1
            return False
        self._trips.append((now, round_trip))
        return True

    @property
    def samples(self) -> int:
        """Round trips kept (the newest 256 at most)."""
        return len(self._trips)

    def round_trip_at(self, now: float) -> float:
        """The round trip the cap counts with at ``now``: the longest of the window's, or
        ``max_round_trip`` when none is fresh (or it is longer)."""
        config = self.config
        trips = self._trips
        while trips and trips[0][0] < now - config.window:
            trips.popleft()
        # the window's round trips measured by now (one stamped ahead of now is not believed)
        longest = max((trip for at, trip in trips if at <= now), default=math.inf)
        newest = max((at for at, _ in trips if at <= now), default=-math.inf)
        if not now - newest <= config.stale_after:  # none, or too old
            return config.max_round_trip
        return min(config.max_round_trip, longest)

    # -- the rule ----------------------------------------------------------------------------

    def clear_ahead(self, forward: bool, live: _Array, prior: _Array | None) -> float:
        """The free distance (m) from the footprint's front (``forward``) or rear along the
        lane the footprint sweeps; ``seen_range`` when nothing is in it."""
        clear = self.config.seen_range
        groups = (live, prior) if self._with_prior and prior is not None else (live,)
        for points in groups:
            if len(points) == 0:
                continue
            x, y = points[:, 0], points[:, 1]
            # in the lane, past the footprint's middle on the side it moves to: a point
            # between the middle and the edge is touching (0 clear)
            if forward:
                ahead = x[(np.abs(y) <= self._half_width) & (x > self._middle)] - self._front
            else:
                ahead = self._rear - x[(np.abs(y) <= self._half_width) & (x < self._middle)]
            if len(ahead):
                clear = min(clear, max(0.0, float(ahead.min())))
        return clear

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        v = judgement.v
        trip = self.round_trip = self.round_trip_at(cycle.now)
        # the cap the way it drives (forward when it stands: what the cockpit shows)
        self.clear = self.clear_ahead(v >= 0.0, cycle.live, cycle.prior)
        cap = self.cap = max(
            self.floor,
            delay_speed_cap(self.clear - self.margin, trip, self.cycle, self.deceleration),
        )
        if abs(v) <= cap:  # a point turn too
            return 0
        s = cap / abs(v)
        judgement.v, judgement.omega = v * s, judgement.omega * s
        return 1

    def events(
        self, cycle: Cycle, judgement: Judgement, previous: int, state: int
    ) -> tuple[SafetyEvent, ...]:
        if state:
            detail = f"speed cap {self.cap:.2f} m/s (round trip {self.round_trip:.2f} s)"
            return (SafetyEvent(cycle.now, self.name, detail),)
        return (SafetyEvent(cycle.now, "clear", f"{self.name} released"),)


def _build(setting: RuleSetting) -> DelaySpeedRule:
    return DelaySpeedRule(setting)


register_rule(DelaySpeedRule.name, _build)
