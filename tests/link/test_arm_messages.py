"""Arm commands and arm telemetry on the native profile: round trips, and every way a hostile
or broken peer can get them wrong refused (and counted) at decode, and at encode."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import (
    ArmTelemetry,
    ArmVelocityCommand,
    GripperCommand,
    LinkSession,
    NativeCodec,
    Refused,
    Telemetry,
    ValueRangeError,
    derive_key,
)

KEY = derive_key("arm test passphrase")
joint_rate = st.floats(-20, 20, width=32)
MARK = 0.6171875  # a value no other field holds, to find a field's bytes in a packet


def _telemetry(arm: ArmTelemetry | None) -> Telemetry:
    return Telemetry(12.5, (1.0, 2.0, 0.5), (1.0, 2.0, 0.5), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, arm=arm)


def _retag(body: bytes) -> bytes:
    return body + hashlib.blake2s(body, key=KEY, digest_size=16).digest()


def _refusal(packet: bytes) -> tuple[Refused, LinkSession]:
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(packet, 1.0)
    assert isinstance(event, Refused)
    return event, session


@settings(max_examples=200)
@given(
    st.lists(joint_rate, max_size=16).map(tuple),
    st.floats(0, 1, width=32),
)
def test_arm_commands_round_trip(velocities: tuple[float, ...], opening: float) -> None:
    sender, receiver = NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)
    for message in (ArmVelocityCommand(velocities), GripperCommand(opening)):
        assert receiver.decode(sender.encode(message, 1.0)).message == message


@settings(max_examples=100)
@given(
    st.integers(0, 16).flatmap(
        lambda n: st.builds(
            ArmTelemetry,
            st.lists(st.floats(-1000, 1000, width=32), min_size=n, max_size=n).map(tuple),
            st.lists(joint_rate, min_size=n, max_size=n).map(tuple),
            st.floats(0, 1, width=32),
            st.booleans(),
            st.integers(0, 2),
            st.lists(st.integers(0, 511), max_size=200).map(tuple),
            st.lists(st.integers(0, 511), max_size=200).map(tuple),
            st.lists(st.integers(0, 2), max_size=8).map(tuple),
        )
    )
)
def test_telemetry_carries_the_arm(arm: ArmTelemetry) -> None:
    sender, receiver = NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)
    telemetry = _telemetry(arm)
    assert receiver.decode(sender.encode(telemetry, 1.0)).message == telemetry


def test_telemetry_without_an_arm_is_the_same_bytes_as_before() -> None:
    sender = NativeCodec(KEY, sender=1)
    plain = sender.encode(_telemetry(None), 1.0)
    with_arm = NativeCodec(KEY, sender=1).encode(_telemetry(ArmTelemetry((0.5,), (0.0,))), 1.0)
    assert len(with_arm) - len(plain) == 1 + 8 + 6 + 4  # count, joint, gripper + phase, pairs
    gone_through = NativeCodec(KEY, sender=1).encode(
        _telemetry(ArmTelemetry((0.5,), (0.0,), phase=2, phases=(0, 1, 2))), 1.0
    )
    assert len(gone_through) - len(with_arm) == 1 + 3  # the phases gone through, when said


BAD = [math.nan, math.inf, -math.inf, 1e30, -1e30, 21.0]


@pytest.mark.parametrize("bad", BAD)
@pytest.mark.parametrize(
    ("message", "field"),
    [
        (ArmVelocityCommand((0.1, MARK, 0.0)), "velocities"),
        (GripperCommand(MARK), "opening"),
        (_telemetry(ArmTelemetry((0.0, MARK), (0.0, 0.0))), "positions"),
        (_telemetry(ArmTelemetry((0.0, 0.0), (MARK, 0.0))), "velocities"),
        (_telemetry(ArmTelemetry((0.0,), (0.0,), MARK)), "gripper_opening"),
    ],
)
def test_a_non_finite_or_absurd_arm_number_is_refused_and_counted(
    message: ArmVelocityCommand | GripperCommand | Telemetry, field: str, bad: float
) -> None:
    if field == "positions" and abs(bad) == 21.0:
        bad = 1001.0  # joint positions may lie beyond ±21 rad; not beyond ±1000
    packet = NativeCodec(KEY, sender=1).encode(
        dataclasses.replace(message, **_poison(message, field, MARK)), 1.0
    )
    marker = struct.pack("<f", MARK)
    assert packet.count(marker) == 1
    forged = _retag(packet[:-16].replace(marker, struct.pack("<f", bad)))
    event, session = _refusal(forged)
    assert event.reason == "value"
    assert field in str(event.error)
    assert session.stats.refused == {"value": 1}
    with pytest.raises(ValueRangeError, match=field):
        NativeCodec(KEY, sender=1).encode(
            dataclasses.replace(message, **_poison(message, field, bad)), 1.0
        )


def _poison(message: object, field: str, value: float) -> dict[str, object]:
    """``message``'s fields with ``MARK`` in ``field`` replaced by ``value``."""
    if isinstance(message, Telemetry):
        assert message.arm is not None
        old = getattr(message.arm, field)
        new = tuple(value if x == MARK else x for x in old) if isinstance(old, tuple) else value
        return {"arm": dataclasses.replace(message.arm, **{field: new})}
    old = getattr(message, field)
    new = tuple(value if x == MARK else x for x in old) if isinstance(old, tuple) else value
    return {field: new}


def test_too_many_joints_is_refused_before_they_are_read() -> None:
    codec = NativeCodec(KEY, sender=1)
    with pytest.raises(ValueRangeError, match="17 joints, at most 16"):
        codec.encode(ArmVelocityCommand((0.0,) * 17), 1.0)
    packet = codec.encode(ArmVelocityCommand((0.0,) * 16), 1.0)
    body = bytearray(packet[:-16])
    body[22] = 255  # claims 255 joints in a payload of 16
    event, session = _refusal(_retag(bytes(body)))
    assert event.reason == "malformed"
    assert "255 joints" in str(event.error)
    # 200 joints, honestly framed: the count is refused, nothing of the list is looked at
    payload = bytes([200]) + struct.pack("<200f", *([0.1] * 200))
    head = bytearray(packet[:22])
    head[20:22] = struct.pack("<H", len(payload))
    event, _ = _refusal(_retag(bytes(head) + payload))
    assert event.reason == "malformed"
    assert session.stats.refused == {"malformed": 1}


def test_a_telemetry_arm_block_that_lies_about_its_counts_is_refused() -> None:
    codec = NativeCodec(KEY, sender=1)
    packet = codec.encode(
        _telemetry(ArmTelemetry((0.5, 0.25), (0.0, 0.0), 0.1, True, 2, (3,), (3,))), 1.0
    )
    body = packet[:-16]
    for cut, why in ((1, "beyond its payload"), (4, "beyond its payload")):
        short = bytearray(body[: len(body) - cut])
        short[20:22] = struct.pack("<H", len(short) - 22)
        event, _ = _refusal(_retag(bytes(short)))
        assert event.reason == "malformed", why
    for tail, why in (
        (b"\x00", "0 arm phases"),
        (bytes([9, *[1] * 9]), "9 arm phases"),
        (bytes([3, 0, 1]), "3 arm phases"),  # beyond the payload
        (bytes([1, 2, 0]), "1 bytes after the telemetry's arm state"),
    ):
        longer = bytearray(body + tail)
        longer[20:22] = struct.pack("<H", len(longer) - 22)
        event, _ = _refusal(_retag(bytes(longer)))
        assert event.reason == "malformed", tail
        assert why in str(event.error)
    unknown = bytearray(body + bytes([2, 1, 3]))  # a phase past stop
    unknown[20:22] = struct.pack("<H", len(unknown) - 22)
    event, _ = _refusal(_retag(bytes(unknown)))
    assert event.reason == "value"
    assert "phases" in str(event.error)
    with pytest.raises(ValueRangeError, match="phases of 9 phases, at most 8"):
        codec.encode(_telemetry(ArmTelemetry((0.0,), (0.0,), phases=(0, 1) * 4 + (2,))), 1.0)
    with pytest.raises(ValueRangeError, match="2 positions and 1 velocities"):
        codec.encode(_telemetry(ArmTelemetry((0.0, 0.0), (0.0,))), 1.0)
    with pytest.raises(ValueRangeError, match="phase"):
        codec.encode(_telemetry(ArmTelemetry((0.0,), (0.0,), phase=3)), 1.0)


def test_the_gripper_opening_is_within_a_metre() -> None:
    with pytest.raises(ValueRangeError, match=r"GripperCommand.opening = -0.1 outside 0…1"):
        NativeCodec(KEY, sender=1).encode(GripperCommand(-0.1), 1.0)
