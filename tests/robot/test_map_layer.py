"""The map layer's wall points lie on the map's walls, where a ray from the robot meets them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.geometry import Pose
from freelook.maps import load_world
from freelook.robot._map_layer import MapLayer


@pytest.mark.parametrize("pose", [Pose(3.0, 3.0, 0.3), Pose(9.2, 6.0, -2.0), Pose(15.0, 11.0, 3.1)])
def test_wall_points_lie_where_each_ray_first_meets_a_wall(pose: Pose) -> None:
    world = load_world("lab")
    grid = world.obstacles()
    layer = MapLayer(world, reach=4.0)
    points = layer.wall_points(pose)
    assert len(points) > 10
    c, s = math.cos(pose.theta), math.sin(pose.theta)
    for px, py in points:
        distance = math.hypot(px, py)
        assert distance < 4.0
        # in the map frame, a step on along the ray is inside a wall, and the way there is free
        dx, dy = (c * px - s * py) / distance, (s * px + c * py) / distance
        x, y = pose.x + c * px - s * py, pose.y + s * px + c * py
        assert grid[world.cell_of(x + 0.02 * dx, y + 0.02 * dy)]
        for share in np.linspace(0.0, 1.0, 20, endpoint=False):
            back = share * (distance - 0.06)
            assert not grid[world.cell_of(pose.x + back * dx, pose.y + back * dy)]
