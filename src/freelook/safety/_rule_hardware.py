"""Rule: the hardware does not answer (a lost cable or socket), so nothing is commanded.

The rules after it still judge (their flags say what else holds), but the actuators get zero:
an old command must not be replayed when the hardware comes back. What the hardware says is
wrong is its event, once; its recovery is the e-stop's release (the robot's control cycle asks
for it).
"""

from __future__ import annotations

from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, SafetyEvent, register_rule
from freelook.types import SafetyFlags

__all__ = ["HardwareRule"]


class HardwareRule(Rule):
    name = "hardware"
    flag = int(SafetyFlags.HARDWARE)
    always = True  # whatever else stopped the robot, nothing may be commanded

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        if cycle.hardware_fault is None:
            return 0
        judgement.cut = True
        return 1

    def events(
        self, cycle: Cycle, judgement: Judgement, previous: int, state: int
    ) -> tuple[SafetyEvent, ...]:
        if state:
            return (SafetyEvent(cycle.now, "hardware", cycle.hardware_fault or ""),)
        return (SafetyEvent(cycle.now, "clear", "the hardware answers again"),)


def _build(setting: RuleSetting) -> HardwareRule:
    return HardwareRule()


register_rule(HardwareRule.name, _build)
