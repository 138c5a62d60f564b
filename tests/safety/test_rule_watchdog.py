"""The watchdog rule: a silent link's controlled stop, from what the robot was last told."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.safety import Cycle, Judgement, RuleSetting
from freelook.safety._rule_watchdog import WatchdogRule

ROBOT = load_robot("pioneer3dx")
NONE = np.zeros((0, 2))
A = ROBOT.drive.max_deceleration


def make(stop: str = "ramp") -> WatchdogRule:
    safety = ROBOT.safety.model_copy(update={"watchdog_stop": stop})
    return WatchdogRule(RuleSetting(safety, ROBOT.footprint, ROBOT.drive, 0.04, 24))


def cycle(
    rule: WatchdogRule,
    now: float,
    v: float = 0.5,
    omega: float = 0.0,
    measured: tuple[float, float] | None = None,
) -> Judgement:
    """One cycle of the rule alone: its judgement (``stopped``: it acted)."""
    c = Cycle(v, omega, now, NONE, None, measured=measured)
    judgement = Judgement(v, omega)
    judgement.stopped = rule.judge(c, judgement) > 0
    rule.settled(c, judgement)
    return judgement


def test_quiet_past_the_timeout_it_ramps_down_what_was_let_through() -> None:
    rule = make()
    rule.command_received(0.0)
    assert cycle(rule, 0.48).v == 0.5  # within the timeout: untouched
    assert not cycle(rule, ROBOT.safety.watchdog_timeout).stopped  # the timeout itself: not yet
    first = cycle(rule, 0.52)
    assert first.stopped
    assert first.v == pytest.approx(0.5 - A * 0.02)
    assert cycle(rule, 0.54).v == pytest.approx(0.5 - A * 0.04)  # braked on from the last
    assert cycle(rule, 5.0).v == 0.0
    rule.command_received(5.0)  # a fresh command releases it
    assert cycle(rule, 5.02, 0.2).v == 0.2


def test_it_brakes_from_the_measured_speed_when_that_is_slower() -> None:
    rule = make()
    rule.command_received(0.0)
    cycle(rule, 0.5)
    stop = cycle(rule, 0.52, measured=(0.1, 0.0))
    assert stop.v == pytest.approx(0.1 - A * 0.02)


def test_turning_in_place_it_brakes_the_turn() -> None:
    rule = make()
    rule.command_received(0.0)
    cycle(rule, 0.5, 0.0, 1.0)
    alpha = 2.0 * A / ROBOT.drive.track_width
    assert cycle(rule, 0.52, 0.0, 1.0).omega == pytest.approx(1.0 - alpha * 0.02)


def test_zero_stops_at_once_and_an_expired_or_lapsed_command_is_silence() -> None:
    rule = make("zero")
    rule.command_received(0.0, until=0.2)
    assert cycle(rule, 0.1).v == 0.5
    expired = cycle(rule, 0.25, 0.5, 0.4)  # recent, but past its expiry
    assert (expired.v, expired.omega, expired.stopped) == (0.0, 0.0, True)
    rule.command_received(0.3)
    assert cycle(rule, 0.32).v == 0.5
    rule.command_lapsed()
    assert cycle(rule, 0.34).v == 0.0
