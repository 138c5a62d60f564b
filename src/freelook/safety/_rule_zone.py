"""Rule: the thesis's three zones, innermost tested first (the thesis's Algorithm 5.1 tests the
outermost first and returns, so its inner zones never act).

The nearest reading all around picks the zone (the thesis's rule; ``zone_rule = "direction"``
counts only the readings on the side the robot moves towards), and (v, ω) are capped to its
limits, ratio kept (the robot keeps its arc, only slower). The zone is measured even when a
rule before stopped the robot: the decision reports the clearance.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.hal import scale_within
from freelook.safety._footprint import nearest_squared
from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, SafetyEvent, register_rule
from freelook.types import SafetyFlags

__all__ = ["ZoneRule", "limit_ratio"]

_Array = npt.NDArray[np.float64]
_NO_POINTS: _Array = np.zeros((0, 2))


def limit_ratio(v: float, omega: float, v_max: float, omega_max: float) -> float:
    """The largest factor s ≤ 1 with |s·v| ≤ v_max and |s·ω| ≤ ω_max."""
    return scale_within((v, omega), (v_max, omega_max))


class ZoneRule(Rule):
    name = "zone"
    flag = int(SafetyFlags.ZONE)
    always = True  # measures the clearance however the robot was stopped

    def __init__(self, setting: RuleSetting) -> None:
        safety, footprint = setting.safety, setting.footprint
        self.zones = [
            (z.boundary, z.max_speed, math.radians(z.max_turn_rate_deg)) for z in safety.zones
        ]
        self.direction = safety.zone_rule == "direction"
        self.rear = footprint.center_forward - footprint.length / 2
        self.front = footprint.center_forward + footprint.length / 2

    def classify(self, v: float, points: _Array, prior: _Array | None) -> tuple[int, float]:
        """(zone index or −1, clearance) from the points and the prior ones together, without
        stacking them (the nearest of both is the nearest of the stack, each row's norm
        rounded alike)."""
        if len(points) == 0 and (prior is None or len(prior) == 0):
            return -1, math.inf
        side = 0
        if self.direction and abs(v) > 1e-3:
            side = 1 if v > 0 else -1
        squared = nearest_squared(
            np.ascontiguousarray(points, dtype=np.float64),
            _NO_POINTS if prior is None else np.ascontiguousarray(prior, dtype=np.float64),
            side,
            self.rear,
            self.front,
        )
        if squared == math.inf:  # nothing counted (or only points at infinity, the same)
            return -1, math.inf
        clearance = math.sqrt(squared)
        for index, (boundary, _, _) in enumerate(self.zones):  # innermost first
            if clearance < boundary:
                return index, clearance
        return -1, clearance

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        # the zone of the command as it came (its direction picks the readings)
        zone, judgement.clearance = self.classify(cycle.v, cycle.live, cycle.prior)
        if zone < 0 or judgement.stopped:
            return 0
        _, v_max, w_max = self.zones[zone]
        s = limit_ratio(judgement.v, judgement.omega, v_max, w_max)
        if s >= 1.0:
            return 0
        judgement.v *= s
        judgement.omega *= s
        judgement.zone = zone
        return zone + 1  # a change of zone is an event

    def events(
        self, cycle: Cycle, judgement: Judgement, previous: int, state: int
    ) -> tuple[SafetyEvent, ...]:
        if state:
            detail = f"zone {state - 1} (clearance {judgement.clearance:.2f} m)"
            return (SafetyEvent(cycle.now, "zone", detail),)
        return (SafetyEvent(cycle.now, "clear", "left the zones"),)


def _build(setting: RuleSetting) -> ZoneRule | None:
    return ZoneRule(setting) if setting.safety.zones_enabled else None


register_rule(ZoneRule.name, _build)
