"""The JAUS client alone (sans-I/O, an injected clock): the conversation it holds, its frames
and scalings under hypothesis, and a fault latched for good."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.errors import ConfigError
from freelook.hardware.judp import (
    ACCESS_CONTROL,
    LOCAL_POSE_SENSOR,
    MANAGEMENT,
    PRIMITIVE_DRIVER,
    VELOCITY_STATE_DRIVER,
    ClientOptions,
    JausClient,
    Phase,
    parse_judp_url,
)
from freelook.judp import (
    ComponentServices,
    ConfirmControl,
    ConfirmResponse,
    JausId,
    JausMessage,
    JudpMessage,
    LocalPose,
    ManagementStatus,
    RejectControl,
    RejectResponse,
    ReleaseControl,
    ReportControl,
    ReportIdentification,
    ReportLocalPose,
    ReportServices,
    ReportStatus,
    ReportTimeout,
    RequestControl,
    ServiceRecord,
    SetVelocityCommand,
    SetWrenchEffort,
    decode_message,
    encode_message,
    pack_judp,
    parse_judp,
)

ME, ROBOT = JausId(150, 1, 1), JausId(42, 1, 1)


def _from_robot(message: JausMessage) -> bytes:
    return pack_judp([JudpMessage(ME, ROBOT, encode_message(message))])


def _sent(datagrams: list[bytes]) -> list[JausMessage]:
    out = []
    for d in datagrams:
        for m in parse_judp(d):
            out.append(decode_message(m.code, m.body))
    return out


def _ready(services: tuple[str, ...], now: float = 0.0) -> JausClient:
    client = JausClient(ClientOptions(own_id=ME, max_speed=1.0, max_turn_rate=2.0))
    client.poll(now)
    client.receive(_from_robot(ReportIdentification(2, 10001, "robot")), now)
    offered = tuple(ServiceRecord(uri, 1, 0) for uri in services)
    client.receive(_from_robot(ReportServices((ComponentServices(1, 1, 0, offered),))), now)
    assert client.phase == Phase.REQUESTING
    client.receive(_from_robot(ConfirmControl(ConfirmResponse.CONTROL_ACCEPTED)), now)
    if MANAGEMENT in services:
        client.receive(_from_robot(ReportStatus(ManagementStatus.STANDBY)), now)
        assert client.phase == Phase.RESUMING
        client.receive(_from_robot(ReportStatus(ManagementStatus.READY)), now)
    assert client.phase == Phase.READY
    return client


_speed = st.floats(-1.0, 1.0)
_rate = st.floats(-2.0, 2.0)


@settings(max_examples=200, deadline=None)
@given(_speed, _speed, _rate)
def test_velocity_commands_go_out_in_jaus_frame(vx: float, vy: float, omega: float) -> None:
    client = _ready((ACCESS_CONTROL, VELOCITY_STATE_DRIVER))
    client.command(vx, vy, omega, 1.0)
    [command] = [m for m in _sent(client.poll(1.0)) if isinstance(m, SetVelocityCommand)]
    assert command.command_type == 0
    x, y, _ = command.velocity
    yaw_rate = command.rates[2]
    assert x is not None
    assert y is not None
    assert yaw_rate is not None
    assert x == pytest.approx(vx, abs=1e-6)
    assert y == pytest.approx(-vy, abs=1e-6)  # y right
    assert yaw_rate == pytest.approx(-omega, abs=1e-3)  # clockwise positive


@settings(max_examples=200, deadline=None)
@given(_speed, _speed, _rate)
def test_wrench_efforts_are_shares_of_the_limits(vx: float, vy: float, omega: float) -> None:
    client = _ready((ACCESS_CONTROL, PRIMITIVE_DRIVER))
    client.command(vx, vy, omega, 1.0)
    [wrench] = [m for m in _sent(client.poll(1.0)) if isinstance(m, SetWrenchEffort)]
    lx, ly, _ = wrench.propulsive_linear
    rz = wrench.propulsive_rotational[2]
    assert lx is not None
    assert ly is not None
    assert rz is not None
    step = 200.0 / 0xFFFF
    assert lx == pytest.approx(100.0 * vx, abs=step)
    assert ly == pytest.approx(-100.0 * vy, abs=step)
    assert rz == pytest.approx(-100.0 * omega / 2.0, abs=step)


@settings(max_examples=200, deadline=None)
@given(st.floats(-50.0, 50.0), st.floats(-50.0, 50.0), st.floats(-3.1, 3.1))
def test_the_local_pose_becomes_freelook_odometry(x: float, y: float, yaw: float) -> None:
    client = _ready((ACCESS_CONTROL, VELOCITY_STATE_DRIVER, LOCAL_POSE_SENSOR))
    client.receive(_from_robot(ReportLocalPose(LocalPose(x=x, y=y, yaw=yaw))), 1.0)
    sample = client.odometry
    assert sample is not None
    assert sample.stamp == 1.0
    assert sample.x == pytest.approx(x, abs=1e-4)
    assert sample.y == pytest.approx(-y, abs=1e-4)
    assert math.remainder(sample.theta + yaw, math.tau) == pytest.approx(0.0, abs=1e-4)


def test_a_revocation_is_held_with_stops_going_out_and_control_asked_again() -> None:
    client = _ready((ACCESS_CONTROL, MANAGEMENT, VELOCITY_STATE_DRIVER, LOCAL_POSE_SENSOR))
    client.command(0.5, 0.0, 0.0, 1.0)
    assert client.poll(1.0)
    client.receive(_from_robot(RejectControl(RejectResponse.CONTROL_RELEASED)), 1.1)
    assert client.phase == Phase.FAULT
    assert "took control away (RejectControl CONTROL_RELEASED)" in client.problem
    assert not client.connected(1.1)
    # never silent: a stop at once and every refresh, and control asked for again
    first = _sent(client.poll(1.1))
    assert [m.velocity[0] for m in first if isinstance(m, SetVelocityCommand)] == [0.0]
    assert any(isinstance(m, RequestControl) for m in first)
    # neither a new grant nor the operator's commands bring driving back
    client.receive(_from_robot(ConfirmControl(ConfirmResponse.CONTROL_ACCEPTED)), 1.2)
    speeds = []
    for k in range(30):
        t = 1.2 + 0.05 * k
        client.command(0.5, 0.0, 0.0, t)
        speeds += [
            m.velocity[0] for m in _sent(client.poll(t)) if isinstance(m, SetVelocityCommand)
        ]
    assert client.phase == Phase.FAULT
    assert len(speeds) >= 10
    assert set(speeds) == {0.0}
    # a close still stops it, and releases what the robot confirmed it holds again
    closing = _sent(client.close(3.0))
    assert any(isinstance(m, SetVelocityCommand) and m.velocity[0] == 0.0 for m in closing)
    assert any(isinstance(m, ReleaseControl) for m in closing)


def _forged(message: JausMessage) -> bytes:
    """What an attacker who forged the robot's address and JAUS id sends."""
    return _from_robot(message)


@pytest.mark.parametrize(
    "forged",
    [
        RejectControl(RejectResponse.CONTROL_RELEASED),
        ReportControl(JausId(7, 1, 1), 200),
        ReportStatus(ManagementStatus.EMERGENCY),
    ],
    ids=["RejectControl", "ReportControl", "EMERGENCY"],
)
def test_one_forged_datagram_never_leaves_the_robot_driving(forged: JausMessage) -> None:
    client = _ready((ACCESS_CONTROL, MANAGEMENT, VELOCITY_STATE_DRIVER, LOCAL_POSE_SENSOR))
    client.command(0.5, 0.0, 0.0, 1.0)
    assert any(
        isinstance(m, SetVelocityCommand) and m.velocity[0] == 0.5 for m in _sent(client.poll(1.0))
    )
    client.receive(_forged(forged), 1.01)
    assert client.phase == Phase.FAULT
    # the next poll stops the robot; the stop is repeated while the fault is held
    stops = []
    for k in range(1, 40):
        t = 1.01 + 0.01 * k
        client.command(0.5, 0.0, 0.0, t)
        stops += [
            (t, m.velocity[0]) for m in _sent(client.poll(t)) if isinstance(m, SetVelocityCommand)
        ]
    assert stops[0] == (pytest.approx(1.02), 0.0)
    assert {v for _, v in stops} == {0.0}
    assert client.next_deadline() is not None  # it keeps polling, never falls silent
    # the robot still answers this client: control is confirmed, the status is Ready again;
    # the fault stands (and is said) until the operator's deliberate act
    client.receive(_from_robot(ReportControl(ME, 5)), 1.5)
    client.receive(_from_robot(ReportStatus(ManagementStatus.READY)), 1.5)
    assert client.phase == Phase.FAULT
    assert client.problem
    assert client.recover(2.0)
    assert not client.recover(2.0)  # once
    client.receive(_from_robot(ConfirmControl(ConfirmResponse.CONTROL_ACCEPTED)), 2.0)
    client.receive(_from_robot(ReportStatus(ManagementStatus.READY)), 2.0)
    assert client.phase == Phase.READY
    resumed = _sent(client.poll(2.05))
    # the command given before the recovery is not resumed: a stop until a new one
    assert [m.velocity[0] for m in resumed if isinstance(m, SetVelocityCommand)] == [0.0]
    client.command(0.3, 0.0, 0.0, 2.1)
    after = _sent(client.poll(2.1))
    assert [m.velocity[0] for m in after if isinstance(m, SetVelocityCommand)] == [
        pytest.approx(0.3, abs=1e-4)
    ]


def test_forged_pose_reports_at_any_rate_move_the_pose_no_faster_than_the_robot() -> None:
    client = _ready((ACCESS_CONTROL, VELOCITY_STATE_DRIVER, LOCAL_POSE_SENSOR))
    bound = 2.0 * client.options.max_speed + 0.1
    # the robot stands still at the origin; forged reports at 1 kHz walk it away, each a
    # little further than the last
    client.receive(_from_robot(ReportLocalPose(LocalPose(x=0.0, y=0.0, yaw=0.0))), 1.0)
    for k in range(1, 2001):
        t = 1.0 + 0.001 * k
        x = 0.1 * k  # 100 m/s, each report within what one report at the sensor period may move
        client.receive(_from_robot(ReportLocalPose(LocalPose(x=x, y=0.0, yaw=0.0))), t)
    assert client.odometry is not None
    believed = client.odometry.x
    assert believed <= bound * 2.0 + 0.02 * (2.0 / client.options.sensor_period)
    assert client.dropped["ReportLocalPose out of range (a jump faster than the robot)"] > 1900


def test_a_stale_command_becomes_a_stop() -> None:
    client = _ready((ACCESS_CONTROL, VELOCITY_STATE_DRIVER))
    client.command(0.5, 0.0, 0.0, 1.0)
    client.poll(1.0)
    [stop] = [m for m in _sent(client.poll(1.6)) if isinstance(m, SetVelocityCommand)]
    assert stop.velocity[0] == pytest.approx(0.0, abs=1e-6)


def test_control_is_renewed_well_inside_the_robots_timeout() -> None:
    client = _ready((ACCESS_CONTROL, VELOCITY_STATE_DRIVER))
    client.receive(_from_robot(ReportTimeout(1)), 0.0)  # the robot drops a controller after 1 s
    renewals = []
    for k in range(300):
        t = k * 0.01
        if any(isinstance(m, RequestControl) for m in _sent(client.poll(t))):
            renewals.append(t)
    gaps = [b - a for a, b in itertools.pairwise(renewals)]
    assert len(renewals) >= 8
    assert max(gaps) <= 1.0 / 3.0 + 0.011  # a third of the timeout, within a poll step


def test_speeds_from_poses_go_by_the_robots_time_stamps() -> None:
    """Six poses 50 ms apart by the robot's clock (0.4 m/s), arriving in one burst."""
    client = _ready((ACCESS_CONTROL, VELOCITY_STATE_DRIVER, LOCAL_POSE_SENSOR))
    for k in range(6):
        ms = 59_950 + 50 * k  # across a minute's turn: ms, s and min fields all roll over
        stamp = ms % 1000 | (ms // 1000 % 60) << 10 | (ms // 60_000) << 16 | 3 << 27
        pose = LocalPose(x=0.02 * k, y=0.0, yaw=0.0, timestamp=stamp)
        client.receive(_from_robot(ReportLocalPose(pose)), 5.0)
    sample = client.odometry
    assert sample is not None
    assert (sample.v_left + sample.v_right) / 2 == pytest.approx(0.4, abs=1e-3)  # X in 47 µm


@pytest.mark.parametrize(
    "url",
    [
        "judp://",
        "judp://[::1",
        "judp://127.0.0.1:99999",
        "judp://127.0.0.1:port",
        "judp://127.0.0.1\n:3794",
        "arcos://127.0.0.1:3794",
        "judp://127.0.0.1:3794/x?y=1",
    ],
)
def test_a_malformed_url_is_one_line_naming_it(url: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_judp_url(url)
    message = str(err.value)
    assert "\n" not in message
    assert "expected judp://HOST:PORT" in message


def test_urls_name_the_robot() -> None:
    assert str(parse_judp_url("judp://127.0.0.1")) == "127.0.0.1:3794"
    assert str(parse_judp_url("judp://[::1]:4000")) == "::1:4000"


_REPORTS = [
    ReportIdentification(2, 10001, "robot"),
    ReportServices((ComponentServices(1, 1, 0, (ServiceRecord(LOCAL_POSE_SENSOR, 1, 0),)),)),
    ConfirmControl(ConfirmResponse.CONTROL_ACCEPTED),
    RejectControl(RejectResponse.CONTROL_RELEASED),
    ReportControl(ME, 5),
    ReportStatus(ManagementStatus.READY),
    ReportTimeout(2),
    ReportLocalPose(LocalPose(x=1.0, y=2.0, yaw=0.5)),
]


@st.composite
def _hostile_payloads(draw: st.DrawFn) -> bytes:
    """A message the client knows, cut, stretched or with bytes changed; or any code at all."""
    if draw(st.booleans()):
        return draw(st.binary(min_size=2, max_size=64))
    payload = bytearray(encode_message(draw(st.sampled_from(_REPORTS))))
    for at, value in draw(st.lists(st.tuples(st.integers(0, 255), st.integers(0, 255)))):
        payload[at % len(payload)] = value
    cut = draw(st.integers(2, len(payload) + 8))
    return bytes(payload[:cut]) + draw(st.binary(max_size=max(0, cut - len(payload))))


@settings(max_examples=300, deadline=None)
@given(st.lists(_hostile_payloads(), min_size=1, max_size=8))
def test_every_report_mangled_through_the_client_is_taken_or_dropped_never_a_crash(
    payloads: list[bytes],
) -> None:
    """Each message type the client reads, mangled, from the robot's own address and id: it is
    taken (its values checked) or dropped and counted; the client keeps stopping a robot it
    lost, and its pose stays finite."""
    client = _ready((ACCESS_CONTROL, MANAGEMENT, VELOCITY_STATE_DRIVER, LOCAL_POSE_SENSOR))
    client.command(0.5, 0.0, 0.0, 1.0)
    client.poll(1.0)
    for k, payload in enumerate(payloads):
        client.receive(pack_judp([JudpMessage(ME, ROBOT, payload)]), 1.0 + 0.01 * k)
    odometry = client.odometry
    if odometry is not None:
        assert all(math.isfinite(v) for v in (odometry.x, odometry.y, odometry.theta))
    sent = _sent(client.poll(1.5))
    if client.phase is not Phase.READY:  # a fault or a lost control: stops, never silence
        assert all(m.velocity[0] == 0.0 for m in sent if isinstance(m, SetVelocityCommand))
        assert client.next_deadline() is not None
