"""The hardware rule: with the hardware silent nothing is commanded, whatever else holds."""

from __future__ import annotations

import numpy as np

from freelook.config import load_robot
from freelook.link import SafetyFlags
from freelook.safety import Cycle, Judgement, SafetyFilter
from freelook.safety._rule_hardware import HardwareRule

ROBOT = load_robot("pioneer3dx")
NONE = np.zeros((0, 2))


def test_a_fault_cuts_the_command_and_leaves_the_rest_judging() -> None:
    rule = HardwareRule()
    judgement = Judgement(0.5, 0.1)
    assert rule.judge(Cycle(0.5, 0.1, 0.0, NONE, None, hardware_fault="cable out"), judgement)
    assert judgement.cut
    assert not judgement.stopped
    assert (judgement.v, judgement.omega) == (0.5, 0.1)  # the command as the others judge it
    answering = Judgement(0.5, 0.1)
    assert rule.judge(Cycle(0.5, 0.1, 0.0, NONE, None), answering) == 0
    assert not answering.cut


def test_through_the_filter_zero_is_commanded_and_the_fault_is_said_once() -> None:
    f = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive)
    f.command_received(0.0)
    d = f.filter(0.5, 0.1, NONE, 0.0, hardware_fault="no answer on /dev/ttyUSB0")
    assert (d.v, d.omega, d.scale) == (0.0, 0.0, 0.0)
    assert d.flags == SafetyFlags.HARDWARE
    assert d.rules == ("hardware",)
    assert [(e.kind, e.detail) for e in d.events] == [("hardware", "no answer on /dev/ttyUSB0")]
    # the others still judge beside it: a bumper's flag joins the hardware's
    d = f.filter(0.5, 0.1, NONE, 0.02, True, hardware_fault="no answer on /dev/ttyUSB0")
    assert d.flags == SafetyFlags.HARDWARE | SafetyFlags.BUMPER
    assert d.rules == ("hardware", "bumper")
    assert [e.kind for e in d.events] == ["bumper"]
    d = f.filter(0.5, 0.1, NONE, 0.04)
    assert (d.v, d.omega, d.scale, d.flags) == (0.5, 0.1, 1.0, SafetyFlags.NONE)
    assert [(e.kind, e.detail) for e in d.events] == [
        ("clear", "the hardware answers again"),
        ("clear", "bumper released"),
    ]
