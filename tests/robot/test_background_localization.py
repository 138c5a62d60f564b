"""Localization off the control path: control cycles go on while the particle filter works."""

from __future__ import annotations

import math
import threading
from dataclasses import replace

import pytest

from freelook.config import load_robot
from freelook.estimation import PoseEstimate
from freelook.link import VelocityCommand
from freelook.robot import SimulatedRobot
from freelook.robot._core import LocalizationJob, LocalizationResult
from freelook.sim.world import load_world


def test_control_goes_on_while_the_filter_is_busy_and_its_result_lands_after() -> None:
    robot = SimulatedRobot(
        load_robot("pioneer3dx"),
        load_world("lab"),
        seed=4,
        pose=(3.0, 3.0, 0.0),
        background_localization=True,
    )
    release = threading.Event()
    started = threading.Event()
    localize = robot.core.localize

    def slow_localize(job: LocalizationJob) -> LocalizationResult | None:
        started.set()
        assert release.wait(10.0)
        return localize(job)

    robot.core.localize = slow_localize  # type: ignore[method-assign]
    try:
        robot.core.global_localization()
        for _ in range(20):  # 1 s of driving while the search's first job hangs
            robot.send(VelocityCommand(0.2, 0.0))
            robot.run_for(0.05)
        assert started.wait(5.0)
        assert robot.sim.ground_truth.x > 3.1  # the control cycle kept driving
        assert robot.skipped_scans > 50  # 75 Hz scans waited for the busy filter
        assert not robot.core.pose_trusted
        release.set()
        for _ in range(200):  # scans resume; the search settles
            robot.send(VelocityCommand(0.0, 0.3))
            robot.run_for(0.05)
            robot.wait_for_localization(10.0)
            if robot.core.pose_trusted:
                break
    finally:
        release.set()
        robot.close()
    truth = robot.sim.ground_truth
    x, y, theta = robot.core.pose
    assert robot.core.pose_trusted
    assert math.hypot(truth.x - x, truth.y - y) < 0.1
    assert abs(math.remainder(truth.theta - theta, math.tau)) < math.radians(3)


@pytest.mark.parametrize("moved", [0.0, 0.5])
def test_a_late_result_carries_the_motion_since_its_scan(moved: float) -> None:
    robot = SimulatedRobot(load_robot("pioneer3dx"), load_world("lab"), pose=(3.0, 3.0, 0.0))
    robot.run_for(0.1)
    job = robot.core.localization_job(robot.now())
    assert job is not None
    # the scan was taken at (3, 3) heading east; since then odometry moved the robot forward
    core = robot.core
    core.pose = (3.0 + moved, 3.0, 0.0)
    estimate = PoseEstimate(4.0, 5.0, math.pi / 2, std_xy=0.01, std_theta=0.01)
    core.apply_localization(
        LocalizationResult(replace(job, pose=(3.0, 3.0, 0.0)), estimate, searching=False)
    )
    # the estimate says the scan was taken at (4, 5) heading north: the robot is now `moved`
    # metres north of that
    assert core.pose == pytest.approx((4.0, 5.0 + moved, math.pi / 2), abs=1e-9)
    assert core.heading is not None
    assert core.heading.heading == pytest.approx(math.pi / 2, abs=1e-6)
