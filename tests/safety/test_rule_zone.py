"""The zone rule: the innermost zone the nearest reading falls in caps the speed, ratio kept."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.safety import Cycle, Judgement, RuleSetting
from freelook.safety._rule_zone import ZoneRule, limit_ratio

ROBOT = load_robot("pioneer3dx")
ZONES = ROBOT.safety.zones


def make(rule: str = "nearest", enabled: bool = True) -> ZoneRule | None:
    from freelook.safety._rule_zone import _build

    safety = ROBOT.safety.model_copy(update={"zone_rule": rule, "zones_enabled": enabled})
    return _build(RuleSetting(safety, ROBOT.footprint, ROBOT.drive, 0.04, 24))


def judge(rule: ZoneRule, v: float, omega: float, points: np.ndarray) -> tuple[int, Judgement]:
    judgement = Judgement(v, omega)
    return rule.judge(Cycle(v, omega, 0.0, points, None), judgement), judgement


def test_the_innermost_zone_caps_to_its_own_limits_ratio_kept() -> None:
    rule = make()
    assert rule is not None
    state, j = judge(rule, 1.0, 0.5, np.array([[0.0, 0.45]]))
    assert state == 1
    assert j.zone == 0
    assert abs(j.v) <= ZONES[0].max_speed + 1e-12
    assert abs(j.omega) <= math.radians(ZONES[0].max_turn_rate_deg) + 1e-12
    assert j.v / j.omega == pytest.approx(2.0)
    assert j.clearance == pytest.approx(0.45)
    state, j = judge(rule, 0.1, 0.0, np.array([[0.0, 0.45]]))  # slow enough: no cap
    assert (state, j.zone, j.v) == (0, -1, 0.1)
    state, j = judge(rule, 1.0, 0.0, np.array([[3.0, 0.0]]))  # outside every zone
    assert (state, j.v) == (0, 1.0)


def test_the_direction_rule_counts_only_the_side_driven_towards() -> None:
    rule = make("direction")
    assert rule is not None
    behind = np.array([[-0.5, 0.0]])
    assert judge(rule, 1.0, 0.0, behind)[0] == 0
    assert judge(rule, -1.0, 0.0, behind)[0] == 1


def test_it_measures_the_clearance_even_when_the_robot_is_stopped() -> None:
    rule = make()
    assert rule is not None
    j = Judgement(0.0, 0.0)
    j.stopped = True
    assert rule.judge(Cycle(0.5, 0.0, 0.0, np.array([[0.5, 0.0]]), None), j) == 0
    assert j.clearance == pytest.approx(0.5)
    assert j.zone == -1


def test_off_by_the_configuration_it_is_not_built() -> None:
    assert make(enabled=False) is None


def test_limit_ratio_keeps_both_within_their_limits() -> None:
    assert limit_ratio(1.0, 0.5, 0.5, 1.0) == 0.5
    assert limit_ratio(1.0, 2.0, 0.5, 0.5) == 0.25
    assert limit_ratio(0.1, 0.1, 0.5, 0.5) == 1.0
