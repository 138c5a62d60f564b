"""The link session both ends use: no sockets, no sleeping, a clock given by the test."""

from __future__ import annotations

import itertools
import random

import pytest

from freelook.link import (
    Accepted,
    ControlRequest,
    FreeLookCommand,
    Heartbeat,
    LinkSession,
    Message,
    NativeCodec,
    PacketRecord,
    Refused,
    SetTransmission,
    SetTransmissionSpacing,
    ThesisCodec,
    VelocityCommand,
    VideoFrame,
)

KEY = bytes(range(32))


def pair(
    *, framing: str = "datagram", periodic: list[Message] | None = None
) -> tuple[LinkSession, LinkSession, list[PacketRecord]]:
    """(operator, robot, what the robot recorded)."""
    records: list[PacketRecord] = []
    operator = LinkSession(
        NativeCodec(KEY, sender=1),
        framing=framing,  # type: ignore[arg-type]
        spacing=0.047,
        periodic=lambda now: list(periodic or [Heartbeat()]),
    )
    robot = LinkSession(
        NativeCodec(KEY, sender=100),
        framing=framing,  # type: ignore[arg-type]
        spacing=0.031,
        obey_transmission_control=True,
        on_packet=records.append,
    )
    return operator, robot, records


def test_a_command_sent_is_received_once_and_counted() -> None:
    operator, robot, records = pair()
    (packet,) = operator.send(VelocityCommand(0.2, 0.1), now=1.0)
    events = robot.receive(packet, now=1.004)
    assert len(events) == 1
    event = events[0]
    assert isinstance(event, Accepted)
    assert event.message == VelocityCommand(pytest.approx(0.2), pytest.approx(0.1))
    assert robot.stats.received == 1
    assert records[0].accepted
    assert records[0].kind == "VelocityCommand"
    assert records[0].send_time == pytest.approx(1.0)
    assert records[0].receive_time == 1.004
    # the same bytes again are a replay: refused, counted and recorded, never accepted
    (again,) = robot.receive(packet, now=1.01)
    assert isinstance(again, Refused)
    assert again.reason == "replay"
    assert robot.stats.auth_failures == 1
    assert not records[1].accepted
    assert records[1].kind == "replay"


@pytest.mark.parametrize(
    ("damage", "reason"),
    [
        (lambda p: p[:-1] + bytes([p[-1] ^ 1]), "auth"),
        (lambda p: p[:10], "malformed"),
        (lambda p: b"\x00" * len(p), "malformed"),
    ],
)
def test_damaged_or_forged_packets_are_refused_with_their_reason(
    damage: object, reason: str
) -> None:
    operator, robot, records = pair()
    (packet,) = operator.send(Heartbeat(), now=0.0)
    (event,) = robot.receive(damage(packet), now=0.01)  # type: ignore[operator]
    assert isinstance(event, Refused)
    assert event.reason == reason
    assert records == [PacketRecord(records[0].data, None, False, reason, 0.01, 0.01)]


def test_wrong_key_is_refused_as_auth() -> None:
    stranger = LinkSession(NativeCodec(bytes(32), sender=7), spacing=0.05)
    _, robot, _ = pair()
    (packet,) = stranger.send(VelocityCommand(1.0, 0.0), now=0.0)
    (event,) = robot.receive(packet, now=0.0)
    assert isinstance(event, Refused)
    assert event.reason == "auth"


def test_poll_sends_the_periodic_messages_at_the_spacing_without_bursts() -> None:
    operator, _, _ = pair(periodic=[FreeLookCommand(0.3, 0.0, 0.0)])
    sent_at = [t / 1000 for t in range(1000) if operator.poll(t / 1000)]
    gaps = [b - a for a, b in itertools.pairwise(sent_at)]
    assert len(sent_at) == 22  # 0, 47, 94, … ms
    assert max(gaps) == pytest.approx(0.047, abs=0.0011)
    # a driver that stalled for 0.5 s sends one packet, then resumes the spacing
    assert operator.poll(1.5)
    assert not operator.poll(1.51)
    assert operator.next_due(1.51) == pytest.approx(1.547)


def test_the_robot_obeys_transmission_control_within_bounds_and_the_operator_does_not() -> None:
    operator, robot, _ = pair()
    for message, now in ((SetTransmission(False), 0.0), (SetTransmissionSpacing(1e-6), 0.1)):
        for packet in operator.send(message, now):
            robot.receive(packet, now)
    assert not robot.transmitting
    assert robot.spacing == 0.005  # a peer cannot make this end flood the link
    assert robot.poll(0.2) == []
    for packet in robot.send(SetTransmission(False), 0.2):
        operator.receive(packet, 0.2)
    assert operator.transmitting  # only an end told to obey does


def test_a_byte_stream_chopped_anywhere_with_noise_loses_no_valid_packet() -> None:
    operator, robot, _ = pair(framing="stream")
    rng = random.Random(5)
    stream = bytearray()
    commands = [VelocityCommand(0.01 * k, 0.0) for k in range(40)]
    for k, command in enumerate(commands):
        stream += operator.send(command, now=k * 0.05)[0]
        if k % 7 == 3:
            stream += bytes(rng.randrange(256) for _ in range(rng.randrange(1, 30)))
    got: list[Message] = []
    refused = 0
    position = 0
    while position < len(stream):
        size = rng.randrange(1, 64)
        for event in robot.receive(bytes(stream[position : position + size]), now=10.0):
            if isinstance(event, Accepted):
                got.append(event.message)
            else:
                refused += 1
        position += size
    assert [round(m.v, 3) for m in got] == [round(c.v, 3) for c in commands]  # type: ignore[attr-defined]


def test_the_thesis_profile_sends_what_it_can_carry_and_nothing_else() -> None:
    session = LinkSession(ThesisCodec(), spacing=0.047)
    assert len(session.send(VelocityCommand(0.2, 0.0), 0.0)) == 1
    assert session.send(FreeLookCommand(0.2, 0.0, 0.0), 0.0) == []
    assert session.send(ControlRequest(1, 10), 0.0) == []
    assert session.send(VideoFrame(1, 0.0, 2, 2, b"\xff\xd8"), 0.0) == []


def test_wire_stamps_carry_the_offset_and_latency_comes_back_in_the_receivers_clock() -> None:
    operator = LinkSession(NativeCodec(KEY, sender=1), spacing=0.05, wire_offset=1.7e9)
    robot = LinkSession(NativeCodec(KEY, sender=100), spacing=0.05, wire_offset=1.7e9 + 3.0)
    (packet,) = operator.send(Heartbeat(), now=10.0)
    robot.receive(packet, now=7.02)  # the robot's clock started 3 s later; 20 ms on the way
    assert robot.stats.report(7.02).latency_s == pytest.approx(0.02, abs=1e-5)
