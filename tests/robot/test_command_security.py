"""Attacks on the robot program's command handling; each must fail (sans-I/O, lock-step)."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ArmVelocityCommand,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    FreeLookCommand,
    Heartbeat,
    LinearDriveStart,
    Message,
    ModeChange,
    ModeRefusal,
    PanTiltCommand,
    RejectReason,
    TankCommand,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.maps import load_world
from freelook.types import Mode, SafetyFlags

CONFIG = load_robot("pioneer3dx")
WORLD = load_world("square")


def robot(seed: int = 1) -> SimulatedRobot:
    return SimulatedRobot(CONFIG, WORLD, seed=seed, pose=(7.0, 7.0, 0.0), use_localization=False)


def test_heartbeats_alone_do_not_keep_a_robot_driving() -> None:
    r = robot()
    r.send(ControlRequest(1, 10), 1)
    r.send(VelocityCommand(0.3, 0.0), 1)
    r.run_for(0.047)
    sent = r.now()
    tripped = stopped = None
    while r.now() - sent < 3.0:
        r.send(Heartbeat(), 1)  # the link is alive, but nobody asks for motion any more
        r.run_for(0.01)
        out = r.core.control.last_output
        if tripped is None and out.flags & SafetyFlags.WATCHDOG:
            tripped = r.now() - sent
        if stopped is None and out.v == 0.0:
            stopped = r.now() - sent
    assert tripped is not None
    assert stopped is not None
    # the command was sent 47 ms before ``sent``; the watchdog counts from it
    assert tripped <= CONFIG.safety.watchdog_timeout + CONFIG.link.control_period
    braking = 0.3 / CONFIG.drive.max_deceleration
    assert stopped <= tripped + braking + CONFIG.link.control_period


def test_while_the_robot_drives_itself_any_valid_packet_keeps_the_link_alive() -> None:
    r = robot()
    r.send(ControlRequest(1, 10), 1)
    r.send(LinearDriveStart(7.0, 8.5, 0.4), 1)
    for _ in range(40):
        r.send(Heartbeat(), 1)
        r.run_for(0.047)
    assert r.core.modes.mode == Mode.LINEAR
    assert abs(r.core.control.last_output.v) > 0.05


def test_another_station_cannot_release_pre_empt_or_drive_while_one_holds_control() -> None:
    r = robot()
    assert r.send(ControlRequest(1, 10), 1) == [ControlGrant(1, 10)]
    # station 2 speaks for station 1, claims authority 255, and drives
    r.send(ControlRelease(1), 2)
    assert r.send(ControlRequest(2, 255), 2) == [ControlReject(2, RejectReason.LOWER_AUTHORITY)]
    r.send(VelocityCommand(0.4, 0.0), 2)
    r.run_for(0.1)
    assert r.core.control.last_output.v == 0.0
    assert r.core.arbiter.holder(r.now()) == 1
    assert r.core.log.dropped_commands == 1
    assert "spoke for station 1" in r.core.log.rejections[-1]
    # station 1 still drives
    r.send(VelocityCommand(0.2, 0.0), 1)
    r.run_for(0.05)
    assert r.core.control.last_output.v > 0.0


def test_a_station_given_a_higher_authority_pre_empts_and_it_is_recorded() -> None:
    r = robot()
    r.core.intake.authority_of = lambda station: 20 if station == 3 else 10
    r.send(ControlRequest(1, 10), 1)
    assert r.send(ControlRequest(3, 1), 3) == [ControlGrant(3, 20)]  # its keys', not its claim
    assert any(e.kind == "control" and "from station 1" in e.detail for e in r.core.log.events)
    r.send(VelocityCommand(0.3, 0.0), 1)
    r.run_for(0.05)
    assert r.core.control.last_output.v == 0.0  # station 1 lost control


def test_stations_need_control_and_a_link_without_stations_does_not_while_none_holds() -> None:
    r = robot()
    r.send(VelocityCommand(0.3, 0.0), 7)
    r.run_for(0.05)
    assert r.core.control.last_output.v == 0.0
    r.send(VelocityCommand(0.3, 0.0))  # the thesis profile has no stations
    r.run_for(0.05)
    assert r.core.control.last_output.v > 0.0


BAD = st.sampled_from([math.nan, math.inf, -math.inf, 1e30, -1e30, 1e6])
MOTION = [
    VelocityCommand(0.2, 0.1),
    WheelSpeedCommand(0.2, 0.3),
    TankCommand(0.2, 0.1, 0.1, 0.0),
    FreeLookCommand(0.2, 0.1, 0.2, 0.0),
    PanTiltCommand(0.2, 0.0),
]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.sampled_from(MOTION), st.data())
def test_no_number_in_any_motion_command_drives_the_robot_beyond_its_limits(
    command: Message, data: st.DataObject
) -> None:
    fields = [f.name for f in dataclasses.fields(command)]  # type: ignore[arg-type]
    poisoned = dataclasses.replace(  # type: ignore[type-var]
        command,
        **{
            name: data.draw(BAD) for name in data.draw(st.sets(st.sampled_from(fields), min_size=1))
        },
    )
    r = robot()
    for _ in range(10):
        r.send(poisoned)
        r.run_for(0.02)
    out = r.core.control.last_output
    limits, drive, pt = CONFIG.limits, CONFIG.drive, CONFIG.pan_tilt
    assert pt is not None
    values = (out.v, out.omega, out.v_left, out.v_right, out.pan_rate, out.tilt_rate)
    assert all(math.isfinite(v) for v in values)
    assert abs(out.v) <= limits.max_speed + 1e-9 or isinstance(poisoned, FreeLookCommand)
    assert max(abs(out.v_left), abs(out.v_right)) <= drive.max_wheel_speed + 1e-9
    assert abs(out.pan_rate) <= pt.max_pan_rate + 1e-9
    truth = r.sim.ground_truth
    assert math.isfinite(truth.x)
    assert math.isfinite(truth.v)
    if any(not math.isfinite(getattr(poisoned, n)) for n in fields):
        assert "refused" in r.core.log.rejections[-1]
        assert out.v_left == out.v_right == 0.0


@pytest.mark.parametrize("value", [1e30, 50.0])
def test_huge_speeds_are_scaled_to_the_robots_own_limits(value: float) -> None:
    r = robot()
    r.send(VelocityCommand(value, 0.0))
    r.run_for(0.1)
    assert r.core.control.last_output.v == pytest.approx(CONFIG.limits.max_speed)


@pytest.mark.parametrize(
    "feeder",
    [
        PanTiltCommand(0.2, 0.0),
        ArmVelocityCommand((0.0,) * 5),
        ModeChange(Mode.VELOCITY),
        Heartbeat(),
    ],
    ids=["pan-tilt", "arm", "mode", "heartbeat"],
)
def test_only_the_driving_command_keeps_the_chassis_moving(feeder: Message) -> None:
    """One velocity command, then only other kinds of message: the chassis stops within the
    watchdog's timeout; no other message extends the driving command's life."""
    r = robot()
    r.send(ControlRequest(1, 10), 1)
    r.send(VelocityCommand(0.3, 0.0), 1)
    r.run_for(0.04)
    sent = r.now()
    tripped = None
    start = r.sim.vehicle.state()
    while r.now() - sent < 3.0:
        r.send(feeder, 1)
        r.run_for(0.04)
        if tripped is None and r.core.control.last_output.flags & SafetyFlags.WATCHDOG:
            tripped = r.now() - sent
    assert tripped is not None, "the chassis command never expired"
    assert tripped <= CONFIG.safety.watchdog_timeout + 2 * CONFIG.link.control_period
    assert r.core.control.last_output.v == 0.0
    end = r.sim.vehicle.state()
    # 0.3 m/s for the timeout, then a controlled stop: well under a metre (4 m before)
    assert math.hypot(end.x - start.x, end.y - start.y) < 0.3 * 0.6 + 0.3**2 / 2


def test_a_pan_command_expires_on_its_own() -> None:
    r = robot()
    r.send(ControlRequest(1, 10), 1)
    r.send(PanTiltCommand(0.3, 0.0), 1)
    r.run_for(0.1)
    assert r.core.control.last_output.pan_rate > 0.0
    r.run_for(CONFIG.safety.watchdog_timeout + 0.1)
    assert r.core.control.last_output.pan_rate == 0.0
    # a driving command later does not bring the old pan command back
    r.send(TankCommand(0.1, 0.0, 0.0, 0.0), 1)
    r.run_for(0.1)
    assert r.core.control.last_output.pan_rate == 0.0


UNIT = st.floats(-1.0, 1.0)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["free_look", "tank", "velocity", "wheels"]),
    UNIT,
    UNIT,
    UNIT,
    UNIT,
    st.floats(0.5, 3.0),
)
def test_every_mode_stays_within_the_configured_speed_and_turn_rate(
    mode: str, forward: float, left: float, turn: float, pan: float, overdrive: float
) -> None:
    """Full deflection of every cockpit input, in every driving mode, scaled past the limits
    by ``overdrive``: the chassis never exceeds the robot's configured speed or turn rate."""
    limits = CONFIG.limits
    v_max, w_max = limits.max_speed, math.radians(limits.max_turn_rate_deg)
    v, w = forward * v_max * overdrive, turn * w_max * overdrive
    command: Message = {
        "free_look": FreeLookCommand(v, left * v_max * overdrive, w, 0.0),
        "tank": TankCommand(v, w, pan, 0.0),
        "velocity": VelocityCommand(v, w),
        "wheels": WheelSpeedCommand(v - left * v_max * overdrive, v + left * v_max * overdrive),
    }[mode]
    r = robot()
    r.send(ControlRequest(1, 10), 1)
    for _ in range(15):
        r.send(command, 1)
        r.run_for(0.04)
        out = r.core.control.last_output
        assert abs(out.v) <= v_max * (1 + 1e-9)
        assert abs(out.omega) <= w_max * (1 + 1e-9)


def test_a_linear_drive_between_equal_points_is_refused_with_its_reason() -> None:
    r = robot()
    r.send(ControlRequest(1, 10), 1)
    # the station that asked hears why (the page says it)
    (refusal,) = r.send(LinearDriveStart(7.0, 7.0, 0.4), 1)
    assert refusal == ModeRefusal(
        1, Mode.LINEAR, "linear drive refused: linear drive needs two different points"
    )
    r.run_for(0.1)
    assert r.core.modes.mode != Mode.LINEAR
    assert "two different points" in r.core.log.rejections[-1]
    assert r.core.control.last_output.v == 0.0
