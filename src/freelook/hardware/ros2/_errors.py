"""The package's error: a :class:`freelook.errors.HardwareError` about a ROS 2 robot."""

from __future__ import annotations

from freelook.errors import HardwareError

__all__ = ["Ros2Error"]


class Ros2Error(HardwareError):
    """rclpy is missing, or the ROS 2 robot's topics are absent, silent or of the wrong type.

    The message names the topic, what was expected and what is there instead.
    """
