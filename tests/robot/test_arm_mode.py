"""The robot program's arm mode on the simulated TAROS (lock-step): every command goes through
the anti-collision check, the watchdog and the e-stop stop the arm, only the station in
control moves it, and a command the robot cannot carry out is refused, counted, and moves
nothing."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ArmVelocityCommand,
    ControlRequest,
    EStop,
    GripperCommand,
    Heartbeat,
    Message,
    ModeChange,
    Permissions,
    TankCommand,
)
from freelook.maps import load_world
from freelook.types import Mode

CONFIG = load_robot("taros")
WORLD = load_world("eod")
ELBOW_DOWN = ArmVelocityCommand((0.0, 0.0, -1.0, 0.0, 0.0))  # the fingers onto the bumper
ELBOW_UP = ArmVelocityCommand((0.0, 0.0, 1.0, 0.0, 0.0))


def taros() -> SimulatedRobot:
    r = SimulatedRobot(CONFIG, WORLD, seed=2, use_localization=False)
    assert r.send(ControlRequest(1, 10), 1)
    return r


def joints(r: SimulatedRobot) -> np.ndarray:
    assert r.hardware.arm is not None
    return np.array(r.hardware.arm.state().positions)


def jog(r: SimulatedRobot, message: Message, seconds: float) -> list[int]:
    """Send ``message`` every 40 ms for ``seconds``; the phase after each send."""
    phases = []
    for _ in range(round(seconds / 0.04)):
        r.send(message, 1)
        r.run_for(0.04)
        telemetry = r.core.telemetry(r.now())
        assert telemetry.arm is not None
        phases.append(telemetry.arm.phase)
    return phases


def test_jogged_into_the_body_the_arm_slows_stops_and_backs_out() -> None:
    r = taros()
    phases = jog(r, ELBOW_DOWN, 2.0)
    assert r.core.modes.mode == Mode.ARM
    assert phases[0] == 0
    first_slow, first_stop = phases.index(1), phases.index(2)
    assert first_slow < first_stop  # it slows before it stops
    stopped = joints(r)
    telemetry = r.core.telemetry(r.now())
    assert telemetry.arm is not None
    names = r.core.arm.model.pair_names if r.core.arm else ()
    assert {names[k] for k in telemetry.arm.stop_pairs} >= {("bumper", "finger_left")}
    jog(r, ELBOW_DOWN, 0.5)  # pressing on moves nothing
    assert np.allclose(joints(r), stopped, atol=2e-3)
    jog(r, ELBOW_UP, 0.5)  # the way out is always open
    assert joints(r)[2] > stopped[2] + 0.2
    # at no step did a checked pair intersect
    from freelook.arm import pair_separations

    assert r.core.arm is not None
    assert r.sim.arm is not None
    assert pair_separations(r.core.arm.model, r.sim.arm.q, 0.0, 0.0).min() > 0.0


def test_the_watchdog_and_the_e_stop_stop_the_arm() -> None:
    r = taros()
    start = joints(r)
    jog(r, ELBOW_UP, 0.3)
    assert joints(r)[2] > start[2] + 0.1
    for _ in range(60):  # the link is alive, but no arm command arrives
        r.send(Heartbeat(), 1)
        r.run_for(0.04)
    assert r.sim.arm is not None
    assert np.abs(r.sim.arm.qd).max() < 1e-9
    before = joints(r)
    r.send(ELBOW_UP, 1)
    r.run_for(0.1)
    assert joints(r)[2] > before[2]  # a command moves it again
    r.send(EStop(engaged=True), 1)
    r.run_for(0.5)  # the 50 ms lag carries the joints on for a moment
    held = joints(r)
    jog(r, ELBOW_UP, 0.4)
    assert np.allclose(joints(r), held, atol=1e-4)
    assert np.abs(r.sim.arm.qd).max() < 1e-4


def test_leaving_the_arm_mode_stops_the_arm_and_the_jog_does_not_resume() -> None:
    r = taros()
    jog(r, ELBOW_UP, 0.2)
    r.send(TankCommand(0.0, 0.0), 1)
    r.run_for(0.5)
    assert r.core.modes.mode == Mode.TANK
    held = joints(r)
    r.send(ModeChange(Mode.ARM), 1)
    r.run_for(0.3)
    assert np.array_equal(joints(r), held)


@pytest.mark.parametrize(
    ("message", "why"),
    [
        (ArmVelocityCommand((0.0, 0.0, 1.5, 0.0, 0.0)), "elbow_pitch at 1.5, beyond its limit"),
        (ArmVelocityCommand((0.0, 0.0, 0.5, 0.0)), "4 joints; taros jogs 5"),
        (ArmVelocityCommand((0.0, 0.0, 0.5, 0.0, 0.0, 0.0)), "6 joints"),
        (ArmVelocityCommand((0.0, math.nan, 0.5, 0.0, 0.0)), "nan"),
        (ArmVelocityCommand((0.0, 0.0, math.inf, 0.0, 0.0)), "inf"),
        (GripperCommand(0.5), "outside 0…0.36 m"),
        (GripperCommand(-0.01), "outside"),
        (GripperCommand(math.nan), "nan"),
    ],
)
def test_commands_beyond_the_arm_are_refused_counted_and_move_nothing(
    message: Message, why: str
) -> None:
    r = taros()
    r.run_for(0.1)
    before, opening = joints(r), r.sim.arm.opening if r.sim.arm else 0.0
    for _ in range(10):
        r.send(message, 1)
        r.run_for(0.04)
    assert len(r.core.log.rejections) == 10  # each one refused, and said why
    assert why in r.core.log.rejections[-1]
    assert np.array_equal(joints(r), before)
    assert r.sim.arm is not None
    assert r.sim.arm.opening == opening


def test_only_the_station_in_control_moves_the_arm() -> None:
    r = taros()
    r.run_for(0.1)
    before = joints(r)
    for _ in range(10):
        r.send(ELBOW_UP, 2)  # another station, without control
        r.run_for(0.04)
    assert np.array_equal(joints(r), before)
    assert r.core.log.dropped_commands == 10
    assert r.core.modes.mode == Mode.IDLE


def test_the_gripper_closes_and_opens_through_the_check() -> None:
    r = taros()
    jog(r, GripperCommand(0.1), 1.6)  # repeated, as a station repeats its newest command
    assert r.sim.arm is not None
    assert r.sim.arm.opening == pytest.approx(0.1, abs=1e-6)
    telemetry = r.core.telemetry(r.now())
    assert telemetry.arm is not None
    assert telemetry.arm.gripper_opening == pytest.approx(0.1, abs=1e-6)
    r.send(GripperCommand(0.3), 1)
    for _ in range(20):  # the link stays alive, the gripper command is not repeated
        r.send(Heartbeat(), 1)
        r.run_for(0.04)
    assert 0.1 < r.sim.arm.opening < 0.3  # the watchdog held the fingers where they were


@pytest.mark.parametrize(
    "permissions",
    [Permissions(10, frozenset({Mode.TANK, Mode.FREE_LOOK})), Permissions(10, observer=True)],
)
def test_a_station_whose_key_does_not_allow_the_arm_moves_nothing(
    permissions: Permissions,
) -> None:
    r = SimulatedRobot(CONFIG, WORLD, seed=2, use_localization=False)
    r.core.handle(ControlRequest(1, 10), r.now(), 1, permissions)
    r.run_for(0.1)
    before = joints(r)
    for _ in range(10):
        for message in (ELBOW_UP, GripperCommand(0.1)):
            r.core.handle(message, r.now(), 1, permissions)
        r.run_for(0.04)
    assert np.array_equal(joints(r), before)
    assert r.sim.arm is not None
    assert r.sim.arm.opening == pytest.approx(0.36)
    assert r.core.modes.mode != Mode.ARM
    assert r.core.log.dropped_commands >= 20
    assert "arm" in r.core.log.rejections[-1] or "observer" in r.core.log.rejections[-1]


@pytest.mark.parametrize("encoders", [True, False])
def test_an_arm_without_encoders_is_counted_from_its_resting_pose(encoders: bool) -> None:
    """The M2P2's arm had no joint sensors (Kievit-Kylar): the program counts each joint from the
    resting pose by what it commanded and for how long. A drive 10 % faster than presumed
    then ends 10 % further than the count says; with encoders the program reads the truth."""
    arm = CONFIG.arm
    assert arm is not None
    config = CONFIG.model_copy(update={"arm": arm.model_copy(update={"encoders": encoders})})
    r = SimulatedRobot(config, WORLD, seed=2, use_localization=False)
    assert r.send(ControlRequest(1, 10), 1)
    assert r.sim.arm is not None
    r.sim.arm.speed_scale = np.full(len(r.sim.arm.speed_scale), 1.1)
    start = joints(r)
    up = ArmVelocityCommand((0.0, 0.0, 0.2, 0.0, 0.0))  # the elbow up, away from the body
    jog(r, up, 1.0)
    jog(r, ArmVelocityCommand((0.0,) * 5), 0.4)  # stand: the lagging drive comes to rest
    assert r.core.arm is not None
    believed = r.core.arm.joints()[r.core.arm.model.arm_joints]
    true = joints(r)
    assert true[2] - start[2] == pytest.approx(1.1 * 0.2 * 1.0, rel=0.05)
    if encoders:
        assert believed[2] == pytest.approx(true[2], abs=1e-3)
    else:
        assert believed[2] - start[2] == pytest.approx(0.2 * 1.0, rel=0.02)
        assert true[2] - believed[2] == pytest.approx(0.1 * 0.2, rel=0.3)
        telemetry = r.core.telemetry(r.now()).arm
        assert telemetry is not None
        assert telemetry.positions[2] == pytest.approx(believed[2])
