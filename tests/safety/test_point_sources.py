"""The obstacle points safety judges by: what the range sensors read now is live; what the
memory keeps and the map's walls and keep-outs (only while the pose is trusted) are prior, each
source there only when the robot has it."""

from __future__ import annotations

import math

import numpy as np

from freelook.config import RobotConfig, load_robot
from freelook.geometry import Pose
from freelook.hal import RangeScan
from freelook.maps import load_world
from freelook.safety import MapLayer, PointSources

ROBOT = load_robot("pioneer3dx")
assert ROBOT.sonar is not None
HALF = math.radians(ROBOT.sonar.cone_deg) / 2


def _config(memory: float) -> RobotConfig:
    safety = ROBOT.safety.model_copy(update={"obstacle_memory": memory})
    return ROBOT.model_copy(update={"safety": safety})


def _laser(stamp: float, ranges: list[float]) -> RangeScan:
    """A laser 0.1 m ahead of the centre, its beams evenly over ±90°."""
    n = len(ranges)
    bearings = np.linspace(-math.pi / 2, math.pi / 2, n)
    return RangeScan(stamp, np.array(ranges), bearings, np.full(n, 0.1), np.zeros(n), 30.0)


def _sonar(stamp: float, echo: float) -> RangeScan:
    """A ring of eight sonars 0.2 m out, the one looking straight ahead hearing ``echo``."""
    bearings = np.linspace(-math.pi, math.pi, 8, endpoint=False)
    ranges = np.where(np.isclose(bearings, 0.0), echo, 5.0)
    return RangeScan(stamp, ranges, bearings, 0.2 * np.cos(bearings), 0.2 * np.sin(bearings), 5.0)


def test_the_sensors_readings_are_live_and_nothing_is_prior_without_memory_or_map() -> None:
    sources = PointSources(_config(0.0), None)
    laser = _laser(0.0, [30.0, 2.0, 30.0, 1.5, 30.0])
    live, prior = sources.points(laser, _sonar(0.0, 1.0), 0.0, (0.0, 0.0, 0.0), Pose(3, 3, 0))
    assert prior.shape == (0, 2)
    assert np.array_equal(live[:2], laser.points())  # the laser's two hits first
    # the sonar's one echo spread over its cone, two noise deviations nearer than read (the
    # approach check's allowance), from the transducer it came from
    cone = live[2:]
    assert len(cone) == 5
    assert ROBOT.sonar is not None
    near = 1.0 - 2.0 * ROBOT.sonar.noise_std
    assert np.allclose(np.hypot(cone[:, 0] - 0.2, cone[:, 1]), near)
    assert np.allclose(np.abs(np.arctan2(cone[:, 1], cone[:, 0] - 0.2)).max(), HALF)


def test_the_map_adds_its_walls_and_keep_outs_only_around_a_trusted_pose() -> None:
    world = load_world("lab")
    sources = PointSources(_config(0.0), world)
    _, blind = sources.points(None, None, 0.0, (0.0, 0.0, 0.0), None)
    assert blind.shape == (0, 2)
    pose = Pose(3.0, 3.0, 0.3)
    _, prior = sources.points(None, None, 0.0, (0.0, 0.0, 0.0), pose)
    layer = MapLayer(world, ROBOT.localization.map_range)
    walls = layer.unseen_walls(pose, None, None, HALF)
    assert len(walls) > 0
    assert np.array_equal(prior, np.concatenate((walls, layer.keep_out_points(pose))))


def test_what_the_laser_saw_is_prior_once_it_no_longer_reads_it_until_the_memory_forgets() -> None:
    sources = PointSources(_config(10.0), None)
    sources.points(_laser(0.0, [30.0, 30.0, 1.0, 30.0, 30.0]), None, 0.0, (0.0, 0.0, 0.0), None)
    live, prior = sources.points(None, None, 0.5, (0.0, 0.0, 0.0), None)
    assert live.shape == (0, 2)
    assert len(prior) >= 1
    assert np.hypot(prior[:, 0] - 1.1, prior[:, 1]).min() < 0.05
    _, forgotten = sources.points(None, None, 10.6, (0.0, 0.0, 0.0), None)
    assert forgotten.shape == (0, 2)
