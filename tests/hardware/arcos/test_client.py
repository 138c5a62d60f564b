"""The sans-I/O client against the emulator core, joined in memory on a virtual clock."""

from __future__ import annotations

import itertools
import math

import pytest
from arcos_emulator import (
    CLOSE,
    ENABLE,
    ESTOP,
    OPEN,
    PULSE,
    RVEL,
    SETRV,
    SETV,
    STOP,
    VEL,
    ArcosEmulator,
    frame,
    sip_payload,
)
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.hardware.arcos import (
    ANGLE_UNIT,
    ArcosClient,
    ArcosEvent,
    ClientState,
    Closed,
    Connected,
    HandshakeFailed,
    LinkLost,
    SipReceived,
)

TICK = 0.005


class Pair:
    """A client and an emulated robot exchanging bytes every tick of a virtual clock."""

    def __init__(self, client: ArcosClient, robot: ArcosEmulator) -> None:
        self.client = client
        self.robot = robot
        self.now = 0.0
        self.events: list[ArcosEvent] = []
        self.cable = True  # False: bytes are lost both ways

    def run(self, seconds: float) -> list[ArcosEvent]:
        start = len(self.events)
        end = self.now + seconds
        while self.now < end - 1e-9:
            self.now += TICK
            out = self.client.poll(self.now)
            self.robot.receive(out if self.cable else b"", self.now)
            back = self.robot.advance(self.now)
            self.events += self.client.receive(back if self.cable else b"", self.now)
        return self.events[start:]

    def connect(self) -> Connected:
        self.client.start(self.now)
        events = self.run(0.1)
        connected = [e for e in events if isinstance(e, Connected)]
        assert connected, events
        return connected[0]


def make_client(**options: float | None) -> ArcosClient:
    return ArcosClient(max_speed=1.2, max_turn_rate=math.radians(100), **options)  # type: ignore[arg-type]


def test_the_handshake_opens_enables_and_sets_the_limits() -> None:
    pair = Pair(make_client(), ArcosEmulator(name="Tester", robot_type="Pioneer"))
    connected = pair.connect()
    assert (connected.name, connected.robot_type, connected.subtype) == (
        "Tester",
        "Pioneer",
        "p3dx-sh",
    )
    robot = pair.robot
    sent = [(c.command, c.argument) for c in robot.commands]
    assert sent[:3] == [(0, None), (1, None), (2, None)]  # SYNC0, SYNC1, SYNC2
    assert sent[3:8] == [(OPEN, None), (SETV, 1200), (SETRV, 100), (ENABLE, 1), (STOP, None)]
    assert robot.phase == "open"
    assert robot.enabled
    pair.run(0.3)
    assert pair.client.connected
    assert pair.client.odometry is not None
    assert robot.bad_packets == robot.stray_bytes == 0


def test_a_missing_echo_restarts_the_handshake_and_silence_fails_it_naming_the_timeout() -> None:
    robot = ArcosEmulator(answer_handshake=False)
    pair = Pair(make_client(handshake_timeout=2.0, sync_retry=0.25), robot)
    pair.client.start(0.0)
    events = pair.run(2.5)
    failed = [e for e in events if isinstance(e, HandshakeFailed)]
    assert len(failed) == 1
    assert "within 2.0 s" in failed[0].reason
    assert "SYNC0" in failed[0].reason
    assert failed[0].stamp == pytest.approx(2.0, abs=TICK)
    assert pair.client.state is ClientState.FAILED
    assert [c.command for c in robot.commands] == [0] * 8  # SYNC0 every 0.25 s
    assert pair.run(1.0) == []  # nothing more is sent or reported
    assert len(robot.commands) == 8


def test_a_velocity_goes_out_on_the_next_poll_newest_wins() -> None:
    pair = Pair(make_client(), ArcosEmulator())
    pair.connect()
    pair.run(0.2)
    client, robot = pair.client, pair.robot
    client.command_velocity(0.1, 0.0)
    client.command_velocity(0.35, math.radians(-20))  # supersedes the first before any poll
    robot.commands.clear()
    pair.run(TICK)
    assert [(c.command, c.argument) for c in robot.commands] == [(VEL, 350), (RVEL, -20)]
    client.command_velocity(5.0, 10.0)  # beyond the limits: clamped to SETV / SETRV
    pair.run(TICK)
    assert [(c.command, c.argument) for c in robot.commands[2:]] == [(VEL, 1200), (RVEL, 100)]
    with pytest.raises(ValueError, match=r"velocity command \(nan, 0.0\): must be finite"):
        client.command_velocity(math.nan, 0.0)


def test_a_repeated_command_is_renewed_not_resent() -> None:
    pair = Pair(make_client(command_timeout=0.5), ArcosEmulator())
    pair.connect()
    robot = pair.robot
    robot.commands.clear()
    for _ in range(100):  # a 50 Hz control loop, 2 s, always the same command
        pair.client.command_velocity(0.3, 0.1)
        pair.run(0.02)
    assert [c.argument for c in robot.commands_named(VEL)] == [300] * 4  # once, then refreshes
    assert robot.watchdog_trips == 0
    assert robot.v == 300  # the renewals kept it younger than the command timeout


def test_keep_alive_pulses_and_refreshes_keep_the_robot_watchdog_quiet() -> None:
    pair = Pair(make_client(command_timeout=None), ArcosEmulator())
    pair.connect()
    robot = pair.robot
    robot.commands.clear()
    pair.run(3.0)  # nothing commanded: PULSE every 0.5 s
    pulses = robot.commands_named(PULSE)
    assert len(pulses) == 6
    assert all(
        b.stamp - a.stamp == pytest.approx(0.5, abs=TICK) for a, b in itertools.pairwise(pulses)
    )
    pair.client.command_velocity(0.2, 0.0)
    pair.run(10.0)  # a held command is refreshed instead, and the robot keeps driving
    assert 19 <= len(robot.commands_named(VEL)) <= 21  # every 0.5 s
    assert robot.watchdog_trips == 0
    assert robot.v == 200
    assert robot.x == pytest.approx(2000.0, abs=10.0)


def test_the_robot_watchdog_stops_it_when_the_client_goes_quiet() -> None:
    pair = Pair(make_client(command_timeout=None), ArcosEmulator())
    pair.connect()
    pair.client.command_velocity(0.2, 0.0)
    pair.run(0.5)
    pair.client = make_client()  # the old client is gone (never polled again)
    pair.run(2.2)
    assert pair.robot.watchdog_trips == 1
    assert pair.robot.v == 0.0


def test_a_command_older_than_the_command_timeout_becomes_a_stop() -> None:
    pair = Pair(make_client(command_timeout=1.0), ArcosEmulator())
    pair.connect()
    pair.client.command_velocity(0.3, 0.0, now=pair.now)
    pair.run(0.9)
    assert pair.robot.v == 300
    pair.run(0.2)
    assert pair.robot.v == 0.0
    assert pair.robot.commands_named(VEL)[-1].argument == 0


def test_odometry_follows_the_robot_across_the_15_bit_wrap() -> None:
    pair = Pair(
        make_client(command_timeout=None), ArcosEmulator(x=-50.0, y=0.0, th=math.radians(30))
    )
    pair.connect()
    pair.client.command_velocity(-0.5, 0.0)
    samples = []
    for _ in range(15):
        pair.run(0.1)
        assert pair.client.odometry is not None
        samples.append(pair.client.odometry)
    # the robot's x crossed 0 → 32767 and y went negative: the pose never jumps
    xs = [s.x for s in samples]
    assert all(-0.06 < b - a < 0 for a, b in itertools.pairwise(xs))
    x, y, th = pair.robot.pose_m()
    odo = samples[-1]
    lag = 0.1 * 0.5  # the last SIP is at most one period old
    assert odo.x == pytest.approx(x, abs=lag * math.cos(th) + 0.002)
    assert odo.y == pytest.approx(y, abs=lag * math.sin(th) + 0.002)
    assert odo.theta == pytest.approx(math.radians(30), abs=ANGLE_UNIT)
    assert (odo.v_left, odo.v_right) == (-0.5, -0.5)


def test_unwrapping_from_fabricated_sips() -> None:
    client = make_client()
    pair = Pair(client, ArcosEmulator())
    pair.connect()
    positions = [(32700, 5), (32760, 32760), (40, 32700), (200, 100)]
    xs, ys = [], []
    for i, (x, y) in enumerate(positions):
        client.receive(frame(sip_payload(x=x, y=y, th=-1024)), pair.now + 0.01 * i)
        assert client.odometry is not None
        xs.append(client.odometry.x)
        ys.append(client.odometry.y)
    assert xs == pytest.approx([-0.068, -0.008, 0.040, 0.200])  # 32700 is −68 mm
    assert ys == pytest.approx([0.005, -0.008, -0.068, 0.100])
    assert client.odometry is not None
    assert client.odometry.theta == pytest.approx(-math.pi / 2)


def test_sonar_bumpers_and_battery_come_from_the_sips() -> None:
    robot = ArcosEmulator(sonar_ranges={i: 300 + 10 * i for i in range(16)})
    robot.stall = 0b100 << 9  # front bumper segment 3
    pair = Pair(make_client(), robot)
    pair.connect()
    pair.run(0.45)  # 4 readings per SIP: 16 after four SIPs
    client = pair.client
    assert {n: r.range for n, r in client.sonar.items()} == pytest.approx(
        {i: 0.3 + 0.01 * i for i in range(16)}
    )
    assert client.bumpers is not None
    assert client.bumpers.front
    assert not client.bumpers.rear
    assert client.battery_volts == pytest.approx(13.0)
    robot.stall = 0b1 << 1
    pair.run(0.1)
    assert client.bumpers.front is False
    assert client.bumpers.rear is True


def test_bad_checksums_from_the_robot_are_dropped_and_counted() -> None:
    pair = Pair(make_client(), ArcosEmulator(corrupt_every=3))
    pair.connect()
    events = pair.run(3.0)
    stats = pair.client.stats()
    assert stats.bad_checksums == pair.robot.sips_sent // 3
    assert stats.sips + stats.bad_checksums == pair.robot.sips_sent
    assert all(isinstance(e, SipReceived) for e in events)  # and nothing else happened
    assert pair.client.connected


def test_silence_after_connecting_is_a_lost_link_naming_the_limit() -> None:
    pair = Pair(make_client(link_timeout=1.0), ArcosEmulator())
    pair.connect()
    pair.run(0.5)
    pair.cable = False
    lost_at = pair.now
    events = pair.run(1.5)
    lost = [e for e in events if isinstance(e, LinkLost)]
    assert len(lost) == 1
    assert "no SIP from the robot for 1.0" in lost[0].reason
    assert "limit 1.00 s" in lost[0].reason
    assert lost[0].stamp - lost_at == pytest.approx(1.0, abs=0.15)  # + up to one SIP period
    assert pair.client.state is ClientState.LOST
    assert not pair.client.connected


def test_after_a_reconnect_a_stop_goes_first_then_only_the_newest_command() -> None:
    pair = Pair(make_client(command_timeout=None), ArcosEmulator())
    pair.connect()
    pair.client.command_velocity(0.4, 0.0)
    pair.run(0.2)
    pair.cable = False
    pair.run(1.5)  # lost
    for v in (0.1, 0.2, 0.3):  # given while disconnected
        pair.client.command_velocity(v, 0.0)
    pair.cable = True
    pair.robot.new_connection()  # the robot takes a new connection from SYNC0
    pair.robot.commands.clear()
    pair.connect()
    after = [(c.command, c.argument) for c in pair.robot.commands[3:]]
    assert after[:7] == [
        (OPEN, None),
        (SETV, 1200),
        (SETRV, 100),
        (ENABLE, 1),
        (STOP, None),
        (VEL, 300),
        (RVEL, 0),
    ]
    assert [c.argument for c in pair.robot.commands_named(VEL)] == [300]


def test_a_robot_still_open_from_an_earlier_client_is_closed_and_synced_again() -> None:
    robot = ArcosEmulator()
    pair = Pair(make_client(), robot)
    pair.connect()
    pair.run(0.3)
    pair.client = make_client()  # a new client; the robot still streams SIPs
    pair.client.start(pair.now)
    events = pair.run(1.0)
    assert any(isinstance(e, Connected) for e in events)
    assert CLOSE in [c.command for c in robot.commands]
    assert robot.sessions_opened == 2
    assert pair.client.connected


def test_stop_e_stop_and_close() -> None:
    pair = Pair(make_client(), ArcosEmulator())
    pair.connect()
    pair.client.command_velocity(0.5, 0.5)
    pair.run(0.2)
    pair.client.e_stop()
    pair.run(TICK)
    assert pair.robot.commands[-1].command == ESTOP
    assert pair.robot.v == 0.0
    pair.run(0.6)
    assert pair.robot.commands[-1].command == PULSE  # the motion command was dropped
    pair.client.command_velocity(0.5, 0.0)
    pair.run(0.1)
    pair.client.stop()
    pair.run(TICK)
    assert pair.robot.commands[-1].command == STOP
    pair.client.close()
    events = pair.run(0.2)
    assert [c.command for c in pair.robot.commands[-2:]] == [STOP, CLOSE]
    assert any(isinstance(e, Closed) for e in events)
    assert pair.client.state is ClientState.CLOSED
    assert pair.robot.phase == "sync0"
    assert pair.robot.bad_packets == pair.robot.stray_bytes == 0


def test_limits_are_checked() -> None:
    with pytest.raises(ValueError, match=r"max_speed 40.0 m/s: must be in \(0, 32.767\]"):
        ArcosClient(max_speed=40.0, max_turn_rate=1.0)
    with pytest.raises(ValueError, match=r"link_timeout 0\.0 s: must be > 0"):
        ArcosClient(max_speed=1.0, max_turn_rate=1.0, link_timeout=0.0)


@st.composite
def _hostile_sips(draw: st.DrawFn) -> bytes:
    """A SIP with every field drawn from its whole range, cut short or run long: framed and
    checksummed as the robot would, so only the client's own checks stand in its way."""
    sonar = draw(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 0xFFFF)), max_size=8))
    payload = sip_payload(
        moving=draw(st.booleans()),
        x=draw(st.integers(0, 0xFFFF)),
        y=draw(st.integers(0, 0xFFFF)),
        th=draw(st.integers(-0x8000, 0x7FFF)),
        left=draw(st.integers(-0x8000, 0x7FFF)),
        right=draw(st.integers(-0x8000, 0x7FFF)),
        battery=draw(st.integers(0, 255)),
        stall=draw(st.integers(0, 0xFFFF)),
        flags=draw(st.integers(0, 0xFFFF)),
        sonar=tuple(sonar),
    )
    cut = draw(st.integers(1, len(payload) + 16))
    tail = draw(st.binary(min_size=max(0, cut - len(payload)), max_size=16))
    return frame((payload + tail)[: min(cut, 200)])


@settings(max_examples=300, deadline=None)
@given(st.lists(_hostile_sips(), min_size=1, max_size=6))
def test_hostile_sips_are_taken_or_counted_never_a_crash(sips: list[bytes]) -> None:
    """Server information packets from a faulty or hostile controller, each field anywhere in
    its range: the client takes each (odometry finite, at most 256 sonar readings) or counts
    it malformed, and stays connected."""
    pair = Pair(make_client(), ArcosEmulator())
    pair.connect()
    client = pair.client
    for k, sip in enumerate(sips):
        client.receive(sip, pair.now + 0.001 * (k + 1))
    odometry = client.odometry
    assert odometry is not None
    assert all(math.isfinite(v) for v in odometry)
    assert len(client.sonar) <= 256
    assert client.state is ClientState.CONNECTED
    stats = client.stats()
    assert stats.sips + stats.malformed_sips >= 1
