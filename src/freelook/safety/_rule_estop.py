"""Rule: the latching e-stop commands zero, and no rule after it moves the robot."""

from __future__ import annotations

from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, register_rule
from freelook.types import SafetyFlags

__all__ = ["EstopRule"]


class EstopRule(Rule):
    name = "estop"
    flag = int(SafetyFlags.ESTOP)

    def __init__(self) -> None:
        self.engaged = False  # latched until released on purpose

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        if not self.engaged:
            return 0
        judgement.v = judgement.omega = 0.0
        judgement.stopped = True
        return 1


def _build(setting: RuleSetting) -> EstopRule:
    return EstopRule()


register_rule(EstopRule.name, _build)
