"""A rule of this file's own, a keep-out circle: it joins the robot's rules by its name in the
configuration, with no change anywhere else."""

from __future__ import annotations

import math

import numpy as np

from freelook.config import load_robot
from freelook.link import SafetyFlags
from freelook.safety import Cycle, Judgement, Rule, RuleSetting, SafetyFilter, register_rule

ROBOT = load_robot("pioneer3dx")
NONE = np.zeros((0, 2))


def make(*rules: str) -> SafetyFilter:
    safety = ROBOT.safety.model_copy(update={"rules": rules})
    return SafetyFilter(safety, ROBOT.footprint, ROBOT.drive)


class KeepOutCircle(Rule):
    """No motion towards a circle's centre that could not stop before its edge (the circle in
    the robot frame; the turn is left alone)."""

    name = "keep_out"
    flag = int(SafetyFlags.ZONE)

    def __init__(self, setting: RuleSetting, x: float, y: float, radius: float) -> None:
        self.centre = (x, y)
        self.radius = radius
        self.deceleration = setting.drive.max_deceleration

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        x, y = self.centre
        distance = math.hypot(x, y)
        closing = judgement.v * x / distance  # the speed towards the centre
        stopping = closing * closing / (2.0 * self.deceleration)
        if closing <= 0.0 or distance - self.radius > stopping + 0.1:
            return 0
        judgement.v = 0.0
        return 1


register_rule("keep_out", lambda setting: KeepOutCircle(setting, 0.8, 0.2, 0.65))


def test_a_keep_out_circle_of_the_test_s_own_joins_by_its_name() -> None:
    plain = make(*ROBOT.safety.rules)
    guarded = make(*ROBOT.safety.rules, "keep_out")
    assert guarded.rules[-1].name == "keep_out"
    for f in (plain, guarded):
        f.command_received(0.0)
    assert plain.filter(0.6, 0.1, NONE, 0.0).v == 0.6  # nothing in sight: the command passes
    d = guarded.filter(0.6, 0.1, NONE, 0.0)
    assert (d.v, d.omega) == (0.0, 0.1)
    assert d.rules == ("keep_out",)
    assert d.flags == SafetyFlags.ZONE
    assert [(e.kind, e.detail) for e in d.events] == [("keep_out", "keep_out engaged")]
    away = guarded.filter(-0.3, 0.0, NONE, 0.02)  # backing away from it is free
    assert away.v == -0.3
    assert away.rules == ()
    assert [(e.kind, e.detail) for e in away.events] == [("clear", "keep_out released")]
    # the rules before it still come first: the e-stop ends the chain before the circle
    guarded.set_estop(True)
    assert guarded.filter(0.6, 0.0, NONE, 0.04).rules == ("estop",)
