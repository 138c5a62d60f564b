"""Rule: a pressed bumper blocks motion towards its side (the other way stays free)."""

from __future__ import annotations

from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, register_rule
from freelook.types import SafetyFlags

__all__ = ["BumperRule"]


class BumperRule(Rule):
    name = "bumper"
    flag = int(SafetyFlags.BUMPER)

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        v = judgement.v
        if (cycle.bumper_front and v > 0) or (cycle.bumper_rear and v < 0):
            judgement.v = 0.0
            return 1
        return 0


def _build(setting: RuleSetting) -> BumperRule:
    return BumperRule()


register_rule(BumperRule.name, _build)
