"""Rule: with no valid command for ``watchdog_timeout``, a controlled stop, latched until a
fresh command arrives.

``watchdog_stop = "ramp"`` brakes what the robot was last told at the deceleration limit (from
what it is doing, where that is slower); ``"zero"`` commands zero at once, for a base whose own
controller brakes at its limit (so its zero is not braked twice).
"""

from __future__ import annotations

import math

from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, register_rule
from freelook.types import SafetyFlags

__all__ = ["WatchdogRule"]


class WatchdogRule(Rule):
    name = "watchdog"
    flag = int(SafetyFlags.WATCHDOG)

    def __init__(self, setting: RuleSetting) -> None:
        self.timeout = setting.safety.watchdog_timeout
        self.zero = setting.safety.watchdog_stop == "zero"
        self.deceleration = setting.drive.max_deceleration
        self.track_width = setting.drive.track_width
        self.last_command_time: float | None = None
        self.command_until: float | None = None  # the last command's expiry (None: none)
        self._tripped = False
        # what the filter let through last cycle, and when
        self._last_v = 0.0
        self._last_omega = 0.0
        self._last_time: float | None = None

    def command_received(self, now: float, until: float | None = None) -> None:
        """A valid command arrived (it releases a tripped watchdog); ``until``: its expiry,
        after which the robot stops however recent the command is."""
        self.last_command_time = now
        self.command_until = until

    def command_lapsed(self) -> None:
        """The sender can no longer stand by its command: the stop starts now."""
        self.last_command_time = None

    def silent(self, now: float) -> bool:
        last = self.last_command_time
        return (
            last is None
            or now - last > self.timeout
            or (self.command_until is not None and now > self.command_until)
        )

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        now = cycle.now
        if not self.silent(now):
            self._tripped = False
            return 0
        dt = 0.0 if self._last_time is None else max(0.0, now - self._last_time)
        last_v, last_omega = self._last_v, self._last_omega
        measured = cycle.measured
        if not self._tripped and measured is not None:
            # brake from what the robot is doing, if that is slower than its command
            if abs(measured[0]) < abs(last_v):
                last_v = math.copysign(abs(measured[0]), last_v)
            if abs(measured[1]) < abs(last_omega):
                last_omega = math.copysign(abs(measured[1]), last_omega)
        self._tripped = True
        if self.zero:
            r = 0.0  # the base's own controller brakes at its limit
        elif abs(last_v) > 1e-9:
            r = max(0.0, abs(last_v) - self.deceleration * dt) / abs(last_v)
        elif abs(last_omega) > 1e-9:
            alpha = 2.0 * self.deceleration / self.track_width
            r = max(0.0, abs(last_omega) - alpha * dt) / abs(last_omega)
        else:
            r = 0.0
        judgement.v, judgement.omega = last_v * r, last_omega * r
        return 1

    def settled(self, cycle: Cycle, judgement: Judgement) -> None:
        # the ramp starts from what the rules let through (a cut by the hardware aside)
        self._last_v, self._last_omega = judgement.v, judgement.omega
        self._last_time = cycle.now


def _build(setting: RuleSetting) -> WatchdogRule:
    return WatchdogRule(setting)


register_rule(WatchdogRule.name, _build)
