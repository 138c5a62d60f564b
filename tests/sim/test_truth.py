"""The simulator runs the physical robot of an error model; the robot program keeps its
description: what the HAL reports is the description, what moves is the truth."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from freelook.config import PhysicalTruth, load_error_model, load_robot
from freelook.hardware.sim import SimulatedRobot, simulated_hardware
from freelook.maps import World
from freelook.sim import Simulator


def open_floor(size: float = 20.0) -> World:
    res = 0.05
    n = round(size / res)
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    return World("floor", grid, res, (-size / 2, -size / 2))


def neutral(name: str) -> PhysicalTruth:
    """A truth equal to the description (every error zero), to change one thing at a time."""
    config = load_robot(name)
    truth = load_error_model(name).draw(0)
    return dataclasses.replace(
        truth,
        left_wheel=1.0,
        right_wheel=1.0,
        track=1.0,
        spread_left_turn=config.slip.icr_spread,
        spread_right_turn=config.slip.icr_spread,
        spread_per_rate=0.0,
        longitudinal=config.slip.longitudinal,
        lateral=0.0,
        icr_forward=0.0,
        slip_noise=0.0,
        gyro_scale=0.0,
        laser_forward=0.0,
        laser_left=0.0,
        laser_yaw=0.0,
        outlier_rate=0.0,
        dropout_rate=0.0,
    )


def drive(sim: Simulator, left: float, right: float, seconds: float) -> None:
    sim.set_wheel_speeds(left, right)
    sim.run_for(seconds)


def test_a_larger_wheel_carries_the_robot_further_than_its_encoders_count() -> None:
    config = load_robot("pioneer3dx")
    truth = dataclasses.replace(neutral("pioneer3dx"), left_wheel=1.02, right_wheel=1.02)
    sims = [Simulator(config, open_floor(), seed=1, pose=(0, 0, 0), truth=t) for t in (None, truth)]
    for sim in sims:
        drive(sim, 0.5, 0.5, 4.0)
    exact, larger = sims
    assert exact.vehicle.wheel_distances() == pytest.approx(larger.vehicle.wheel_distances())
    assert larger.vehicle.x == pytest.approx(1.02 * exact.vehicle.x, rel=1e-6)


def test_unequal_wheels_curve_a_straight_command_towards_the_smaller() -> None:
    config = load_robot("pioneer3dx")
    truth = dataclasses.replace(neutral("pioneer3dx"), left_wheel=1.01, right_wheel=0.99)
    sim = Simulator(config, open_floor(), seed=1, pose=(0, 0, 0), truth=truth)
    drive(sim, 0.5, 0.5, 4.0)
    left, right = sim.vehicle.wheel_distances()
    assert left == pytest.approx(right)  # the encoders see a straight line
    assert sim.vehicle.theta < -0.01  # it turned right


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_the_slip_differs_turning_left_and_right(sign: float) -> None:
    config = load_robot("foi-ugv")
    truth = dataclasses.replace(neutral("foi-ugv"), spread_left_turn=1.0, spread_right_turn=1.2)
    sim = Simulator(config, open_floor(), seed=1, pose=(0, 0, 0), truth=truth)
    drive(sim, -0.2 * sign, 0.2 * sign, 2.0)
    left, right = sim.vehicle.wheel_distances()
    by_encoders = (right - left) / config.drive.track_width
    spread = 1.0 if sign > 0 else 1.2
    assert sim.vehicle.rotation == pytest.approx(by_encoders / spread, rel=1e-6)


def test_turning_faster_slips_more_and_a_turn_skids_outwards() -> None:
    config = load_robot("foi-ugv")
    base = neutral("foi-ugv")
    rates = []
    for per_rate in (0.0, 0.05):
        truth = dataclasses.replace(base, spread_per_rate=per_rate)
        sim = Simulator(config, open_floor(), seed=1, pose=(0, 0, 0), truth=truth)
        drive(sim, -0.3, 0.3, 2.0)
        rates.append(sim.vehicle.rotation)
    assert rates[1] < 0.99 * rates[0]
    skid = dataclasses.replace(base, lateral=0.2)
    sims = [Simulator(config, open_floor(), seed=1, pose=(0, 0, 0), truth=t) for t in (base, skid)]
    for sim in sims:
        drive(sim, 0.3, 0.4, 3.0)  # a left turn forwards
    straight, skidding = sims
    # the skidding robot ends up outside (to the right of) the arc the other drove
    assert skidding.vehicle.y < straight.vehicle.y - 0.01


def test_the_gyro_reads_with_the_models_scale() -> None:
    config = load_robot("foi-ugv")
    truth = dataclasses.replace(neutral("foi-ugv"), gyro_scale=0.05)
    sim = Simulator(config, open_floor(), seed=1, pose=(0, 0, 0), truth=truth)
    assert sim.gyro is not None
    assert sim.gyro.scale == 1.05


def test_the_hal_reports_the_described_laser_while_the_true_one_sits_elsewhere() -> None:
    config = load_robot("pioneer3dx")
    assert config.laser is not None
    truth = dataclasses.replace(neutral("pioneer3dx"), laser_yaw=math.radians(3.0))
    world = open_floor()
    sims = [Simulator(config, world, seed=1, pose=(0, 0, 0), truth=t) for t in (None, truth)]
    scans = []
    for sim in sims:
        hw = simulated_hardware(sim, camera=False)
        assert hw.laser is not None
        sim.run_for(0.1)
        scan = hw.laser.latest()
        assert scan is not None
        assert scan.origin_x[0] == config.laser.mount_forward  # the description's mount
        scans.append(scan)
    np.testing.assert_array_equal(scans[0].bearings, scans[1].bearings)
    # the same bearings, but the turned laser's beams hit the walls elsewhere
    assert np.abs(scans[0].ranges - scans[1].ranges).max() > 0.05


def test_bad_returns_come_at_the_models_rates() -> None:
    config = load_robot("pioneer3dx")
    assert config.laser is not None
    truth = dataclasses.replace(neutral("pioneer3dx"), outlier_rate=0.05, dropout_rate=0.1)
    world = open_floor(12.0)  # every beam returns from the walls
    exact = Simulator(config, world, seed=2, pose=(0, 0, 0))
    spoilt = Simulator(config, world, seed=2, pose=(0, 0, 0), truth=truth)
    dropped = short = total = 0
    for _ in range(50):
        for sim in (exact, spoilt):
            sim.run_for(1 / config.laser.rate_hz)
        a, b = exact.latest_laser, spoilt.latest_laser
        assert a is not None
        assert b is not None
        dropped += int((b.ranges == config.laser.range_max).sum())
        short += int((b.ranges < a.ranges - 0.1).sum())
        total += b.ranges.size
    assert dropped / total == pytest.approx(0.1, abs=0.02)
    assert short / total == pytest.approx(0.05 * 0.7, abs=0.02)  # most outliers are > 10 cm short


def test_the_program_is_told_its_description_and_the_believed_start() -> None:
    config = load_robot("foi-ugv")
    truth = load_error_model("foi-ugv").draw(5)
    pose = (0.0, 0.0, 0.0)
    robot = SimulatedRobot(
        config, open_floor(), seed=5, pose=pose, believed_pose=truth.believed(pose), truth=truth
    )
    assert robot.program.config is config
    assert robot.sim.truth is truth
    estimate = robot.core.estimator.pose
    assert (estimate.x, estimate.y, estimate.theta) == pytest.approx(truth.believed(pose))
    assert (estimate.x, estimate.y) != (0.0, 0.0)


def test_a_robot_that_differs_from_its_description_must_be_told_where_it_starts() -> None:
    config = load_robot("foi-ugv")
    truth = load_error_model("foi-ugv").draw(5)
    with pytest.raises(ValueError, match="believed_pose"):
        SimulatedRobot(config, open_floor(), seed=5, pose=(0.0, 0.0, 0.0), truth=truth)
