"""The approach rule: stop short of what the commanded arc reaches; driving out is free."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.safety import Cycle, Judgement, RuleSetting
from freelook.safety._rule_approach import ApproachRule, _build

ROBOT = load_robot("pioneer3dx")
FRONT = ROBOT.footprint.center_forward + ROBOT.footprint.length / 2


def make() -> ApproachRule:
    return ApproachRule(RuleSetting(ROBOT.safety, ROBOT.footprint, ROBOT.drive, 0.04, 24))


def wall(x: float) -> np.ndarray:
    return np.column_stack((np.full(60, x), np.linspace(-1.5, 1.5, 60)))


def judge(
    rule: ApproachRule, v: float, live: np.ndarray, prior: np.ndarray | None = None
) -> Judgement:
    judgement = Judgement(v, 0.0)
    rule.judge(Cycle(v, 0.0, 0.0, live, prior), judgement)
    return judgement


def test_it_slows_towards_a_wall_and_stops_at_its_margin() -> None:
    near = judge(make(), 0.8, wall(FRONT + 0.3))
    assert 0.0 < near.v < 0.8
    assert judge(make(), 0.8, wall(FRONT + 0.04)).v == 0.0
    assert judge(make(), 0.8, wall(FRONT + 5.0)).v == 0.8  # beyond the horizon


def test_backing_away_from_a_wall_in_the_margin_is_free() -> None:
    rule = make()
    assert judge(rule, 0.5, wall(FRONT + 0.03)).v == 0.0
    assert judge(rule, -0.3, wall(FRONT + 0.03)).v == -0.3


def test_live_and_prior_points_are_each_judged_and_the_nearer_stop_counts() -> None:
    far, near = wall(FRONT + 0.6), wall(FRONT + 0.25)
    alone = judge(make(), 0.8, near).v
    assert judge(make(), 0.8, far, near).v == pytest.approx(alone)
    assert judge(make(), 0.8, near, far).v == pytest.approx(alone)


def test_left_off_by_the_configuration() -> None:
    def setting(**update: object) -> RuleSetting:
        safety = ROBOT.safety.model_copy(update=update)
        return RuleSetting(safety, ROBOT.footprint, ROBOT.drive, 0.04, 24)

    assert _build(setting(approach_check=False)) is None
    assert _build(setting(zones_enabled=False)) is None
    assert isinstance(_build(setting()), ApproachRule)
