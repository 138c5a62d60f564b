"""The JUDP framing and JAUS message codec: byte layouts written out by hand, round trips and
scaled integers under hypothesis, and hostile datagrams refused (never a crash)."""

from __future__ import annotations

import contextlib
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.judp import (
    AckNak,
    ConfirmControl,
    ConfirmResponse,
    JausId,
    JudpError,
    JudpMessage,
    LocalPose,
    QueryIdentification,
    ReleaseControl,
    ReportIdentification,
    ReportLocalPose,
    ReportVelocityState,
    RequestControl,
    Scaled,
    SetVelocityCommand,
    SetWrenchEffort,
    VelocityState,
    decode_message,
    encode_message,
    pack_judp,
    parse_judp,
)

A, B = JausId(1, 1, 1), JausId(300, 2, 3)


def test_a_request_control_datagram_byte_by_byte() -> None:
    message = JudpMessage(A, B, encode_message(RequestControl(50)), sequence=0x1234)
    data = pack_judp([message])
    assert data == bytes(
        [
            0x02,  # JUDP transport version (AS5669A)
            0x00,  # message type 0 (JAUS), no header compression
            0x11, 0x00,  # data size 17: 14 header bytes + code (2) + authority (1)
            0x01,  # standard priority, no broadcast, no ACK, single packet
            0x01, 0x01, 0x01, 0x00,  # destination: component 1, node 1, subsystem 1
            0x03, 0x02, 0x2C, 0x01,  # source: component 3, node 2, subsystem 300
            0x0D, 0x00,  # RequestControl
            0x32,  # authority 50
            0x34, 0x12,  # sequence number
        ]
    )  # fmt: skip
    (back,) = parse_judp(data)
    assert back == message
    assert decode_message(back.code, back.body) == RequestControl(50)


def test_several_messages_ride_one_datagram() -> None:
    messages = [
        JudpMessage(A, B, encode_message(ReleaseControl()), sequence=1),
        JudpMessage(A, B, encode_message(QueryIdentification(2)), 2, ack_nak=AckNak.REQUIRED),
    ]
    assert parse_judp(pack_judp(messages)) == messages


def test_scaled_integers_follow_the_standard() -> None:
    velocity = Scaled("I", -327.68, 327.67)
    assert velocity.encode(-327.68) == 0
    assert velocity.encode(327.67) == 2**32 - 1
    assert velocity.encode(1e9) == 2**32 - 1  # clamped
    assert velocity.decode(velocity.encode(0.3)) == pytest.approx(0.3, abs=1e-6)
    with pytest.raises(JudpError, match="non-finite"):
        velocity.encode(math.nan)


def test_set_velocity_command_layout() -> None:
    body = encode_message(SetVelocityCommand(0, (0.5, None, None), (None, None, -0.25)))
    code, presence, command_type = struct.unpack_from("<HBB", body)
    assert (code, presence, command_type) == (0x0415, 0b100001, 0)
    vx, yaw_rate = struct.unpack_from("<IH", body, 4)
    assert Scaled("I", -327.68, 327.67).decode(vx) == pytest.approx(0.5, abs=1e-6)
    assert Scaled("H", -32.768, 32.767).decode(yaw_rate) == pytest.approx(-0.25, abs=1e-3)
    assert len(body) == 10


_real = st.floats(-50.0, 50.0, allow_nan=False)
_opt = st.one_of(st.none(), _real)


@settings(max_examples=200, deadline=None)
@given(
    pose=st.builds(
        LocalPose,
        x=_opt,
        y=_opt,
        z=_opt,
        roll=st.one_of(st.none(), st.floats(-3.1, 3.1)),
        yaw=st.one_of(st.none(), st.floats(-3.1, 3.1)),
        timestamp=st.one_of(st.none(), st.integers(0, 2**32 - 1)),
    ),
    state=st.builds(VelocityState, vx=_opt, yaw_rate=st.one_of(st.none(), st.floats(-30, 30))),
    effort=st.tuples(_opt, _opt, _opt),
)
def test_round_trips_keep_values_to_a_scaling_step(
    pose: LocalPose, state: VelocityState, effort: tuple[float | None, ...]
) -> None:
    back = decode_message(0x4403, encode_message(ReportLocalPose(pose))[2:])
    assert isinstance(back, ReportLocalPose)
    for name in ("x", "y", "z", "roll", "yaw"):
        want, got = getattr(pose, name), getattr(back.pose, name)
        assert (want is None) == (got is None)
        if want is not None:
            assert got == pytest.approx(want, abs=1e-4)
    assert back.pose.timestamp == pose.timestamp
    velocity = decode_message(0x4404, encode_message(ReportVelocityState(state))[2:])
    assert isinstance(velocity, ReportVelocityState)
    if state.vx is not None:
        assert velocity.state.vx == pytest.approx(state.vx, abs=1e-6)
    if state.yaw_rate is not None:
        assert velocity.state.yaw_rate == pytest.approx(state.yaw_rate, abs=1e-3)
    wrench = decode_message(0x0405, encode_message(SetWrenchEffort(effort[:3]))[2:])  # type: ignore[arg-type]
    assert isinstance(wrench, SetWrenchEffort)
    for want, got in zip(effort, wrench.propulsive_linear, strict=True):
        assert (want is None) == (got is None)
        if want is not None:
            assert got == pytest.approx(want, abs=0.01)


def test_identification_and_control_answers_round_trip() -> None:
    for message in (
        ReportIdentification(2, 10001, "pioneer3dx"),
        ConfirmControl(ConfirmResponse.INSUFFICIENT_AUTHORITY),
    ):
        payload = encode_message(message)
        assert decode_message(int.from_bytes(payload[:2], "little"), payload[2:]) == message


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"", "empty"),
        (b"\x01" + bytes(20), "transport version"),
        (b"\x02\x00\x11\x00", "truncated header"),
        (b"\x02\x01" + bytes(15), "header compression"),
        (b"\x02\x04\x10\x00" + bytes(12), "not a JAUS message"),
        (b"\x02\x00\x40\x00" + bytes(14), "runs past"),
        (b"\x02\x00\x0f\x00" + bytes(14), "shorter than"),
        (b"\x02\x00\x10\x00\x41" + bytes(12), "multi-packet"),
        (b"\x02" + bytes(5000), "exceeds"),
    ],
)
def test_malformed_datagrams_are_refused(data: bytes, match: str) -> None:
    with pytest.raises(JudpError, match=match):
        parse_judp(data)


@pytest.mark.parametrize(
    ("code", "body", "match"),
    [
        (0x000D, b"", "ends inside"),
        (0x000D, b"\x01\x02", "after the last field"),
        (0x000F, b"\x09", "not defined"),
        (0x0415, b"\xff\x00", "presence vector"),
        (0x0415, b"\x01\x00\x00", "ends inside"),
        (0x9999, b"", "not supported"),
    ],
)
def test_malformed_bodies_are_refused(code: int, body: bytes, match: str) -> None:
    with pytest.raises(JudpError, match=match):
        decode_message(code, body)


@settings(max_examples=500, deadline=None)
@given(st.binary(max_size=300))
def test_random_bytes_parse_or_are_refused(data: bytes) -> None:
    try:
        messages = parse_judp(data)
    except JudpError:
        return
    for message in messages:
        with contextlib.suppress(JudpError):
            decode_message(message.code, message.body)


def test_the_package_face_is_locked() -> None:
    """Siblings import from ``freelook.jaus``; a change to its public names is deliberate."""
    import freelook.jaus

    assert sorted(freelook.jaus.__all__) == sorted(
        [
            "JAUS_PORT",
            "MAX_CLIENTS",
            "MAX_PENDING",
            "MAX_REPLIES",
            "Address",
            "GatewayOptions",
            "GatewayOutput",
            "JausBridge",
            "JausGateway",
            "JausId",
            "run_gateway",
        ]
    )
    assert all(hasattr(freelook.jaus, name) for name in freelook.jaus.__all__)
