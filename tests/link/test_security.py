"""Attacks on the native profile, each of which must fail: replays into a restarted robot,
late packets, stolen station ids, NaN and absurd numbers, and wrong-key floods. Sans-I/O:
two link sessions and a clock given by the test."""

from __future__ import annotations

import dataclasses
import hashlib
import math
import os
import random
import struct
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import freelook.link._native as native_module
from freelook.errors import ConfigError
from freelook.link import (
    Accepted,
    ControlRequest,
    FreeLookCommand,
    GoalStart,
    Heartbeat,
    KeyRing,
    LinearDriveStart,
    LinkSession,
    LinkStatsReport,
    Message,
    Mode,
    NativeCodec,
    PanTiltCommand,
    Permissions,
    PositionReport,
    Refused,
    Reply,
    SessionOpened,
    SetTransmission,
    SetTransmissionSpacing,
    TankCommand,
    Telemetry,
    ThesisCodec,
    TrajectoryStart,
    ValueRangeError,
    VelocityCommand,
    VideoFrame,
    WheelSpeedCommand,
    derive_key,
    key_bits,
    key_from_env,
    rejection_reason,
    strong_key,
)
from keys_for_tests import KEY_A, KEY_B, write_keys_file

KEY = bytes(range(32))
ROBOT = 100


def robot(nonce: bytes = b"start one", keys: KeyRing | None = None) -> LinkSession:
    return LinkSession(
        NativeCodec(KEY, sender=ROBOT),
        spacing=0.05,
        periodic=lambda now: [Heartbeat()],
        role="robot",
        keys=keys,
        nonce=nonce,
    )


def operator(station: int = 1, key: bytes = KEY, nonce: bytes = b"operator") -> LinkSession:
    return LinkSession(NativeCodec(key, sender=station), spacing=0.05, role="operator", nonce=nonce)


def deliver(
    to: LinkSession, packets: list[bytes], now: float, source: object = None
) -> list[object]:
    events: list[object] = []
    for packet in packets:
        events.extend(to.receive(packet, now, source))
    return events


def handshake(op: LinkSession, rb: LinkSession, now: float = 0.0) -> list[bytes]:
    """Run the handshake; every packet the operator sent (what an eavesdropper captures)."""
    sent = op.poll(now)  # SessionOpen
    (reply,) = deliver(rb, sent, now + 0.001)
    assert isinstance(reply, Reply)
    opened, confirm = deliver(op, list(reply.packets), now + 0.002)
    assert isinstance(opened, SessionOpened)
    assert isinstance(confirm, Reply)
    sent += list(confirm.packets)
    events = deliver(rb, list(confirm.packets), now + 0.003)
    assert isinstance(events[0], SessionOpened)  # then whatever was held until it opened
    return sent


def accepted(events: list[object]) -> list[Message]:
    return [e.message for e in events if isinstance(e, Accepted)]


# -- sessions --------------------------------------------------------------------------------


def test_the_handshake_opens_a_session_both_ways_and_carries_permissions() -> None:
    ring = KeyRing.from_mapping(
        {"stations": {"1": {"key": KEY.hex(), "authority": 7, "modes": ["free_look"]}}}
    )
    rb, op = robot(keys=ring), operator()
    assert op.send(VelocityCommand(0.2, 0.0), 0.0) == []  # held until the session opens
    handshake(op, rb)
    assert set(rb.sessions) == {1}
    (event,) = deliver(rb, op.send(FreeLookCommand(0.3, 0.0, 0.1), 0.01), 0.011)
    assert isinstance(event, Accepted)
    assert event.station == 1
    assert event.permissions == Permissions(7, frozenset({Mode.FREE_LOOK}), False)
    assert not event.permissions.allows_mode(Mode.TANK)
    # the robot's telemetry goes to the station that authenticated, and verifies there
    outgoing = rb.poll_to(0.02)
    assert [o.station for o in outgoing] == [1]
    assert accepted(deliver(op, [o.data for o in outgoing], 0.021)) == [Heartbeat()]


def test_commands_given_before_the_session_opens_are_sent_when_it_does() -> None:
    rb, op = robot(), operator()
    op.send(ControlRequest(1, 10), 0.0)
    open_packets = op.poll(0.0)
    (reply,) = deliver(rb, open_packets, 0.001)
    _, flush = deliver(op, list(reply.packets), 0.002)  # type: ignore[union-attr]
    assert isinstance(flush, Reply)
    events = deliver(rb, list(flush.packets), 0.003)
    assert accepted(events) == [ControlRequest(1, 10)]


def test_an_operator_reopens_when_the_robot_falls_silent() -> None:
    rb, op = robot(), operator()
    handshake(op, rb)
    assert op.poll(0.5) == []  # 0.5 s of silence: nothing to reopen yet
    later = op.poll(2.0)  # 2 s without a packet from the robot: a new SessionOpen goes out
    restarted = robot(nonce=b"start two")
    events = deliver(restarted, later, 2.001)
    assert any(isinstance(e, Reply) for e in events)


# -- attack 1: replay after a restart, late packets ------------------------------------------


def test_packets_replayed_into_a_restarted_robot_move_nothing() -> None:
    first = robot(nonce=b"start one")
    op = operator()
    captured = handshake(op, first)
    drive = [op.send(VelocityCommand(0.5, 0.0), 0.01 * k)[0] for k in range(1, 20)]
    assert len(accepted(deliver(first, drive, 0.2))) == 19
    captured += drive
    # the same robot refuses them as replays
    assert accepted(deliver(first, drive, 0.3)) == []
    # the robot restarts (a fresh start nonce); an attacker replays the whole capture
    restarted = robot(nonce=b"start two")
    events = deliver(restarted, captured, 100.0, source=("10.0.0.66", 4000))
    assert accepted(events) == []
    assert not any(isinstance(e, SessionOpened) for e in events)
    refused = [e for e in events if isinstance(e, Refused)]
    assert refused
    assert {e.reason for e in refused} <= {"session", "auth", "rate"}
    assert restarted.sessions == {}


def test_replayed_session_opens_never_displace_a_stations_handshake() -> None:
    # an attacker captured the station's SessionOpen of an earlier run and replays it at
    # 1,000/s into a restarted robot while the station opens its new session
    old_operator = operator(nonce=b"an earlier run")
    captured = old_operator.poll(0.0)
    rb, op = robot(nonce=b"start two"), operator(nonce=b"this run")
    attacker = ("10.0.0.66", 4000)
    deliver(rb, captured, 10.0, source=attacker)  # the first copy reaches a fresh robot
    now = 10.0
    opened = False
    sent = op.poll(now)  # the station's open, stamped later than the capture
    while now < 12.0 and not opened:
        for _ in range(10):  # 10 replays between each step of the station's handshake
            now += 0.001
            refused = deliver(rb, captured, now, source=attacker)
            assert not any(isinstance(e, Reply) for e in refused)  # no challenge for a replay
        for event in deliver(rb, sent, now, source=("127.0.0.1", 5000)):
            if isinstance(event, Reply):  # the robot's challenge: the station confirms
                answers = deliver(op, list(event.packets), now)
                sent = [p for a in answers if isinstance(a, Reply) for p in a.packets]
            opened = opened or isinstance(event, SessionOpened)
        if not sent:
            sent = op.poll(now)
    assert opened
    assert set(rb.sessions) == {1}


def test_a_withheld_packet_delivered_late_is_refused() -> None:
    rb, op = robot(), operator()
    handshake(op, rb)
    withheld = op.send(VelocityCommand(1.0, 0.0), 0.01)
    for k in range(2, 40):  # the session goes on; the robot sees fresh traffic
        deliver(rb, op.send(Heartbeat(), 0.1 * k), 0.1 * k + 0.002)
    (event,) = deliver(rb, withheld, 3.01)  # 3 s late
    assert isinstance(event, Refused)
    assert event.reason == "replay"
    assert "stale" in str(event.error)


def test_a_late_packet_from_a_station_never_seen_is_refused() -> None:
    rb = robot()
    stranger = NativeCodec(KEY, sender=42)  # holds the key, never opened a session
    packet = stranger.encode(VelocityCommand(1.0, 0.0), 0.0)
    (event,) = rb.receive(packet, 3.0)
    assert isinstance(event, Refused)
    assert event.reason == "session"


# -- attack 2: station ids bound to keys -----------------------------------------------------

KEY_1, KEY_2 = hashlib.sha256(b"one").digest(), hashlib.sha256(b"two").digest()


def ring() -> KeyRing:
    return KeyRing.from_mapping(
        {
            "stations": {
                "1": {"key": KEY_1.hex(), "authority": 10},
                "2": {"key": KEY_2.hex(), "authority": 20, "observer": True},
            }
        }
    )


def test_a_key_holder_cannot_claim_another_station() -> None:
    rb = robot(keys=ring())
    impostor = operator(station=2, key=KEY_1)  # station 1's key, claiming station 2
    events = deliver(rb, impostor.poll(0.0), 0.001)
    assert [e.reason for e in events if isinstance(e, Refused)] == ["auth"]
    assert not any(isinstance(e, Reply) for e in events)
    # station 1 opens its own session, then forges a packet claiming station 2 with it
    honest = operator(station=1, key=KEY_1)
    handshake(honest, rb)
    packet = bytearray(honest.send(VelocityCommand(1.0, 0.0), 0.01)[0])
    packet[6:8] = (2).to_bytes(2, "little")
    (event,) = rb.receive(bytes(packet), 0.02)
    assert isinstance(event, Refused)
    assert event.reason == "session"  # station 2 has no session: refused before any tag
    # and the observer's permissions come from its own entry
    observer = operator(station=2, key=KEY_2, nonce=b"observer")
    handshake(observer, rb, now=0.1)
    assert rb.sessions[2] == Permissions(20, frozenset(Mode), True)
    assert rb.sessions[1].authority == 10


# -- attack 3: NaN, ±inf and absurd numbers --------------------------------------------------

MARK = 1.2345678  # a value whose f32 bytes occur nowhere else in these payloads


def _telemetry(**fields: object) -> Telemetry:
    base = Telemetry(
        stamp=12.5,
        odom=(1.0, 2.0, 0.5),
        pose=(1.25, 2.5, -0.5),
        v=0.25,
        omega=0.5,
        cmd_v=0.375,
        cmd_omega=0.25,
        pan=1.5,
        tilt=-0.25,
        laser_angle_min=-1.5,
        laser_angle_increment=0.015625,
        laser_range_max=30.0,
        laser=(0.5,) * 10,
        sonar=(2.0,) * 4,
        safety_scale=0.5,
        link=LinkStatsReport(10, 2, 1, 3, 4, 5, 31.5, 21.25, 16.5, 0.125),
    )
    return dataclasses.replace(base, **fields)  # type: ignore[arg-type]


def _link(**fields: float) -> Telemetry:
    return _telemetry(
        link=dataclasses.replace(LinkStatsReport(1, 0, 0, 0, 0, 0, 2, 3, 4, 5), **fields)
    )


# every float a native packet carries: (a valid message with MARK in that field, its width)
FLOAT_FIELDS: list[tuple[str, Message, str]] = [
    ("VelocityCommand.v", VelocityCommand(MARK, 0.5), "f"),
    ("VelocityCommand.omega", VelocityCommand(0.5, MARK), "f"),
    ("WheelSpeedCommand.left", WheelSpeedCommand(MARK, 0.5), "f"),
    ("WheelSpeedCommand.right", WheelSpeedCommand(0.5, MARK), "f"),
    *(
        (
            f"TankCommand.{name}",
            dataclasses.replace(TankCommand(0.1, 0.2, 0.3, 0.4), **{name: MARK}),
            "f",
        )
        for name in ("v", "omega", "pan_rate", "tilt_rate")
    ),
    *(
        (
            f"FreeLookCommand.{name}",
            dataclasses.replace(FreeLookCommand(0.1, 0.2, 0.3, 0.4), **{name: MARK}),
            "f",
        )
        for name in ("v1", "v2", "omega", "tilt_rate")
    ),
    ("PanTiltCommand.pan_rate", PanTiltCommand(MARK, 0.5), "f"),
    ("PanTiltCommand.tilt_rate", PanTiltCommand(0.5, MARK), "f"),
    ("LinearDriveStart.x_start", LinearDriveStart(MARK, 2.0, 0.4), "f"),
    ("LinearDriveStart.x_end", LinearDriveStart(0.0, MARK, 0.4), "f"),
    ("LinearDriveStart.max_speed", LinearDriveStart(0.0, 2.0, MARK), "f"),
    ("GoalStart.x", GoalStart(MARK, 2.0), "f"),
    ("GoalStart.y", GoalStart(2.0, MARK), "f"),
    ("TrajectoryStart.t", TrajectoryStart((0.0, MARK), (0.0, 1.0), (0.0, 2.0)), "f"),
    ("TrajectoryStart.x", TrajectoryStart((0.0, 1.0), (0.0, MARK), (0.0, 2.0)), "f"),
    ("TrajectoryStart.y", TrajectoryStart((0.0, 1.0), (0.0, 3.0), (MARK, 2.0)), "f"),
    ("SetTransmissionSpacing.spacing", SetTransmissionSpacing(MARK), "f"),
    ("Telemetry.stamp", _telemetry(stamp=MARK), "d"),
    ("Telemetry.odom", _telemetry(odom=(1.0, MARK, 0.5)), "f"),
    ("Telemetry.pose", _telemetry(pose=(MARK, 2.5, -0.5)), "f"),
    *(
        (f"Telemetry.{name}", _telemetry(**{name: MARK}), "f")
        for name in (
            "v",
            "omega",
            "cmd_v",
            "cmd_omega",
            "pan",
            "tilt",
            "laser_angle_min",
            "laser_angle_increment",
            "laser_range_max",
            "safety_scale",
        )
    ),
    *(
        (f"Telemetry.link.{name}", _link(**{name: MARK}), "f")
        for name in ("rx_rate_hz", "tx_rate_hz", "drop_percent", "latency_s")
    ),
]
BAD = [math.nan, math.inf, -math.inf, 1e30, -1e30]


def _retag(packet: bytes, key: bytes) -> bytes:
    body = packet[:-16]
    return body + hashlib.blake2s(body, key=key, digest_size=16).digest()


def _poisoned(message: Message, width: str, bad: float) -> bytes:
    """A correctly tagged packet whose field holds ``bad`` (as an attacker with the key, or a
    buggy peer, would send it)."""
    packet = NativeCodec(KEY, sender=1).encode(message, 1.0)
    marker = struct.pack(f"<{width}", MARK)
    assert packet.count(marker) == 1
    return _retag(packet.replace(marker, struct.pack(f"<{width}", bad)), KEY)


@settings(max_examples=200, deadline=None)
@given(st.sampled_from(FLOAT_FIELDS), st.sampled_from(BAD))
def test_a_non_finite_or_absurd_number_in_any_field_is_refused_at_decode(
    case: tuple[str, Message, str], bad: float
) -> None:
    name, message, width = case
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(_poisoned(message, width, bad), 1.0)
    assert isinstance(event, Refused)
    assert event.reason == "value"
    assert isinstance(event.error, ValueRangeError)
    assert name.rsplit(".", 1)[-1] in str(event.error)
    assert session.stats.refused == {"value": 1}
    # and the encoder refuses to send it at all (no crash, no wrap-around)
    field = name.split(".")[1]
    if name.startswith("Telemetry.link."):
        bad_message: object = _link(**{name.rsplit(".", 1)[-1]: bad})
    elif isinstance(getattr(message, field), tuple):
        values = list(getattr(message, field))
        values[values.index(MARK)] = bad
        bad_message = dataclasses.replace(message, **{field: tuple(values)})  # type: ignore[type-var]
    else:
        bad_message = dataclasses.replace(message, **{field: bad})  # type: ignore[type-var]
    with pytest.raises(ValueRangeError):
        NativeCodec(KEY, sender=1).encode(bad_message, 1.0)  # type: ignore[arg-type]
    assert session.send(bad_message, 1.0) == []  # type: ignore[arg-type]


def test_every_float_field_of_every_message_is_covered() -> None:
    covered = {name.split(".")[0] for name, _, _ in FLOAT_FIELDS}
    floats = {
        cls.__name__
        for cls in (
            VelocityCommand,
            WheelSpeedCommand,
            TankCommand,
            FreeLookCommand,
            PanTiltCommand,
            LinearDriveStart,
            GoalStart,
            TrajectoryStart,
            SetTransmissionSpacing,
            Telemetry,
        )
    }
    assert covered == floats
    telemetry_floats = {
        f.name
        for f in dataclasses.fields(Telemetry)
        if f.type in ("float", "tuple[float, float, float]")
    }
    assert telemetry_floats <= {
        n.split(".")[1] for n, _, _ in FLOAT_FIELDS if n.startswith("Telemetry.")
    }


def test_out_of_range_integers_and_ranges_are_refused_or_saturated_never_wrapped() -> None:
    codec = NativeCodec(KEY, sender=1)
    with pytest.raises(ValueRangeError, match=r"ControlRequest.station = 70000 outside 0…65535"):
        codec.encode(ControlRequest(70000, 1), 0.0)
    with pytest.raises(ValueRangeError, match="stamp"):
        codec.encode(Heartbeat(), math.nan)
    # a laser beam with no return (inf) saturates, as the u16 wire field must
    telemetry = _telemetry(laser=(math.inf, math.nan, 1.0))
    decoded = NativeCodec(KEY, sender=2).decode(codec.encode(telemetry, 1.0)).message
    assert decoded.laser == (65.535, 0.0, 1.0)  # type: ignore[union-attr]


@pytest.mark.parametrize("bad", BAD)
def test_the_thesis_encoder_refuses_non_finite_values(bad: float) -> None:
    codec = ThesisCodec()
    if math.isfinite(bad):
        # finite values saturate to the integer range (the thesis's rule) and decode in range
        packet = codec.encode(VelocityCommand(bad, 0.0), 1.0)
        with pytest.raises(ValueRangeError, match=r"VelocityCommand\.v"):
            codec.decode(packet)  # ±32.767 m/s is beyond any ground robot
        return
    for message in (
        VelocityCommand(bad, 0.0),
        WheelSpeedCommand(0.0, bad),
        SetTransmissionSpacing(bad),
        PositionReport(0.0, 0.0, bad, 0.0, 0.0, (), ()),
    ):
        with pytest.raises(ValueRangeError, match="not finite"):
            codec.encode(message, 1.0)
    with pytest.raises(ValueRangeError):
        codec.encode(Heartbeat(), bad)


def test_the_thesis_decoder_refuses_headings_and_rates_out_of_range() -> None:
    codec = ThesisCodec()
    packet = bytearray(codec.encode(PositionReport(0.0, 0.0, 0.5, 0.1, 0.1, (), ()), 1.0))
    packet[9:11] = struct.pack("<h", 900)  # heading 900°
    body = bytes(packet[:-2])
    from freelook.link import crc16_ccitt_false

    forged = body + struct.pack("<H", crc16_ccitt_false(body))
    session = LinkSession(codec, spacing=0.05)
    (event,) = session.receive(forged, 1.0)
    assert isinstance(event, Refused)
    assert event.reason == "value"
    assert rejection_reason(event.error) == "value"


# -- attack 4: a wrong-key flood -------------------------------------------------------------


def test_a_wrong_key_flood_is_refused_before_any_cryptography(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rb = robot(keys=ring())
    op = operator(station=1, key=KEY_1)
    handshake(op, rb)
    rng = random.Random(7)
    flood = []
    for k in range(2000):
        forger = NativeCodec(rng.randbytes(32), sender=rng.choice([3, 77, 2, 2, 65535]))
        flood.append(forger.encode(VelocityCommand(1.0, 0.0), k * 1e-3))
    forged = [
        _retag(op.send(Heartbeat(), 1.0 + k * 1e-3)[0], rng.randbytes(32)) for k in range(500)
    ]
    calls = [0]
    real_tag = native_module.tag

    def counting_tag(key: bytes, data: bytes | memoryview) -> bytes:
        calls[0] += 1
        return real_tag(key, data)

    monkeypatch.setattr(native_module, "tag", counting_tag)
    events = deliver(rb, flood, 1.0, source=("10.0.0.66", 4000))
    assert all(isinstance(e, Refused) for e in events)
    assert calls[0] == 0  # unknown stations, or no session: no tag was ever computed
    assert rb.stats.refused["session"] + rb.stats.refused.get("rate", 0) == 2000
    # claiming station 1 (which has a session) costs a tag, until the source's budget is spent
    calls[0] = 0
    events = deliver(rb, forged, 1.5, source=("10.0.0.67", 4000))
    assert calls[0] < 40
    assert rb.stats.refused["rate"] > 450
    # the honest station, from its own source, keeps going
    monkeypatch.undo()
    good = deliver(rb, op.send(VelocityCommand(0.2, 0.0), 1.6), 1.601, source=("10.0.0.1", 1))
    assert accepted(good) == [VelocityCommand(pytest.approx(0.2), 0.0)]


def test_junk_forged_with_the_peers_own_address_never_silences_the_peer() -> None:
    """A source address can be forged: junk "from" the honest station at 200 a second spends
    that address's budget of refused packets, and yet the station's own packets, from the same
    address, are still read (before, they were dropped unexamined with the junk)."""
    rb = robot(keys=ring())
    op = operator(station=1, key=KEY_1)
    station = ("10.0.0.1", 4000)
    for packet in op.poll(0.0):
        for event in rb.receive(packet, 0.001, station):
            if isinstance(event, Reply):
                deliver(op, list(event.packets), 0.002)
    deliver(rb, op.poll(0.003), 0.004, station)  # the confirm, from the station's address
    rng = random.Random(11)
    moved = []
    for k in range(400):  # 2 s: junk every 5 ms, a command every 50 ms
        now = 0.01 + k * 0.005
        junk = _retag(op.send(Heartbeat(), now)[0], rng.randbytes(32))
        deliver(rb, [junk, rng.randbytes(rng.randint(1, 40))], now, station)
        if k % 10 == 0:
            moved += accepted(deliver(rb, op.send(VelocityCommand(0.2, 0.0), now), now, station))
    assert rb.stats.refused["auth"] + rb.stats.refused.get("crc", 0) > 300  # junk refused
    assert len(moved) == 40  # and every one of the station's commands taken
    # a stranger's address is still cut off once it spent its budget
    stranger = ("10.0.0.99", 4000)
    deliver(rb, [rng.randbytes(30) for _ in range(200)], 3.0, stranger)
    assert rb.stats.refused.get("rate", 0) > 100


# -- the keys file ---------------------------------------------------------------------------


def test_a_keys_file_loads_and_its_errors_name_file_field_and_expectation(tmp_path: Path) -> None:
    good = write_keys_file(
        tmp_path / "keys.toml",
        '[stations.1]\nkey = "a passphrase"\nauthority = 30\nmodes = ["tank", "FREE_LOOK"]\n'
        '[stations.9]\nkey = "' + KEY_A + '"\nobserver = true\n',
    )
    keys = KeyRing.load(good, allow_weak=True)
    one = keys.lookup(1)
    assert one is not None
    assert one.permissions == Permissions(30, frozenset({Mode.TANK, Mode.FREE_LOOK}), False)
    nine = keys.lookup(9)
    assert nine is not None
    assert nine.key == bytes.fromhex(KEY_A)
    assert nine.permissions.observer
    assert keys.lookup(2) is None
    assert 1 in keys
    bad = write_keys_file(
        tmp_path / "bad.toml",
        '[stations.1]\nkey = "k"\nauthority = 300\nmodes = ["warp"]\ncolour = 1\n',
    )
    with pytest.raises(ConfigError) as info:
        KeyRing.load(bad)
    problems = "\n".join(info.value.problems)
    assert f"{bad}: stations.1.authority" in problems
    assert "less than or equal to 255" in problems
    assert "unknown mode 'warp'" in problems
    assert "stations.1.colour: unknown key" in problems
    zero = write_keys_file(tmp_path / "zero.toml", '[stations.0]\nkey = "k"\n')
    with pytest.raises(ConfigError, match="invalid keys file"):
        KeyRing.load(zero)
    with pytest.raises(ConfigError, match="cannot read"):
        KeyRing.load(tmp_path / "missing.toml")
    single = KeyRing.single(KEY)
    anyone = single.lookup(4242)
    assert anyone is not None
    assert anyone.key == KEY
    assert anyone.permissions == Permissions()


# -- keys that resist guessing ---------------------------------------------------------------


@pytest.mark.parametrize("weak", ["a", "robot", "Tr0ub4dor&3", "driver passphrase", "1234" * 8])
def test_a_weak_key_is_refused_unless_the_user_accepts_it(weak: str) -> None:
    with pytest.raises(ConfigError, match=r"bits of entropy, 128 needed.*freelook keys new"):
        strong_key(weak)
    with pytest.raises(ConfigError, match=r"FREELOOK_LINK_KEY has at most \d+ bits"):
        key_from_env({"FREELOOK_LINK_KEY": weak})
    assert strong_key(weak, allow_weak=True) == derive_key(weak)


def test_a_random_key_or_a_long_mixed_passphrase_is_accepted() -> None:
    assert strong_key(KEY_A) == bytes.fromhex(KEY_A)
    assert len(strong_key("correct horse battery staple, 1984 edition")) == 32


def test_a_keys_file_with_a_weak_key_names_the_station(tmp_path: Path) -> None:
    path = write_keys_file(
        tmp_path / "keys.toml", '[stations.1]\nkey = "' + KEY_B + '"\n[stations.2]\nkey = "robot"\n'
    )
    with pytest.raises(ConfigError, match=r"keys\.toml: stations\.2\.key has at most \d+ bits"):
        KeyRing.load(path)
    assert 2 in KeyRing.load(path, allow_weak=True)


def test_a_passphrase_is_stretched_so_an_offline_guess_costs_scrypt() -> None:
    """One captured session-open let a passphrase be guessed at 772k/s with one SHA-256 a
    guess; now a guess is scrypt with 16 MiB: the key is scrypt's, not a plain hash's."""
    key = derive_key("robot")
    assert key == hashlib.scrypt(
        b"robot", salt=b"freelook-link-key", n=1 << 14, r=8, p=1, dklen=32, maxmem=64 << 20
    )
    assert key != hashlib.sha256(b"freelook-link-key:robot").digest()


# -- only the driver controls what the driver sees -------------------------------------------


def _streamed(station: LinkSession, rb: LinkSession, start: float, seconds: float) -> int:
    """Heartbeats ``station`` accepted from ``rb``'s transmissions over ``seconds``."""
    got = 0
    for k in range(int(seconds / 0.01)):
        now = start + k * 0.01
        for out in rb.poll_to(now):
            if out.station == station.codec.sender:
                got += sum(
                    isinstance(m, Heartbeat) for m in accepted(station.receive(out.data, now))
                )
    return got


def test_an_observer_stops_and_spaces_only_its_own_stream() -> None:
    """An observer sending SetTransmission(false) and a slow spacing cut the driver's
    telemetry and video to nothing before; now they change only what the observer gets."""
    rb = LinkSession(
        NativeCodec(KEY, sender=ROBOT),
        spacing=0.05,
        periodic=lambda now: [Heartbeat()],
        role="robot",
        keys=ring(),
        nonce=b"start",
        obey_transmission_control=True,
    )
    driver = operator(station=1, key=KEY_1)
    observer = operator(station=2, key=KEY_2, nonce=b"observer")
    handshake(driver, rb)
    handshake(observer, rb, now=0.01)
    assert _streamed(driver, rb, 0.1, 1.0) >= 19
    deliver(rb, observer.send(SetTransmission(False), 1.2), 1.2)
    deliver(rb, observer.send(SetTransmissionSpacing(2.0), 1.2), 1.2)
    assert _streamed(driver, rb, 1.3, 1.0) >= 19  # the driver's stream as before
    assert _streamed(observer, rb, 2.4, 1.0) == 0  # the observer stopped its own
    frame = VideoFrame(1, 2.5, 320, 240, b"\xff\xd8jpeg\xff\xd9")
    assert {out.station for out in rb.send_to(frame, 2.5)} == {1}
    # the driver may space its own stream
    deliver(rb, driver.send(SetTransmissionSpacing(0.2), 3.5), 3.5)
    assert _streamed(driver, rb, 3.6, 1.0) <= 6


# the keys an adversary's dictionary run found accepted (rated 132 to 256 bits by the old
# estimate): repeats, constants and a word four times
@pytest.mark.parametrize(
    "weak",
    ["0" * 64, "f" * 64, "a" * 28, "password" * 4, "robot1!" * 4, "Aa1!" * 6],
    ids=["64 zeros", "64 f", "a x 28", "password x 4", "robot1! x 4", "Aa1! x 6"],
)
def test_repeats_constants_and_words_are_weak_keys(weak: str) -> None:
    assert key_bits(weak) < 32
    with pytest.raises(ConfigError, match=r"bits of entropy, 128 needed"):
        strong_key(weak)


def test_random_keys_of_every_alphabet_stay_strong() -> None:
    # 64 hex digits (``keys new``), 32 of base64url (``secrets.token_urlsafe(24)``, 192 bits)
    import random
    import string

    draw = random.Random(20261201)
    for alphabet, length in ((string.hexdigits[:16], 64), (string.ascii_letters + "-_", 32)):
        for _ in range(50):
            key = "".join(draw.choice(alphabet) for _ in range(length))
            assert key_bits(key) >= 128, key


@pytest.mark.skipif(os.name != "posix", reason="POSIX file permissions")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660])
def test_a_keys_file_others_may_read_or_write_is_refused_as_ssh_refuses_a_key(
    tmp_path: Path, mode: int
) -> None:
    path = write_keys_file(tmp_path / "keys.toml", f'[stations.1]\nkey = "{KEY_A}"\n')
    assert 1 in KeyRing.load(path)
    path.chmod(mode)
    with pytest.raises(ConfigError, match=rf"readable or writable by others.*chmod 600 {path}"):
        KeyRing.load(path)
