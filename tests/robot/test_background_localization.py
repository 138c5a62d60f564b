"""Localization off the control path: control cycles go on while the particle filter works."""

from __future__ import annotations

import math
import threading

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.estimation import PoseEstimate
from freelook.geometry import Pose
from freelook.hardware.sim import SimulatedRobot
from freelook.link import VelocityCommand
from freelook.maps import load_world
from freelook.robot import LocalizationJob, LocalizationResult


def _background_robot(seed: int) -> SimulatedRobot:
    """A robot at (3, 3) facing east in ``lab``, its filter on a worker thread."""
    return SimulatedRobot(
        load_robot("pioneer3dx"),
        load_world("lab"),
        seed=seed,
        pose=(3.0, 3.0, 0.0),
        background_localization=True,
    )


def test_control_goes_on_while_the_filter_is_busy_and_its_result_lands_after() -> None:
    robot = _background_robot(seed=4)
    release = threading.Event()
    started = threading.Event()
    localize = robot.core.estimator.localize

    def slow_localize(job: LocalizationJob) -> LocalizationResult | None:
        started.set()
        assert release.wait(10.0)
        return localize(job)

    robot.core.estimator.localize = slow_localize  # type: ignore[method-assign]
    try:
        robot.core.estimator.global_localization()
        for _ in range(20):  # 1 s of driving while the search's first job hangs
            robot.send(VelocityCommand(0.2, 0.0))
            robot.run_for(0.05)
        assert started.wait(5.0)
        assert robot.sim.ground_truth.x > 3.1  # the control cycle kept driving
        # every control cycle (50 Hz) but the first found a new scan (75 Hz) the busy filter
        # could not take
        assert robot.skipped_scans >= 45
        assert not robot.core.estimator.pose_trusted
        release.set()
        for _ in range(200):  # scans resume; the search settles
            robot.send(VelocityCommand(0.0, 0.3))
            robot.run_for(0.05)
            robot.wait_for_localization(10.0)
            if robot.core.estimator.pose_trusted:
                break
    finally:
        release.set()
        robot.close()
    truth = robot.sim.ground_truth
    x, y, theta = robot.core.estimator.pose
    assert robot.core.estimator.pose_trusted
    assert math.hypot(truth.x - x, truth.y - y) < 0.1
    assert abs(math.remainder(truth.theta - theta, math.tau)) < math.radians(3)


@pytest.mark.parametrize("moved", [0.0, 0.5])
def test_a_late_result_carries_the_motion_since_its_scan(moved: float) -> None:
    robot = SimulatedRobot(load_robot("pioneer3dx"), load_world("lab"), pose=(3.0, 3.0, 0.0))
    robot.run_for(0.1)
    job = LocalizationJob(np.zeros(181), (0.0, 0.0, 0.0), False, False, (3.0, 3.0, 0.0), 0.1)
    # the scan was taken at (3, 3) heading east; since then odometry moved the robot forward
    core = robot.core
    core.estimator.pose = Pose(3.0 + moved, 3.0, 0.0)
    estimate = PoseEstimate(4.0, 5.0, math.pi / 2, std_xy=0.01, std_theta=0.01)
    core.estimator.apply_localization(LocalizationResult(job, estimate, searching=False))
    # the estimate says the scan was taken at (4, 5) heading north: the robot is now `moved`
    # metres north of that
    assert core.estimator.pose == pytest.approx((4.0, 5.0 + moved, math.pi / 2), abs=1e-9)
    assert core.estimator.heading is not None
    assert core.estimator.heading.heading == pytest.approx(math.pi / 2, abs=1e-6)


def test_each_scan_is_paired_with_the_odometry_of_its_time() -> None:
    # scans come at 75 Hz and control cycles at 50 Hz: a scan taken between two cycles used to
    # be paired with the odometry of the cycle before it, up to 20 ms of turning off
    robot = _background_robot(seed=5)
    truth_at_scan: dict[float, float] = {}
    robot.sim.on_laser.append(
        lambda stamp: truth_at_scan.__setitem__(stamp, robot.sim.ground_truth.theta)
    )
    jobs: list[LocalizationJob] = []
    localize = robot.core.estimator.localize

    def recording(job: LocalizationJob) -> LocalizationResult | None:
        jobs.append(job)
        return localize(job)

    robot.core.estimator.localize = recording  # type: ignore[method-assign]
    try:
        for _ in range(60):
            robot.send(VelocityCommand(0.0, 1.0))
            robot.run_for(0.05)
            robot.wait_for_localization(10.0)
    finally:
        robot.close()
    turning = [job for job in jobs if job.stamp > 1.0]  # at full turn rate
    assert len(turning) > 20

    # the job's pose is the pose at the scan's time, whether the scan came just before the
    # control cycle or 7 ms before it (paired with the cycle's odometry it was 0.3° ahead)
    def error(job: LocalizationJob) -> float:
        truth = truth_at_scan[job.scan_stamp]
        return math.degrees(math.remainder(job.pose[2] - truth, math.tau))

    late = [error(job) for job in turning if job.stamp - job.scan_stamp > 0.005]
    prompt = [error(job) for job in turning if job.stamp - job.scan_stamp < 0.001]
    assert len(late) > 10
    assert len(prompt) > 10
    assert abs(np.mean(late) - np.mean(prompt)) < 0.15
