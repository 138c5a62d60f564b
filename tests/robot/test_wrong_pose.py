"""A robot whose localization tracks a wrong pose (a wrong start) notices the lasting misfit
between its scans and the map, searches the whole map and finds itself, even standing still;
meanwhile the map walls its sensors see through never hold it. A robot on its true pose never
starts a search."""

from __future__ import annotations

import math

import numpy as np

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot, published_map
from freelook.maps import load_world

CONFIG = load_robot("pioneer3dx")
WORLD = load_world("lab")
TRUE_POSE = (9.36, 5.75, -0.14)  # in the hall, clear of walls
WRONG_POSE = (11.98, 12.18, 2.95)  # beside a wall in another room


def _robot(believed: tuple[float, float, float]) -> SimulatedRobot:
    return SimulatedRobot(
        CONFIG,
        WORLD,
        seed=32,
        pose=TRUE_POSE,
        believed_pose=believed,
        use_localization=True,
        robot_map=published_map(WORLD),
    )


def _error(robot: SimulatedRobot) -> float:
    truth = robot.sim.ground_truth
    x, y, _ = robot.core.estimator.pose
    return math.hypot(x - truth.x, y - truth.y)


def test_a_wrong_pose_is_noticed_and_the_robot_finds_itself_standing_still() -> None:
    robot = _robot(WRONG_POSE)
    robot.run_for(0.5)
    assert _error(robot) > 5.0
    searched = False
    for _ in range(120):
        robot.run_for(0.25)
        searched |= not robot.core.estimator.pose_trusted
        if searched and robot.core.estimator.pose_trusted and _error(robot) < 0.2:
            break
    assert searched, "the misfit never started a search"
    assert robot.core.estimator.pose_trusted
    assert _error(robot) < 0.2


def test_map_walls_the_sensors_see_through_are_not_obstacles() -> None:
    robot = _robot(WRONG_POSE)
    robot.run_for(0.3)
    assert robot.core.estimator.pose_trusted  # not yet noticed
    live, prior = robot.core.control.range_points()
    layer = robot.core.map_layer
    assert layer is not None
    phantom = layer.wall_points(robot.core.estimator.pose)
    laser = robot.core.hw.laser
    assert laser is not None
    scan = laser.latest()
    assert scan is not None
    # the wrong pose puts walls close by: those the laser reaches past are dropped
    ox, oy = float(scan.origin_x[0]), float(scan.origin_y[0])
    beam = np.abs(
        np.arctan2(phantom[:, 1] - oy, phantom[:, 0] - ox)[:, None] - scan.bearings[None, :]
    ).argmin(axis=1)
    in_view = (np.arctan2(phantom[:, 1] - oy, phantom[:, 0] - ox) > scan.bearings[0]) & (
        np.arctan2(phantom[:, 1] - oy, phantom[:, 0] - ox) < scan.bearings[-1]
    )
    passed = in_view & (scan.ranges[beam] > np.hypot(phantom[:, 0] - ox, phantom[:, 1] - oy) + 0.2)
    assert passed.sum() > 10
    kept = {tuple(np.round(p, 9)) for p in prior}
    assert not any(tuple(np.round(p, 9)) in kept for p in phantom[passed])
    assert np.hypot(*live.T).min() > 0.5


def test_a_robot_on_its_true_pose_never_starts_a_search() -> None:
    robot = _robot(TRUE_POSE)
    for _ in range(40):
        robot.run_for(0.25)
        assert robot.core.estimator.pose_trusted
    assert _error(robot) < 0.1
