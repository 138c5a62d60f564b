"""The obstacle points safety judges by, from each of its sources once a cycle.

The sources are the range sensors (a laser's hits, a sonar's cones and the gaps between them),
the obstacle memory (what was seen where the sensors no longer look) and the map layer (the
walls and keep-outs of the robot's map around its localized pose). What the sensors see now is
``live``; what is remembered or drawn is ``prior``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import RobotConfig
from freelook.geometry import Pose
from freelook.hal import RangeScan
from freelook.maps import World
from freelook.safety._map_layer import MapLayer
from freelook.safety._memory import ObstacleMemory
from freelook.safety._scan_points import ScanPoints

__all__ = ["PointSources", "RangePoints"]


class RangePoints(NamedTuple):
    """Obstacle points in the robot frame, N×2 each."""

    live: npt.NDArray[np.float64]  # what the range sensors see now
    prior: npt.NDArray[np.float64]  # what is remembered, and the map's walls and keep-outs


class PointSources:
    """One robot's sources of obstacle points, as its configuration and map give them."""

    def __init__(self, config: RobotConfig, robot_map: World | None) -> None:
        #: the map's walls and keep-outs (None: no map); replaced when the robot's map is
        self.map_layer = (
            MapLayer(robot_map, config.localization.map_range) if robot_map is not None else None
        )
        #: range readings remembered where they were seen (None: off)
        self.memory = (
            ObstacleMemory(config.safety.obstacle_memory, config.localization.map_range)
            if config.safety.obstacle_memory > 0
            else None
        )
        self._scan_points = ScanPoints()  # each reading's points, once
        sonar, approach = config.sonar, config.safety.approach_check
        #: how the sonar's echoes become points: its half cone; with the approach check, the
        #: footprint whose impassable gaps between cones are closed, and how much nearer than
        #: read an echo is taken (two standard deviations of its noise: a reading is as likely
        #: long as short). Without it (the thesis's zones alone) the echoes count as read.
        self._sonar_cones = (
            math.radians(sonar.cone_deg) / 2 if sonar is not None else 0.0,
            config.footprint if approach else None,
            2.0 * sonar.noise_std if sonar is not None and approach else 0.0,
        )

    def points(
        self,
        laser: RangeScan | None,
        sonar: RangeScan | None,
        now: float,
        odometry: tuple[float, float, float],
        pose: Pose | None,
    ) -> RangePoints:
        """Obstacle points (robot frame): the range sensors' now, the remembered and the map's.

        ``odometry`` is the robot's odometry pose (where the memory keeps what it saw), ``pose``
        its localized pose while that is trusted (None: the map layer is left out).

        A sonar echo may come from anywhere across its cone, so each reading becomes points
        spread over the cone at the measured range: safety must assume the worst bearing. With
        the approach check an echo is taken two noise deviations nearer, and a gap between two
        echoing cones narrower than the robot is closed by points along it (glass can run
        through it unheard). The memory keeps only the cone's axis as read, since spread points
        seen from elsewhere would land where nothing is.
        """
        laser_points = self._scan_points.laser(laser)
        half = self._sonar_cones[0]
        sonar_points, sonar_axes = self._scan_points.sonar(sonar, *self._sonar_cones)
        live = np.concatenate((laser_points, sonar_points))  # both N×2
        cones = (
            (sonar.origin_x, sonar.origin_y, sonar.bearings, sonar.ranges)
            if sonar is not None
            else None
        )
        clouds = []
        if self.memory is not None:
            sweep = None
            if laser is not None:
                origin = (float(laser.origin_x[0]), float(laser.origin_y[0]))
                sweep = (laser.bearings, laser.ranges, origin)
                if laser.sweep is not None:
                    # lasers merged: the first one's sweep clears and hides the memory; the
                    # others only add to it (what they saw is remembered, and goes with time)
                    n = laser.sweep_beams
                    sweep = (laser.bearings[:n], laser.ranges[:n], origin)
            clouds.append(
                self.memory.update(
                    Pose(*odometry), now, laser_points, sonar_axes, sweep, cones, half
                )
            )
        if self.map_layer is not None and pose is not None:
            # a wall the sensors see through is not there: the pose is off, or the map is old
            walls = self.map_layer.unseen_walls(pose, laser, sonar, half)
            clouds += [walls, self.map_layer.keep_out_points(pose)]
        return RangePoints(live, np.concatenate(clouds) if clouds else np.zeros((0, 2)))
