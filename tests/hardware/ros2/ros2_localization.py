"""A ROS 2 robot's own map and localization, as a node of the tests' own: a ``map`` topic
(``nav_msgs/OccupancyGrid``) and ``amcl_pose`` (``geometry_msgs/PoseWithCovarianceStamped``),
both reliable and transient local as map_server and AMCL publish them."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from freelook.hardware.ros2 import NodeThread, ros

#: the map frame's offset from the base's odometry frame: the robot's pose on the map is its
#: odometry moved by this, so a pose the cockpit shows at it is AMCL's, not odometry's
MAP_OFFSET = (1.0, 0.5)


def room_grid(
    resolution: float = 0.05,
    room: tuple[float, float, float, float] = (-2.0, 4.0, -2.0, 2.0),
    wall_x: float | None = None,
) -> tuple[np.ndarray, tuple[float, float]]:
    """The base's room (odometry frame) as ``OccupancyGrid.data`` rows (row 0 at the origin),
    walls 100, free 0, and a wall across it at ``wall_x`` the room does not have; with the
    grid's origin in the map frame."""
    x_min, x_max, y_min, y_max = room
    cols = round((x_max - x_min) / resolution)
    rows = round((y_max - y_min) / resolution)
    grid = np.zeros((rows, cols), dtype=np.int8)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = 100
    if wall_x is not None:
        grid[:, round((wall_x - x_min) / resolution)] = 100
    return grid, (x_min + MAP_OFFSET[0], y_min + MAP_OFFSET[1])


@dataclass
class MapAndPose:
    """Publishes a grid on ``map`` once (latched) and, every ``period``, the pose ``pose()``
    gives (odometry frame; published moved by :data:`MAP_OFFSET`) with ``std`` as its spread."""

    domain_id: int
    pose: Callable[[], tuple[float, float, float]]
    grid: np.ndarray
    origin: tuple[float, float]
    resolution: float = 0.05
    period: float = 0.2
    std: float = 0.05  # m and rad
    frame: str = "map"

    def start(self) -> MapAndPose:
        r = self._r = ros()
        self._ros = NodeThread("test_localization", domain_id=self.domain_id)
        node = self.node = self._ros.node
        latched = r.qos.QoSProfile(
            depth=1,
            reliability=r.qos.ReliabilityPolicy.RELIABLE,
            durability=r.qos.DurabilityPolicy.TRANSIENT_LOCAL,
        )
        self.map_pub = node.create_publisher(r.OccupancyGrid, "map", latched)
        self.pose_pub = node.create_publisher(r.PoseWithCovarianceStamped, "amcl_pose", latched)
        self.lock = threading.Lock()
        self.publishing = True
        self.publish_map(self.grid, self.origin)
        node.create_timer(self.period, self._publish_pose)
        self._ros.start()
        return self

    def occupancy(self, grid: np.ndarray, origin: tuple[float, float]) -> Any:
        msg = self._r.OccupancyGrid()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.header.frame_id = self.frame
        msg.info.resolution = self.resolution
        msg.info.height, msg.info.width = grid.shape
        msg.info.origin.position.x, msg.info.origin.position.y = origin
        msg.info.origin.orientation.w = 1.0
        msg.data = grid.reshape(-1).tolist()
        return msg

    def publish_map(self, grid: np.ndarray, origin: tuple[float, float]) -> None:
        self.map_pub.publish(self.occupancy(grid, origin))

    def pose_message(self, x: float, y: float, theta: float, std: float) -> Any:
        msg = self._r.PoseWithCovarianceStamped()
        msg.header.stamp = self.node.get_clock().now().to_msg()
        msg.header.frame_id = self.frame
        msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
        msg.pose.pose.orientation.z = math.sin(theta / 2)
        msg.pose.pose.orientation.w = math.cos(theta / 2)
        covariance = [0.0] * 36
        covariance[0] = covariance[7] = covariance[35] = std * std
        msg.pose.covariance = covariance
        return msg

    def _publish_pose(self) -> None:
        with self.lock:
            if not self.publishing:
                return
            std = self.std
        x, y, theta = self.pose()
        self.pose_pub.publish(self.pose_message(x + MAP_OFFSET[0], y + MAP_OFFSET[1], theta, std))

    def close(self) -> None:
        self._ros.close()
