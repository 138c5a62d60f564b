"""A world that differs from the robot's map: unmapped objects, glass, a map file off."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot, published_map
from freelook.maps import MapDifferences, WorldObject, lab_on_the_day, load_world
from freelook.sim import Simulator


def _pane(x: float, y: float) -> WorldObject:
    return WorldObject("pane", "box", x, y, 2.0, (200, 220, 230), size_x=0.05, size_y=2.0)


def test_the_laser_sees_through_glass_the_sonar_hears_it_and_the_robot_stops_at_it() -> None:
    config = load_robot("pioneer3dx")
    lab = load_world("lab")
    pose = (3.0, 6.0, 0.0)  # the pane 1.5 m ahead, across the robot's way
    glass = MapDifferences(glass=(_pane(4.5, 6.0),))
    sims = [Simulator(config, lab, seed=1, pose=pose, differences=d) for d in (None, glass)]
    for sim in sims:
        sim.run_for(0.5)
    clear, glazed = sims
    assert clear.latest_laser is not None
    assert glazed.latest_laser is not None
    ahead = len(clear.latest_laser.ranges) // 2
    # the laser's beam ahead goes through: it reads what it reads with no pane there
    assert glazed.latest_laser.ranges[ahead] == pytest.approx(
        clear.latest_laser.ranges[ahead], abs=0.05
    )
    assert glazed.latest_laser.ranges[ahead] > 2.0
    assert clear.latest_sonar is not None
    assert glazed.latest_sonar is not None
    front = int(np.argmin(np.abs(glazed.sonar.bearings))) if glazed.sonar else 0
    assert glazed.latest_sonar.ranges[front] < 1.6 < clear.latest_sonar.ranges[front]
    glazed.set_wheel_speeds(0.5, 0.5)
    glazed.run_for(5.0)
    assert glazed.vehicle.contacts > 0
    assert glazed.vehicle.x < 4.5  # it did not pass


def test_unmapped_objects_stand_in_the_world_and_not_on_the_robots_map() -> None:
    config = load_robot("pioneer3dx")
    lab = load_world("lab")
    day = lab_on_the_day()
    robot = SimulatedRobot(config, lab, seed=1, pose=(3.0, 3.0, 0.0), differences=day)
    chair = day.unmapped[0]
    assert robot.map is not None
    cell = robot.sim.world.cell_of(chair.x, chair.y)
    assert robot.sim.world.obstacles()[cell]
    row, col = robot.map.cell_of(chair.x, chair.y)
    assert not robot.map.obstacles()[row, col]
    assert "glass partition" in day.describe()
    assert "chair" in day.describe()


def test_the_robots_map_file_sits_where_the_survey_put_it() -> None:
    lab = load_world("lab")
    published = published_map(lab)
    assert published is not None
    off = MapDifferences(offset=(0.03, -0.02))
    moved = off.robot_map(published)
    assert moved.origin == pytest.approx((published.origin[0] + 0.03, published.origin[1] - 0.02))
    assert moved.start[:2] == pytest.approx((published.start[0] + 0.03, published.start[1] - 0.02))
    np.testing.assert_array_equal(moved.obstacles(), published.obstacles())
    robot = SimulatedRobot(load_robot("pioneer3dx"), lab, seed=1, differences=off)
    assert robot.map is not None
    assert robot.map.origin == moved.origin
    assert MapDifferences().none
    assert not off.none
    assert math.isclose(moved.resolution, published.resolution)


def test_a_world_and_its_differences_make_one_world_for_every_trial_in_it() -> None:
    """A run of trials in one lab rasterises the day's world once: the same map and the same
    differences give the same world (its grid already cast), another difference another."""
    lab = load_world("lab")
    day = lab_on_the_day()
    world = day.world(lab)
    grid = world.obstacles()
    assert day.world(lab) is world
    assert day.world(lab).obstacles() is grid
    assert day.laser_world(lab) is day.laser_world(lab)
    assert day.robot_map(lab) is day.robot_map(lab)
    assert day.laser_world(lab) is not world  # without its glass
    other = MapDifferences(glass=(_pane(4.5, 6.0),))
    assert other.world(lab) is not world
    assert other.world(lab).objects == lab.objects + other.glass
    # another world of the same map is another world: its own differences, its own grid
    again = load_world("lab")
    assert day.world(again) is not world
    assert np.array_equal(day.world(again).obstacles(), grid)
