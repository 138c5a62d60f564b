"""The robot's own localization (a ROS robot's AMCL) as the estimator's pose: taken where its
scan held and carried to now by odometry, and not trusted before the first, while its spread is
large, or once the robot drove or turned far without a new one (it went quiet)."""

from __future__ import annotations

import math

import pytest

from freelook.config import load_robot
from freelook.hal import LatestReading, OdometrySample, PoseSample, RobotHardware
from freelook.robot._estimator import StateEstimator


class _Robot:
    """A base's odometry and its localization's pose, set by the test, and the estimator."""

    def __init__(self) -> None:
        self.odometry: OdometrySample | None = None
        self.pose: PoseSample | None = None
        hardware = RobotHardware(
            drive=None,  # type: ignore[arg-type]
            odometer=LatestReading(lambda: self.odometry),
            localization=LatestReading(lambda: self.pose),
        )
        self.config = load_robot("pioneer3dx")
        self.estimator = StateEstimator(
            self.config,
            hardware,
            None,
            start_pose=(0.0, 0.0, 0.0),
            use_gyro=False,
            use_localization=True,
            seed=0,
        )
        self.t = 0.0

    def drive(self, seconds: float, v: float, omega: float = 0.0) -> None:
        """Odometry of (v, ω) for ``seconds``, at 50 Hz, the estimator updated each cycle."""
        x, y, theta = (0.0, 0.0, 0.0) if self.odometry is None else self.odometry[1:4]
        for _ in range(round(seconds / 0.02)):
            self.t += 0.02
            theta += omega * 0.02
            x += v * math.cos(theta) * 0.02
            y += v * math.sin(theta) * 0.02
            self.odometry = OdometrySample(self.t, x, y, theta, v, v)
            self.estimator.update()


def test_the_pose_is_untrusted_until_the_first_and_then_carried_from_its_time() -> None:
    robot = _Robot()
    robot.drive(0.2, 0.0)
    assert not robot.estimator.pose_trusted
    assert robot.estimator.pose_doubt == "no pose yet"
    robot.drive(1.0, 0.5)  # 0.5 m along x by odometry
    # AMCL's pose of 0.5 s ago (the map frame 10 m off the odometry's), carried to now
    held = robot.t - 0.5
    robot.pose = PoseSample(held, 10.25, 3.0, 0.0, 0.05, 0.02)
    robot.estimator.update()
    assert robot.estimator.pose_trusted
    x, y, theta = robot.estimator.pose
    assert (x, y, theta) == pytest.approx((10.5, 3.0, 0.0), abs=0.011)
    # between two of its poses, odometry carries it
    robot.drive(1.0, 0.5)
    assert robot.estimator.pose.x == pytest.approx(11.0, abs=0.02)
    assert robot.estimator.pose_trusted


def test_a_spread_pose_is_not_trusted_and_not_taken() -> None:
    robot = _Robot()
    robot.drive(0.1, 0.0)
    robot.pose = PoseSample(robot.t, 2.0, 1.0, 0.5, 0.02, 0.01)
    robot.drive(0.1, 0.0)
    assert robot.estimator.pose_trusted
    wide = robot.config.ros2.pose_std_xy * 1.5
    robot.pose = PoseSample(robot.t, 7.0, 7.0, 0.0, wide, 0.01)
    robot.drive(0.1, 0.0)
    assert not robot.estimator.pose_trusted
    assert "spread" in robot.estimator.pose_doubt
    assert robot.estimator.pose.x == pytest.approx(2.0, abs=1e-6)  # the wide one not taken
    turned = math.radians(robot.config.ros2.pose_std_theta_deg) * 1.5
    robot.pose = PoseSample(robot.t, 2.0, 1.0, 0.5, 0.02, turned)
    robot.drive(0.1, 0.0)
    assert not robot.estimator.pose_trusted
    robot.pose = PoseSample(robot.t, 2.0, 1.0, 0.5, 0.02, 0.01)  # narrow again: trusted
    robot.drive(0.1, 0.0)
    assert robot.estimator.pose_trusted


@pytest.mark.parametrize("turning", [False, True], ids=["driving", "turning in place"])
def test_a_pose_gone_quiet_is_trusted_standing_still_but_not_once_the_robot_moved_on(
    turning: bool,
) -> None:
    robot = _Robot()
    robot.drive(0.1, 0.0)
    robot.pose = PoseSample(robot.t, 0.0, 0.0, 0.0, 0.02, 0.01)
    robot.drive(0.1, 0.0)
    robot.drive(60.0, 0.0)  # a minute standing still: AMCL publishes nothing, rightly
    assert robot.estimator.pose_trusted
    limits = robot.config.ros2
    v, omega = (0.0, 0.5) if turning else (0.5, 0.0)
    # just within the limit: still trusted; then beyond it
    seconds = (math.radians(limits.pose_turn_deg) / 0.5) if turning else limits.pose_travel / 0.5
    robot.drive(seconds * 0.9, v, omega)
    assert robot.estimator.pose_trusted
    robot.drive(seconds * 0.2, v, omega)
    assert not robot.estimator.pose_trusted
    assert "went quiet" in robot.estimator.pose_doubt
