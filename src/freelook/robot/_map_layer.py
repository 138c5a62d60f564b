"""The robot's map as a safety layer (a static costmap layer, in the manner of Nav2's).

The map the robot was given (a file, as on a real robot) is ray cast from the localized pose
into range points around the robot: it covers what the sonar cones miss behind and beside it.
The layer acts only while the pose is trusted; a wrong pose would put phantom walls around the
robot, so during a global search safety runs on the range sensors alone.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.geometry import Pose
from freelook.maps import World, cast_rays

__all__ = ["MapLayer"]


class MapLayer:
    """Obstacle points (robot frame) from a map around a pose."""

    def __init__(self, robot_map: World, reach: float, rays: int = 120) -> None:
        self.map = robot_map
        self.reach = reach
        self._grid = robot_map.obstacles()
        self._angles = np.linspace(-math.pi, math.pi, rays, endpoint=False)

    def points(self, pose: Pose) -> npt.NDArray[np.float64]:
        """The map's obstacles within ``reach`` of ``pose``, as points in the robot frame."""
        x, y, theta = pose
        ranges = cast_rays(
            self._grid,
            self.map.origin,
            self.map.resolution,
            x,
            y,
            theta + self._angles,
            self.reach,
        )
        hit = ranges < self.reach
        local = self._angles[hit]
        return np.column_stack((ranges[hit] * np.cos(local), ranges[hit] * np.sin(local)))
