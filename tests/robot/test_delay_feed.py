"""The robot server's wiring of the delay rule: the round trips its link session measures with
the station in control reach the rule, no other station's do, and a link that measures none
says so at the start."""

from __future__ import annotations

import logging

import pytest

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import ControlRequest, LinkSession, NativeCodec, ThesisCodec, derive_key
from freelook.maps import load_world
from freelook.robot._delay import feed_round_trips

BASE = load_robot("pioneer3dx")
CONFIG = BASE.model_copy(
    update={"safety": BASE.safety.model_copy(update={"rules": (*BASE.safety.rules, "delay_speed")})}
)
KEY = derive_key("delay feed test passphrase")


def test_the_station_in_control_feeds_the_rule_and_no_other() -> None:
    robot = SimulatedRobot(CONFIG, load_world("square"), seed=1, use_localization=False)
    core = robot.core
    session = LinkSession(NativeCodec(KEY, sender=100), spacing=0.05, role="robot", nonce=b"r")
    (rule,) = feed_round_trips(session, core)
    hook = session.round_trips.on_round_trip
    assert hook is not None
    hook(7, 0.8, 1.0)  # nobody holds control yet
    assert rule.samples == 0
    core.handle(ControlRequest(7, 1), 1.0, station=7)
    assert core.holds_control(7, 1.0)
    hook(9, 0.05, 1.1)  # an observer's faster link is not the driver's
    assert rule.samples == 0
    hook(7, 0.8, 1.2)
    assert rule.samples == 1
    assert rule.round_trip_at(1.2) == 0.8


def test_a_link_without_sessions_says_it_measures_no_round_trip(
    caplog: pytest.LogCaptureFixture,
) -> None:
    robot = SimulatedRobot(CONFIG, load_world("square"), seed=1, use_localization=False)
    session = LinkSession(ThesisCodec(), spacing=0.05)
    with caplog.at_level(logging.WARNING, logger="freelook.robot"):
        (rule,) = feed_round_trips(session, robot.core)
    assert "measures no round trip" in caplog.text
    assert "2.0 s round trip" in caplog.text
    assert session.round_trips.on_round_trip is None
    assert rule.round_trip_at(5.0) == CONFIG.safety.delay_speed.max_round_trip


def test_without_the_rule_nothing_is_wired() -> None:
    robot = SimulatedRobot(BASE, load_world("square"), seed=1, use_localization=False)
    session = LinkSession(NativeCodec(KEY, sender=100), spacing=0.05, role="robot", nonce=b"r")
    assert feed_round_trips(session, robot.core) == []
    assert session.round_trips.on_round_trip is None
