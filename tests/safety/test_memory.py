"""Obstacle memory and the zone rule: what the sensors saw stays where it was; 360° zones."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.geometry import Pose
from freelook.safety import ObstacleMemory, SafetyFilter

ROBOT = load_robot("pioneer3dx")


def test_a_point_seen_stays_where_it_was_as_the_robot_turns_away() -> None:
    memory = ObstacleMemory(seconds=10.0, reach=2.5)
    # a sonar echo 1 m ahead while the robot stands at (2, 3) facing +x
    memory.observe(np.zeros((0, 2)), np.array([[1.0, 0.0]]), Pose(2.0, 3.0, 0.0), 0.0)
    # the robot drives 0.5 m on and turns to face +y: the obstacle is now 0.5 m to its right
    local = memory.points(Pose(2.5, 3.0, math.pi / 2), 1.0)
    assert local == pytest.approx(np.array([[0.0, -0.5]]), abs=1e-9)


def test_points_age_out_and_stay_within_reach() -> None:
    memory = ObstacleMemory(seconds=2.0, reach=1.5)
    memory.observe(np.array([[1.0, 0.0]]), np.array([[0.0, 1.2]]), Pose(0.0, 0.0, 0.0), 0.0)
    assert len(memory.points(Pose(0.0, 0.0, 0.0), 1.9)) == 2
    assert len(memory.points(Pose(0.0, 0.0, 0.0), 2.1)) == 0
    memory.observe(np.array([[1.0, 0.0]]), np.zeros((0, 2)), Pose(0.0, 0.0, 0.0), 3.0)
    memory.observe(np.zeros((0, 2)), np.zeros((0, 2)), Pose(-2.0, 0.0, 0.0), 3.1)
    assert len(memory) == 0  # 3 m behind now: out of reach, forgotten


def test_one_point_per_cell_and_source() -> None:
    memory = ObstacleMemory(seconds=10.0, reach=3.0, cell=0.05)
    wall = np.column_stack((np.full(50, 1.0), np.linspace(-0.5, 0.5, 50)))
    for k in range(20):
        memory.observe(wall + 0.001 * k, np.zeros((0, 2)), Pose(0.0, 0.0, 0.0), 0.1 * k)
    assert len(memory) <= 2 * 21  # a 1 m wall on a 5 cm grid, not 20 sightings of 50 points


def test_the_laser_clears_what_it_now_sees_through_but_not_what_sonar_heard() -> None:
    memory = ObstacleMemory(seconds=10.0, reach=3.0)
    memory.observe(np.array([[1.0, 0.0]]), np.array([[1.0, 0.3]]), Pose(0.0, 0.0, 0.0), 0.0)
    bearings = np.linspace(-math.pi / 2, math.pi / 2, 181)
    ranges = np.full(181, 5.0)  # the laser sees 5 m of free space everywhere now
    memory.clear_seen_through(Pose(0.0, 0.0, 0.0), bearings, ranges, (0.0, 0.0))
    left = memory.points(Pose(0.0, 0.0, 0.0), 0.5)
    assert left == pytest.approx(np.array([[1.0, 0.3]]))  # the sonar's point stays


def test_points_in_the_lasers_view_are_left_to_the_laser() -> None:
    memory = ObstacleMemory(seconds=10.0, reach=3.0)
    memory.observe(np.zeros((0, 2)), np.array([[1.0, 0.0], [-1.0, 0.0]]), Pose(0, 0, 0), 0.0)
    seen = ((0.0, 0.0), -math.pi / 2, math.pi / 2)
    assert memory.points(Pose(0.0, 0.0, 0.0), 0.5, seen) == pytest.approx(np.array([[-1.0, 0.0]]))


@pytest.mark.parametrize(("rule", "zone"), [("nearest", 0), ("direction", -1)])
def test_a_point_behind_picks_the_zone_only_under_the_thesiss_rule(rule: str, zone: int) -> None:
    safety = ROBOT.safety.model_copy(update={"zone_rule": rule})
    f = SafetyFilter(safety, ROBOT.footprint, ROBOT.drive)
    f.command_received(0.0)
    behind = np.array([[-0.5, 0.0]])  # 0.5 m behind, inside the Min zone, driving forward
    d = f.filter(0.5, 0.0, behind, 0.0)
    assert d.zone == zone
    if zone == 0:
        assert d.v == pytest.approx(ROBOT.safety.zones[0].max_speed)
    else:
        assert d.v == pytest.approx(0.5)


def test_a_stale_point_deep_in_the_margin_licenses_no_approach_to_a_live_one() -> None:
    f = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive)
    f.command_received(0.0)
    wall_ahead = np.column_stack((np.full(40, 0.26), np.linspace(-0.3, 0.3, 40)))
    stale_beside = np.array([[-0.05, -0.22]])  # a remembered point inside the side margin
    alone = f.approach_scale(0.5, 0.0, wall_ahead)
    together = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive).approach_scale(
        0.5, 0.0, wall_ahead, stale_beside
    )
    assert together == pytest.approx(alone)
    assert together < 1.0
    mixed = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive).approach_scale(
        0.5, 0.0, np.vstack((wall_ahead, stale_beside))
    )
    assert mixed > together  # one group: the deep point would have let the robot closer


def test_a_sonar_that_now_hears_further_clears_what_its_cone_remembered() -> None:
    memory = ObstacleMemory(seconds=10.0, reach=3.0)
    # an echo 1.0 m ahead, remembered; the robot then drives 0.5 m on and that sonar now
    # hears 1.0 m again (the obstacle moved with it, or was never there): 0.5 m is empty
    memory.observe(np.zeros((0, 2)), np.array([[1.0, 0.0], [0.0, 1.0]]), Pose(0, 0, 0), 0.0)
    cone = (np.array([0.0]), np.array([0.0]), np.array([0.0]), np.array([1.0]))
    memory.clear_in_cones(Pose(0.5, 0.0, 0.0), cone, math.radians(7.5))
    left = memory.points(Pose(0.5, 0.0, 0.0), 0.5)
    assert left == pytest.approx(np.array([[-0.5, 1.0]]))  # outside the cone: kept
    # an echo at the remembered distance keeps it
    memory.observe(np.zeros((0, 2)), np.array([[1.0, 0.0]]), Pose(0, 0, 0), 1.0)
    cone = (np.array([0.0]), np.array([0.0]), np.array([0.0]), np.array([0.5]))
    memory.clear_in_cones(Pose(0.5, 0.0, 0.0), cone, math.radians(7.5))
    assert len(memory.points(Pose(0.5, 0.0, 0.0), 1.5)) == 2


def test_points_age_out_one_by_one_between_observations() -> None:
    memory = ObstacleMemory(seconds=1.0, reach=5.0)
    here = Pose(0.0, 0.0, 0.0)
    for k in range(5):  # a point a sample, 0.1 s apart, each in a cell of its own
        memory.observe(np.array([[1.0 + 0.2 * k, 0.0]]), np.zeros((0, 2)), here, 0.1 * k)
    stamps = memory._stamp.copy()
    for now in np.linspace(0.95, 1.45, 26):
        # exactly those younger than a second, however long since the last look at them
        expected = int((stamps > now - 1.0).sum())
        assert len(memory.points(here, float(now))) == expected
