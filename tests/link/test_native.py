"""Native profile: round trips of every message, authentication, replay window, fragments."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.errors import ConfigError
from freelook.link import (
    MAX_AGE,
    MAX_DATAGRAM,
    AuthenticationError,
    ChecksumError,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    EStop,
    FrameAssembler,
    FreeLookCommand,
    GoalStart,
    GoalStop,
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    LinkStatsReport,
    Mode,
    ModeChange,
    NativeCodec,
    PanTiltCommand,
    ReceptionReport,
    RejectReason,
    Relocalize,
    ReplayError,
    SafetyFlags,
    SetTransmission,
    SetTransmissionSpacing,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    VideoFragment,
    VideoFrame,
    WheelSpeedCommand,
    derive_key,
    key_from_env,
)
from keys_for_tests import KEY_A

KEY = derive_key("test passphrase")
f32 = st.floats(-1e3, 1e3, allow_nan=False, width=32)  # positions, times
speed = st.floats(-20, 20, width=32)  # every field within its range (freelook.link._values)
rate = st.floats(-50, 50, width=32)


def codecs() -> tuple[NativeCodec, NativeCodec]:
    return NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)


messages = st.one_of(
    st.builds(VelocityCommand, speed, rate),
    st.builds(WheelSpeedCommand, speed, speed),
    st.builds(TankCommand, speed, rate, rate, rate),
    st.builds(FreeLookCommand, speed, speed, rate, rate),
    st.builds(PanTiltCommand, rate, rate),
    st.builds(ModeChange, st.sampled_from(Mode)),
    st.builds(LinearDriveStart, f32, f32, st.floats(0, 20, width=32)),
    st.just(LinearDriveStop()),
    st.builds(GoalStart, f32, f32),
    st.just(GoalStop()),
    st.just(TrajectoryStop()),
    st.builds(EStop, st.booleans()),
    st.just(Relocalize()),
    st.builds(SetTransmission, st.booleans()),
    st.builds(SetTransmissionSpacing, st.floats(0, 1e3, width=32)),
    st.just(Heartbeat()),
    st.builds(ControlRequest, st.integers(0, 65535), st.integers(0, 255)),
    st.builds(ControlRelease, st.integers(0, 65535)),
    st.builds(ControlGrant, st.integers(0, 65535), st.integers(0, 255)),
    st.builds(ControlReject, st.integers(0, 65535), st.sampled_from(RejectReason)),
    st.builds(
        ReceptionReport,
        st.floats(0, MAX_AGE, width=32),
        st.floats(0, MAX_AGE, width=32),
        st.floats(0, 100, width=32),
    ),
    st.integers(0, 300).flatmap(
        lambda n: st.builds(
            TrajectoryStart,
            st.lists(f32, min_size=n, max_size=n).map(tuple),
            st.lists(f32, min_size=n, max_size=n).map(tuple),
            st.lists(f32, min_size=n, max_size=n).map(tuple),
            st.booleans(),
            st.booleans(),
        )
    ),
)


@settings(max_examples=300)
@given(messages, st.floats(0, 1e6))
def test_every_message_round_trips(message: object, stamp: float) -> None:
    sender, receiver = codecs()
    packet = sender.encode(message, stamp)  # type: ignore[arg-type]
    decoded = receiver.decode(packet)
    assert decoded.message == message
    assert decoded.sender == 1
    assert decoded.stamp == pytest.approx(stamp, abs=1e-6)


def _telemetry(n_laser: int = 181) -> Telemetry:
    return Telemetry(
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
        laser=tuple(round(0.5 + 0.01 * i, 3) for i in range(n_laser)),
        sonar=tuple(float(i) for i in range(16)),
        bumper_front=True,
        safety_zone=1,
        safety_scale=0.5,
        safety_flags=SafetyFlags.ZONE | SafetyFlags.WATCHDOG,
        mode=Mode.FREE_LOOK,
        estop=True,
        localizing=True,
        controller=7,
        link=LinkStatsReport(10, 2, 1, 3, 4, 5, 31.5, 21.25, 16.5, 0.125),
    )


def test_full_telemetry_round_trips() -> None:
    sender, receiver = codecs()
    telemetry = _telemetry()
    decoded = receiver.decode(sender.encode(telemetry, 1.0)).message
    assert decoded == telemetry
    assert len(sender.encode(telemetry, 1.0)) < 600


@given(st.binary(min_size=0, max_size=200_000), st.integers(0, 2**32 - 1))
@settings(max_examples=30, deadline=None)
def test_video_frames_fragment_and_reassemble(jpeg: bytes, frame_id: int) -> None:
    sender, receiver = codecs()
    frame = VideoFrame(frame_id, 3.5, 640, 480, jpeg)
    datagrams = sender.encode_video(frame, 1.0)
    assert all(len(d) <= MAX_DATAGRAM for d in datagrams)
    assembler = FrameAssembler()
    results = [assembler.add(receiver.decode(d).message) for d in reversed(datagrams)]  # type: ignore[arg-type]
    assert results[-1] == frame
    assert all(r is None for r in results[:-1])


def test_a_frame_with_a_lost_fragment_is_dropped_and_the_newer_wins() -> None:
    sender, receiver = codecs()
    old = sender.encode_video(VideoFrame(1, 0.0, 8, 8, bytes(5000)), 1.0)
    new = sender.encode_video(VideoFrame(2, 0.1, 8, 8, bytes(range(256)) * 20), 1.1)
    assembler = FrameAssembler()
    for datagram in old[:-1]:  # the last fragment of frame 1 is lost
        assert assembler.add(receiver.decode(datagram).message) is None  # type: ignore[arg-type]
    done = [assembler.add(receiver.decode(d).message) for d in new]  # type: ignore[arg-type]
    assert done[-1] is not None
    assert done[-1].frame_id == 2
    assert assembler.dropped == 1
    # a late fragment of the old frame never produces it
    assert assembler.add(receiver.decode(old[-1]).message) is None  # type: ignore[arg-type]
    assert assembler.add(VideoFragment(9, 5, 3, b"")) is None  # index beyond count


def test_forged_tampered_and_replayed_packets_are_refused() -> None:
    sender, receiver = codecs()
    packet = sender.encode(VelocityCommand(1.0, 0.0), 10.0)
    forger = NativeCodec(derive_key("another key"), sender=1)
    with pytest.raises(AuthenticationError, match="tag"):
        receiver.decode(forger.encode(VelocityCommand(1.0, 0.0), 10.0))
    tampered = bytearray(packet)
    tampered[23] ^= 0x40
    with pytest.raises(AuthenticationError):
        receiver.decode(bytes(tampered))
    assert receiver.decode(packet).message == VelocityCommand(1.0, 0.0)
    with pytest.raises(ReplayError, match="already seen"):
        receiver.decode(packet)
    # an old packet replayed long after: stale stamp
    for i in range(100):
        receiver.decode(sender.encode(Heartbeat(), 10.0 + 0.05 * i))
    stale = sender.encode(VelocityCommand(0.5, 0.0), 10.0)  # new sequence, old stamp
    with pytest.raises(ReplayError, match="older than the newest"):
        receiver.decode(stale)
    unauthenticated = NativeCodec(None, sender=1, allow_unauthenticated=True)
    with pytest.raises(AuthenticationError, match="unauthenticated packet refused"):
        receiver.decode(unauthenticated.encode(VelocityCommand(1.0, 0.0), 20.0))


def test_reordered_packets_inside_the_window_are_accepted_once() -> None:
    sender, receiver = codecs()
    packets = [sender.encode(VelocityCommand(0.1 * i, 0.0), 1.0 + 0.01 * i) for i in range(10)]
    for index in (0, 5, 2, 9, 1, 3, 4, 8, 6, 7):
        receiver.decode(packets[index])
    for packet in packets:
        with pytest.raises(ReplayError):
            receiver.decode(packet)


def test_restarted_sender_is_accepted() -> None:
    sender, receiver = codecs()
    for i in range(200):
        receiver.decode(sender.encode(Heartbeat(), 100.0 + 0.01 * i))
    restarted = NativeCodec(KEY, sender=1)  # sequence back to 0, later stamps
    assert receiver.decode(restarted.encode(Heartbeat(), 110.0)).sequence == 0


def test_keys_are_required_unless_asked_otherwise() -> None:
    with pytest.raises(ConfigError, match="needs a key"):
        NativeCodec(None)
    plain = NativeCodec(None, allow_unauthenticated=True)
    other = NativeCodec(None, sender=3, allow_unauthenticated=True)
    packet = plain.encode(EStop(True), 1.0)
    assert other.decode(packet).message == EStop(True)
    corrupted = bytearray(packet)
    corrupted[22] ^= 1
    with pytest.raises(ChecksumError):
        other.decode(bytes(corrupted))
    assert key_from_env({"FREELOOK_LINK_KEY": KEY_A}) == bytes.fromhex(KEY_A)
    assert key_from_env({}) is None
    assert len(derive_key("x")) == 32
    with pytest.raises(ConfigError, match="empty"):
        derive_key("  ")
