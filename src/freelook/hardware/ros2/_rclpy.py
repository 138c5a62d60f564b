"""rclpy and the message packages, imported only when a ROS 2 robot is opened.

The core install needs no ROS: everything here loads on first use, and a missing piece is a
:class:`Ros2Error` that says how to install it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import os
import warnings
from types import SimpleNamespace
from typing import Any

from freelook.hardware.ros2._errors import Ros2Error

__all__ = ["INSTALL_HINT", "ros", "start_context"]

INSTALL_HINT = (
    "install freelook with its ros2 extra (pip install -e '.[ros2]' in its checkout: rclpy and "
    "the message packages of ROS 2 Jazzy as wheels) or run from a shell where a ROS 2 install "
    "is sourced (source /opt/ros/jazzy/setup.bash)"
)

_MESSAGES = {
    "Twist": "geometry_msgs.msg",
    "TwistStamped": "geometry_msgs.msg",
    "Odometry": "nav_msgs.msg",
    "LaserScan": "sensor_msgs.msg",
    "Imu": "sensor_msgs.msg",
    "CompressedImage": "sensor_msgs.msg",
    "Image": "sensor_msgs.msg",
    "JointState": "sensor_msgs.msg",
    "BatteryState": "sensor_msgs.msg",
    "Float64MultiArray": "std_msgs.msg",
    "JointTrajectory": "trajectory_msgs.msg",
    "JointTrajectoryPoint": "trajectory_msgs.msg",
}


@functools.cache
def ros() -> Any:
    """rclpy, its QoS and executor pieces, and the message classes, as one namespace."""
    try:
        with warnings.catch_warnings():
            # the message packages load their type support through lark, which imports a
            # module Python 3.11 deprecates: not ours to fix, nor the user's to see
            warnings.filterwarnings("ignore", "module 'sre_", DeprecationWarning)
            with contextlib.suppress(ImportError):
                importlib.import_module("rosidl_generator_py")
        rclpy = importlib.import_module("rclpy")
        executors = importlib.import_module("rclpy.executors")
        qos = importlib.import_module("rclpy.qos")
        duration = importlib.import_module("rclpy.duration")
        messages = {
            name: getattr(importlib.import_module(module), name)
            for name, module in _MESSAGES.items()
        }
    except ImportError as err:
        raise Ros2Error(f"ROS 2 is not installed here ({err}): {INSTALL_HINT}") from None
    return SimpleNamespace(
        rclpy=rclpy,
        executors=executors,
        qos=qos,
        Duration=duration.Duration,
        **messages,
    )


def start_context(domain_id: int | None) -> Any:
    """An rclpy context of its own, initialised in DDS domain ``domain_id`` (None:
    ``ROS_DOMAIN_ID``), so several nodes of one process (and tests) never share one."""
    r = ros()
    context = r.rclpy.Context()
    try:
        r.rclpy.init(context=context, domain_id=domain_id)
    except Exception as err:  # rclpy's own errors: a bad ROS_DOMAIN_ID, an RMW that fails
        domain = domain_id if domain_id is not None else os.environ.get("ROS_DOMAIN_ID", "0")
        raise Ros2Error(f"could not start ROS 2 in domain {domain}: {err}") from None
    return context
