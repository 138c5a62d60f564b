"""The estimator's odometry bookkeeping: counts advanced without an estimate, and a cycle
without new readings."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.estimation import Odometry
from freelook.experiments._added_laser import with_added_laser
from freelook.hal import EncoderSample, GyroSample, OdometrySample, RobotHardware
from freelook.hardware.sim import SimulatedRobot
from freelook.maps import load_world
from freelook.robot._estimator import StateEstimator


def test_advancing_by_counts_leaves_the_state_an_update_leaves() -> None:
    rng = np.random.default_rng(7)
    updated, advanced = (Odometry(500, 0.195, 0.38, (1.0, 2.0, 3.0)) for _ in range(2))
    left = right = 0
    for k in range(200):
        if k % 4:  # every fourth step stands still
            left += int(rng.integers(-40, 40))
            right += int(rng.integers(-40, 40))
        yaw = None if k % 3 else float(rng.normal(0.0, 0.05))
        estimate = updated.update(left, right, 0.02 * k, yaw)
        advanced.advance_counts(left, right, 0.02 * k, yaw)
        assert estimate == advanced.estimate()
        assert updated.distance == advanced.distance


@dataclass
class _Device:
    """A sensor whose newest sample the test sets."""

    sample: GyroSample | EncoderSample | None = None

    def latest(self) -> GyroSample | EncoderSample | None:
        return self.sample


@pytest.mark.parametrize("use_gyro", [True, False])
def test_a_cycle_without_new_readings_reports_the_rate_it_began_with(use_gyro: bool) -> None:
    gyro, encoders = _Device(), _Device()
    hardware = RobotHardware(drive=None, encoders=encoders, gyro=gyro)  # type: ignore[arg-type]
    estimator = StateEstimator(
        load_robot("pioneer3dx"),
        hardware,
        None,
        start_pose=(1.0, 2.0, 0.5),
        use_gyro=use_gyro,
        use_localization=False,
        seed=0,
    )
    for k in range(1, 30):
        gyro.sample = GyroSample(0.02 * k, 0.3 + 0.01 * k)
        encoders.sample = EncoderSample(0.02 * k, 40 * k, 47 * k + k * k)
        estimator.update()
    for _ in range(3):  # the samples stay as they were
        before = estimator.yaw_rate
        assert estimator.update() == before != 0.0


@pytest.mark.parametrize("off_deg", [-1.5, 1.5])
def test_a_start_heading_the_laser_checks_is_set_by_its_first_fixes_standing_still(
    off_deg: float,
) -> None:
    # told a start heading 1.5° off (a robot put down by hand), the heading filter takes the
    # localization's fix before the robot moves, as the particle cloud does: the start is
    # known only as well as the localization's spread, not to a thousandth of a radian
    world = load_world("square")
    pose = (world.start[0] - 1.0, world.start[1] - 1.0, 0.0)
    believed = (pose[0], pose[1], math.radians(off_deg))
    config = with_added_laser(load_robot("foi-ugv"))  # the paper's robot had no laser
    robot = SimulatedRobot(config, world, seed=3, pose=pose, believed_pose=believed)
    robot.run_for(1.0)
    estimator = robot.core.estimator
    assert estimator.heading is not None
    assert estimator.mcl is not None
    assert estimator.mcl.updates >= 1
    assert abs(math.degrees(estimator.heading.heading)) < 0.3 * abs(off_deg)


@dataclass
class _Odometer:
    """A base's own odometry whose newest sample the test sets."""

    sample: OdometrySample | None = None

    def latest(self) -> OdometrySample | None:
        return self.sample


@pytest.mark.parametrize("odometry_hz", [10.0, 24.0, 48.0, 120.0])
def test_no_turn_is_lost_whatever_rate_the_bases_odometry_comes_at(odometry_hz: float) -> None:
    # a skid-steer base turning in place (its own odometry over-reports the turn by 70 %), an
    # IMU at 200 Hz, the control cycle at 50 Hz: four 90° turns, each followed by a pause
    config = load_robot("ros2-diff-base")
    assert config.gyro is not None
    gyro, odometer = _Device(), _Odometer()
    hardware = RobotHardware(drive=None, gyro=gyro, odometer=odometer)  # type: ignore[arg-type]
    estimator = StateEstimator(
        config,
        hardware,
        None,
        start_pose=(0.0, 0.0, 0.0),
        use_gyro=True,
        use_localization=False,
        seed=0,
    )
    omega, turn, pause = 1.0, math.pi / 2, 0.5

    def rate_at(t: float) -> float:
        """The true yaw rate at ``t``: a turn of π/2 at ``omega``, then a pause, four times."""
        phase = t % (turn / omega + pause)
        return omega if phase < turn / omega and t < 4 * (turn / omega + pause) else 0.0

    true_angle = imu_angle = reported = 0.0
    imu_dt, cycle, t = 1 / 200, 0.02, 0.0
    next_odometry, next_cycle = 0.0, 0.0
    heading, previous = 0.0, 0.0
    while t < 4 * (turn / omega + pause) + 0.5:
        t = round(t + imu_dt, 9)
        rate = rate_at(t - imu_dt / 2)
        true_angle += rate * imu_dt
        imu_angle += rate * imu_dt
        gyro.sample = GyroSample(t, rate, imu_angle)
        if t >= next_odometry:
            next_odometry += 1 / odometry_hz
            reported = 1.7 * true_angle  # slipping wheels: the base's own turn, too large
            odometer.sample = OdometrySample(t, 0.0, 0.0, wrap(reported), 0.0, 0.0)
        if t >= next_cycle:
            next_cycle += cycle
            estimator.update()
            theta = estimator.odometry.pose[2]
            heading += math.remainder(theta - previous, math.tau)
            previous = theta
    lost = 1.0 - heading / true_angle
    assert true_angle == pytest.approx(2 * math.pi, rel=0.01)
    assert abs(lost) <= 0.03, f"{100 * lost:.1f} % of the turn lost at {odometry_hz:g} Hz"


def wrap(angle: float) -> float:
    return math.remainder(angle, math.tau)
