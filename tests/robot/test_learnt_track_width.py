"""A skid-steer base's own odometry over-reports its turns; the estimator learns the effective
track width from the gyro while it turns, and while the gyro is quiet turns by it.

The simulator is a Husky (its body turns by the wheels' difference over 1.875 times their
separation, and skids sideways round an ICR off its axle); the base's own odometry is its
encoders integrated over the nominal separation, as ``freelook sim --ros2``'s base publishes it,
at 24 Hz; the gyro is the simulator's (bias, noise), and goes quiet for a stretch of turns as an
IMU whose driver restarts would."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.config import RobotConfig, load_robot
from freelook.estimation import Odometry
from freelook.hal import DriveCommand, GyroSample, OdometrySample, RobotHardware
from freelook.hardware.sim import simulated_hardware
from freelook.maps import World
from freelook.robot._estimator import StateEstimator
from freelook.sim import Simulator

CYCLE = 0.02  # s, the control cycle
ODOMETRY_HZ = 24.0


def open_floor(size: float = 20.0) -> World:
    res = 0.05
    n = round(size / res)
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    return World("floor", grid, res, (-size / 2, -size / 2))


def husky(learn: bool = True) -> RobotConfig:
    config = load_robot("husky")
    return config.model_copy(
        update={
            "slip": config.slip.model_copy(update={"icr_forward": 0.1, "noise": 0.02}),
            "estimation": config.estimation.model_copy(update={"learn_track_width": learn}),
        }
    )


class BaseOdometry:
    """The base's own odometry: its encoders integrated over its nominal wheel separation."""

    def __init__(self, sim: Simulator, hardware: RobotHardware) -> None:
        drive = sim.config.drive
        self._encoders = hardware.encoders
        self._odometry = Odometry(
            drive.encoder_counts_per_rev, drive.wheel_diameter, drive.track_width
        )
        self._half = drive.track_width / 2
        self.sample: OdometrySample | None = None

    def publish(self) -> None:
        assert self._encoders is not None
        enc = self._encoders.latest()
        if enc is None:
            return
        odometry = self._odometry
        odometry.advance_counts(enc.left, enc.right, enc.stamp)
        x, y, theta = odometry.pose
        half = odometry.omega * self._half
        self.sample = OdometrySample(enc.stamp, x, y, theta, odometry.v - half, odometry.v + half)

    def latest(self) -> OdometrySample | None:
        return self.sample


class QuietGyro:
    """The simulator's gyro, silent while ``quiet`` (its last sample stays the newest)."""

    def __init__(self, hardware: RobotHardware) -> None:
        self._gyro = hardware.gyro
        self.quiet = False
        self._held: GyroSample | None = None

    def latest(self) -> GyroSample | None:
        assert self._gyro is not None
        if not self.quiet:
            self._held = self._gyro.latest()
        return self._held


def point_turns(learn: bool, quiet_turns: range) -> tuple[float, float, StateEstimator]:
    """Eight 90° point turns to the left with pauses, the gyro quiet through ``quiet_turns``;
    returns the estimator's and the truth's turn (unwrapped, rad) and the estimator."""
    config = husky(learn)
    sim = Simulator(config, open_floor(), seed=5, pose=(0.0, 0.0, 0.0))
    hal = simulated_hardware(sim, camera=False)
    base, gyro = BaseOdometry(sim, hal), QuietGyro(hal)
    hardware = RobotHardware(drive=hal.drive, gyro=gyro, odometer=base)
    estimator = StateEstimator(
        config,
        hardware,
        None,
        start_pose=(0.0, 0.0, 0.0),
        use_gyro=True,
        use_localization=False,
        seed=0,
    )
    turned, previous, next_odometry = 0.0, 0.0, 0.0

    def cycle() -> None:
        nonlocal turned, previous, next_odometry
        sim.run_for(CYCLE)
        if sim.now >= next_odometry - 1e-9:
            next_odometry += 1.0 / ODOMETRY_HZ
            base.publish()
        estimator.update()
        theta = estimator.odometry.pose[2]
        turned += math.remainder(theta - previous, math.tau)
        previous = theta

    for _ in range(25):  # standing: the filter settles
        cycle()
    for i in range(8):
        gyro.quiet = i in quiet_turns
        target = (i + 1) * math.pi / 2
        hal.drive.command(DriveCommand.of_wheels(-0.4, 0.4, config.drive.d_eff))
        while sim.vehicle.rotation < target - 0.01:
            cycle()
        hal.drive.command(DriveCommand.of_wheels(0.0, 0.0, config.drive.d_eff))
        for _ in range(25):
            cycle()
    gyro.quiet = False
    for _ in range(25):
        cycle()
    return turned, sim.vehicle.rotation, estimator


def test_the_learnt_width_is_the_simulated_huskys_own() -> None:
    # the simulated Husky turns by the wheels' difference over 1.875 × 0.555 = 1.041 m
    _, _, estimator = point_turns(learn=True, quiet_turns=range(0))
    assert estimator.track_width is not None
    assert estimator.track_width.windows >= 8
    assert estimator.effective_track_width == pytest.approx(1.041, rel=0.05)


def test_the_heading_through_point_turns_without_the_gyro_follows_the_learnt_width() -> None:
    # four turns with the gyro (learning), four while it is quiet: the base's own odometry
    # turns the robot, by the learnt width or, unlearnt, as the base says
    learnt, truth, _ = point_turns(learn=True, quiet_turns=range(4, 8))
    unlearnt, truth_unlearnt, _ = point_turns(learn=False, quiet_turns=range(4, 8))
    error = abs(learnt - truth)
    error_unlearnt = abs(unlearnt - truth_unlearnt)
    print(
        f"after 8 × 90°: heading error {math.degrees(error):.1f}° learnt, "
        f"{math.degrees(error_unlearnt):.1f}° as the base says"
    )
    assert truth == pytest.approx(4 * math.pi, abs=0.3)  # each turn stops a little late
    assert error_unlearnt > math.radians(100)  # 1.875 × the four quiet turns' 360°
    assert error < math.radians(15)
    assert error < error_unlearnt / 10


def test_with_the_gyro_there_throughout_the_heading_is_the_gyros() -> None:
    learnt, truth, _ = point_turns(learn=True, quiet_turns=range(0))
    unlearnt, truth_unlearnt, _ = point_turns(learn=False, quiet_turns=range(0))
    # within the simulated gyro's own error (its scale and bias): 2 % of the turn
    assert abs(learnt - truth) < 0.02 * truth
    assert abs(unlearnt - truth_unlearnt) < 0.02 * truth_unlearnt
