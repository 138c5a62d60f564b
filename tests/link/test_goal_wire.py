"""Click-to-go's messages on the native profile: a goal round-trips with its expiry at any
point the wire carries, its stop round-trips, and a goal whose numbers are not finite or out
of range, or whose payload is the wrong size, is refused at decode (the robot never sees it); a
goal that arrives after its expiry is refused by the robot and never driven to."""

from __future__ import annotations

import hashlib
import math
import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    EXPIRING_COMMANDS,
    GoalStart,
    GoalStop,
    LinkSession,
    NativeCodec,
    Refused,
    ValueRangeError,
    derive_key,
)
from freelook.maps import World
from freelook.types import Mode

KEY = derive_key("goal wire test passphrase")
coordinate = st.floats(-1e6, 1e6, allow_nan=False, width=32)


@settings(max_examples=200)
@given(st.builds(GoalStart, coordinate, coordinate), st.floats(0, 1e9), st.floats(0, 1e9))
def test_a_goal_round_trips_with_its_expiry(goal: GoalStart, stamp: float, expires: float) -> None:
    sender, receiver = NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)
    decoded = receiver.decode(sender.encode(goal, stamp, expires=expires))
    assert decoded.message == goal
    assert decoded.expires == pytest.approx(expires, abs=1e-6)
    stop = receiver.decode(sender.encode(GoalStop(), stamp))
    assert stop.message == GoalStop()
    assert stop.expires is None


def test_a_goal_expires_and_its_stop_never_does() -> None:
    assert GoalStart in EXPIRING_COMMANDS
    assert GoalStop not in EXPIRING_COMMANDS  # a stop acts whenever it comes


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf, 2e6, -3e38])
@pytest.mark.parametrize("field", ["x", "y"])
def test_a_goal_out_of_range_is_refused_at_encode_and_at_decode(field: str, bad: float) -> None:
    goal = GoalStart(bad, 1.0) if field == "x" else GoalStart(1.0, bad)
    with pytest.raises(ValueRangeError, match=f"GoalStart.{field}"):
        NativeCodec(KEY, sender=1).encode(goal, 1.0)
    # a peer with the key that sends it anyway: a well-tagged packet, refused for its value
    codec = NativeCodec(KEY, sender=1)
    packet = codec.encode(GoalStart(1.5, 1.0), 1.0)
    marker = struct.pack("<ff", 1.5, 1.0)
    forged = struct.pack("<ff", *((bad, 1.0) if field == "x" else (1.5, bad)))
    body = packet[:-16].replace(marker, forged)
    packet = body + hashlib.blake2s(body, key=KEY, digest_size=16).digest()
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(packet, 1.0)
    assert isinstance(event, Refused)
    assert event.reason == "value"
    assert f"GoalStart.{field}" in str(event.error)


@pytest.mark.parametrize(
    ("message", "claimed"),
    [(GoalStop(), 34), (GoalStart(1.0, 2.0), 35)],  # no payload for a goal; 8 B for its stop
)
def test_a_goal_or_its_stop_with_a_payload_of_the_wrong_size_is_refused(
    message: GoalStart | GoalStop, claimed: int
) -> None:
    packet = NativeCodec(KEY, sender=1).encode(message, 1.0)
    body = bytearray(packet[:-16])
    body[4] = claimed  # the type code, the payload left as it was
    forged = bytes(body) + hashlib.blake2s(bytes(body), key=KEY, digest_size=16).digest()
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(forged, 1.0)
    assert isinstance(event, Refused)
    assert event.reason == "malformed"


def test_a_late_goal_is_refused_by_the_robot_and_never_driven_to() -> None:
    res, n = 0.05, 160
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    world = World("floor", grid, res, (-4.0, -4.0))
    robot = SimulatedRobot(
        load_robot("pioneer3dx"), world, pose=(0.0, 0.0, 0.0), use_localization=False
    )
    core = robot.core
    now = robot.now()
    core.handle(GoalStart(2.0, 0.0), now, expires=now - 0.2)
    assert core.modes.mode == Mode.IDLE
    assert any("late" in why for why in core.log.rejections)
    robot.run_for(1.0)
    assert robot.sim.ground_truth.x < 0.01
    core.handle(GoalStart(2.0, 0.0), robot.now(), expires=robot.now() + 0.2)
    assert core.modes.mode == Mode.GOAL
