"""The e-stop rule: zero while engaged, and no rule after it moves the robot."""

from __future__ import annotations

import numpy as np

from freelook.config import load_robot
from freelook.link import SafetyFlags
from freelook.safety import Cycle, Judgement, SafetyFilter
from freelook.safety._rule_estop import EstopRule

ROBOT = load_robot("pioneer3dx")
NONE = np.zeros((0, 2))


def test_engaged_it_commands_zero_and_stops_the_chain() -> None:
    rule = EstopRule()
    cycle = Cycle(0.5, 0.2, 0.0, NONE, None)
    free = Judgement(0.5, 0.2)
    assert rule.judge(cycle, free) == 0
    assert (free.v, free.omega, free.stopped) == (0.5, 0.2, False)
    rule.engaged = True
    held = Judgement(0.5, 0.2)
    assert rule.judge(cycle, held) == 1
    assert (held.v, held.omega, held.stopped) == (0.0, 0.0, True)


def test_under_it_a_silent_link_is_no_watchdog_stop() -> None:
    """The rules after the e-stop do not judge: the decision names the e-stop alone, and its
    release and engagement are events."""
    f = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive)
    f.set_estop(True)  # and no command ever came: the watchdog would act
    d = f.filter(0.5, 0.2, NONE, 1.0)
    assert (d.v, d.omega, d.rules, d.flags) == (0.0, 0.0, ("estop",), SafetyFlags.ESTOP)
    assert [(e.kind, e.detail) for e in d.events] == [("estop", "estop engaged")]
    f.set_estop(False)
    d = f.filter(0.5, 0.2, NONE, 1.02)
    assert d.rules == ("watchdog",)
    assert [(e.kind, e.detail) for e in d.events] == [
        ("clear", "estop released"),
        ("watchdog", "watchdog engaged"),
    ]
