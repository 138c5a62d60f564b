"""The robot's map as a safety layer (a static costmap layer, in the manner of Nav2's).

The map the robot was given (a file, as on a real robot) is ray cast from the localized pose
into range points around the robot: it covers what the sonar cones miss behind and beside it.
The map's keep-out lines and areas join them as points along their outlines, so the safety
layer slows and stops the robot before it enters one, as before a wall (ARNL treats its
forbidden lines and areas so). An area the robot already stands in is left out: the robot may
always drive out of it.

The layer acts only while the pose is trusted; a wrong pose would put phantom walls around the
robot, so during a global search safety runs on the range sensors alone. Even a trusted pose
may be wrong, so the robot drops the map's walls that its sensors see through (see
``RobotCore.range_points``); keep-out outlines are not physical and stay.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.geometry import Pose
from freelook.maps import World, cast_fan, clearance_of, unit_vectors

__all__ = ["MapLayer"]


class MapLayer:
    """Obstacle points (robot frame) from a map around a pose: walls and keep-out outlines."""

    def __init__(
        self, robot_map: World, reach: float, rays: int = 120, spacing: float = 0.05
    ) -> None:
        self.map = robot_map
        self.reach = reach
        self._clearance = clearance_of(robot_map.obstacles())
        self._world = (robot_map.origin[0], robot_map.origin[1], robot_map.resolution)
        angles = np.linspace(-math.pi, math.pi, rays, endpoint=False)
        # each ray's direction in the robot frame, worked out once (the rays never turn in it)
        self._units = unit_vectors(angles)
        self._ranges = np.empty(rays)
        self.wall_points(Pose(*robot_map.origin, 0.0))  # compiled now, not in the first cycle
        outlines: list[npt.NDArray[np.float64]] = []
        owners: list[npt.NDArray[np.int64]] = []
        for index, area in enumerate(robot_map.keep_out):
            for x1, y1, x2, y2 in area.segments():
                steps = max(1, math.ceil(math.hypot(x2 - x1, y2 - y1) / spacing))
                t = np.linspace(0.0, 1.0, steps + 1)
                outlines.append(np.column_stack((x1 + t * (x2 - x1), y1 + t * (y2 - y1))))
                owners.append(np.full(steps + 1, index))
        self._outline = np.vstack(outlines) if outlines else np.zeros((0, 2))
        self._owner = np.concatenate(owners) if owners else np.zeros(0, dtype=np.int64)

    def points(self, pose: Pose) -> npt.NDArray[np.float64]:
        """The map's obstacles within ``reach`` of ``pose``, as points in the robot frame."""
        walls = self.wall_points(pose)
        keep_out = self.keep_out_points(pose)
        return np.vstack((walls, keep_out)) if len(keep_out) else walls

    def wall_points(self, pose: Pose) -> npt.NDArray[np.float64]:
        """The map's walls within ``reach`` of ``pose`` (robot frame), one point per ray.

        The rays are cast by :func:`~freelook.maps.cast_fan` itself, the one compiled cast the
        simulated laser runs too (each kernel holding a cast of its own costs the process
        about half a megabyte)."""
        x, y, theta = pose
        ox, oy, resolution = self._world
        reach = float(self.reach)
        ranges = self._ranges
        cast_fan(
            self._clearance,
            ox,
            oy,
            resolution,
            float(x),
            float(y),
            float(theta),
            self._units,
            reach,
            ranges,
        )
        hits = ranges < reach
        points: npt.NDArray[np.float64] = ranges[hits, np.newaxis] * self._units[hits]
        return points

    def keep_out_points(self, pose: Pose) -> npt.NDArray[np.float64]:
        """Points along the keep-out outlines within ``reach`` of ``pose`` (robot frame), but
        none of an area ``pose`` stands in."""
        if len(self._outline) == 0:
            return self._outline
        x, y, theta = pose
        dx = self._outline[:, 0] - x
        dy = self._outline[:, 1] - y
        near = dx * dx + dy * dy <= self.reach * self.reach
        for index, area in enumerate(self.map.keep_out):
            if area.contains(x, y):
                near &= self._owner != index
        c, s = math.cos(theta), math.sin(theta)
        return np.column_stack((c * dx[near] + s * dy[near], -s * dx[near] + c * dy[near]))
