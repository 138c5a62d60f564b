"""Who may drive from Foxglove: the station's token first, then finite, clamped twists; every
hostile message is refused with a reason, never raised."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import VelocityCommand
from freelook.operator._teleop import (
    AUTH_TOPIC,
    TELEOP_TOPIC,
    Authenticated,
    Drive,
    Refused,
    TeleopGate,
)
from freelook.record import ros_schema

TOKEN = "s3cret-token"


def _gate() -> TeleopGate:
    gate = TeleopGate(TOKEN, max_speed=1.0, max_turn_rate=2.0, hold=1.5)
    assert gate.advertise(7, 1, AUTH_TOPIC, "json") is None
    assert gate.advertise(7, 2, TELEOP_TOPIC, "json") is None
    return gate


def _twist(v: object, w: object) -> bytes:
    return json.dumps({"linear": {"x": v}, "angular": {"z": w}}).encode()


def test_teleop_is_refused_until_the_token_is_presented() -> None:
    gate = _gate()
    refused = gate.message(7, 2, _twist(0.5, 0.0), 0.0)
    assert isinstance(refused, Refused)
    assert "not authenticated" in refused.reason
    assert gate.command(0.0) is None
    wrong = gate.message(7, 1, b'{"token": "guess"}', 0.1)
    assert isinstance(wrong, Refused)
    assert "wrong token" in wrong.reason
    assert isinstance(gate.message(7, 1, json.dumps({"token": TOKEN}).encode(), 0.2), Authenticated)
    drive = gate.message(7, 2, _twist(0.5, -0.25), 0.3)
    assert drive == Drive(7, VelocityCommand(0.5, -0.25), first=True)
    assert gate.command(1.7) == VelocityCommand(0.5, -0.25)
    assert gate.command(1.9) is None  # lapsed after the hold: the bridge sends a stop


def test_another_client_does_not_inherit_an_authentication() -> None:
    gate = _gate()
    gate.message(7, 1, json.dumps({"token": TOKEN}).encode(), 0.0)
    assert gate.advertise(8, 2, TELEOP_TOPIC, "json") is None
    refused = gate.message(8, 2, _twist(0.5, 0.0), 0.1)
    assert isinstance(refused, Refused)


def test_commands_are_clamped_and_non_finite_refused() -> None:
    gate = _gate()
    gate.message(7, 1, json.dumps({"token": TOKEN}).encode(), 0.0)
    drive = gate.message(7, 2, _twist(9.0, -9.0), 0.1)
    assert isinstance(drive, Drive)
    assert drive.command == VelocityCommand(1.0, -2.0)
    for bad in (b'{"linear": {"x": NaN}, "angular": {"z": 0}}', _twist("fast", 0), _twist(True, 0)):
        assert isinstance(gate.message(7, 2, bad, 0.2), Refused)


def test_cdr_twists_and_tokens_are_taken() -> None:
    gate = TeleopGate(TOKEN, max_speed=1.0, max_turn_rate=2.0)
    gate.advertise(3, 1, AUTH_TOPIC, "cdr")
    gate.advertise(3, 2, TELEOP_TOPIC, "cdr")
    token = ros_schema("std_msgs/String").encode({"data": TOKEN})
    assert isinstance(gate.message(3, 1, token, 0.0), Authenticated)
    twist = ros_schema("geometry_msgs/Twist").encode(
        {"linear": {"x": 0.2, "y": 0.0, "z": 0.0}, "angular": {"x": 0.0, "y": 0.0, "z": 0.1}}
    )
    drive = gate.message(3, 2, twist, 0.1)
    assert isinstance(drive, Drive)
    assert drive.command.v == pytest.approx(0.2)
    assert drive.command.omega == pytest.approx(0.1)


@pytest.mark.parametrize(
    ("topic", "encoding", "match"),
    [("/other", "json", "not taken"), (TELEOP_TOPIC, "protobuf", "encoding")],
)
def test_other_topics_and_encodings_are_refused(topic: str, encoding: str, match: str) -> None:
    refused = TeleopGate(TOKEN, 1.0, 1.0).advertise(1, 1, topic, encoding)
    assert refused is not None
    assert match in refused.reason


def test_unadvertised_and_oversized_messages_are_refused() -> None:
    gate = _gate()
    assert "not advertised" in gate.message(7, 99, b"{}", 0.0).reason  # type: ignore[union-attr]
    huge = gate.message(7, 1, b" " * 5000, 0.0)
    assert isinstance(huge, Refused)
    assert "exceeds" in huge.reason


def test_a_driver_that_goes_away_lets_the_station_go() -> None:
    gate = _gate()
    gate.message(7, 1, json.dumps({"token": TOKEN}).encode(), 0.0)
    gate.message(7, 2, _twist(0.1, 0.0), 0.1)
    assert not gate.unadvertise(7, 1)  # the auth channel
    assert gate.unadvertise(7, 2)  # the teleop channel of a client that drove
    assert 7 not in gate.authenticated


@settings(max_examples=300, deadline=None)
@given(
    channel=st.sampled_from([1, 2, 3]),
    data=st.one_of(
        st.binary(max_size=200),
        st.builds(lambda v: _twist(v, 0.0), st.one_of(st.floats(), st.text(), st.none())),
    ),
)
def test_hostile_messages_never_raise(channel: int, data: bytes) -> None:
    gate = TeleopGate(TOKEN, 1.0, 1.0)
    gate.advertise(1, 1, AUTH_TOPIC, "cdr")
    gate.advertise(1, 2, TELEOP_TOPIC, "json")
    gate.advertise(1, 3, TELEOP_TOPIC, "cdr")
    event = gate.message(1, channel, data, 0.0)
    assert isinstance(event, Refused | Authenticated | Drive)
    if isinstance(event, Drive):
        pytest.fail("drove without the token")


def test_a_client_that_guesses_the_token_is_refused_unchecked_for_a_while() -> None:
    gate = _gate()
    budget = gate.guesses.budget
    for k in range(budget):
        refused = gate.message(7, 1, json.dumps({"token": f"guess{k}"}).encode(), 0.0)
        assert isinstance(refused, Refused)
        assert refused.guess
    # over its budget: even the right token is not checked until the window passes
    blocked = gate.message(7, 1, json.dumps({"token": TOKEN}).encode(), 1.0)
    assert isinstance(blocked, Refused)
    assert "too many wrong tokens" in blocked.reason
    assert 7 not in gate.authenticated
    later = gate.message(7, 1, json.dumps({"token": TOKEN}).encode(), gate.guesses.window)
    assert isinstance(later, Authenticated)
    report = gate.guesses.report(gate.guesses.window)
    assert report is not None
    assert f"refused {budget + 1} attempt(s)" in report
