"""ROS 2 robots behind the robot program's hardware interfaces, and the simulator on ROS 2.

:class:`Ros2Robot` takes a ROS 2 robot's standard topics (``nav_msgs/Odometry``,
``sensor_msgs/LaserScan``, ``Imu``, ``CompressedImage`` or ``Image``, ``JointState``,
``BatteryState``) as HAL devices and publishes ``cmd_vel`` and pan-tilt commands, as the
robot description's ``[ros2]`` section says; :func:`open_ros2_server` puts the robot program
on one. :func:`describe_robot` watches a robot's topics and writes a starting description of
it (:func:`describe`, sans-I/O, from a :class:`Watch`). :class:`SimulatedRos2Robot` publishes
the built-in simulator on the same topics. rclpy is imported only when one of them is made:
the core install does not need ROS.
"""

from freelook.hardware.ros2._convert import (
    ScanLayout,
    ScanRanges,
    Sweep,
    check_scan_layout,
    layout_note,
    scan_problem,
    scan_ranges,
    scan_sweep,
    twist_of_wheels,
    wheels_of_twist,
    yaw_of_quaternion,
)
from freelook.hardware.ros2._describe import (
    ScanSeen,
    TopicChoice,
    TopicGraph,
    Watch,
    blind_sector,
    choose_topics,
)
from freelook.hardware.ros2._description import Description, describe
from freelook.hardware.ros2._errors import Ros2Error
from freelook.hardware.ros2._rclpy import INSTALL_HINT, NodeThread, ros
from freelook.hardware.ros2._robot import Ros2Robot
from freelook.hardware.ros2._server import open_ros2_server, parse_ros2_url
from freelook.hardware.ros2._sim import SimulatedRos2Robot, serve_simulated_ros2
from freelook.hardware.ros2._watch import describe_robot, picture_size

__all__ = [
    "INSTALL_HINT",
    "Description",
    "NodeThread",
    "Ros2Error",
    "Ros2Robot",
    "ScanLayout",
    "ScanRanges",
    "ScanSeen",
    "SimulatedRos2Robot",
    "Sweep",
    "TopicChoice",
    "TopicGraph",
    "Watch",
    "blind_sector",
    "check_scan_layout",
    "choose_topics",
    "describe",
    "describe_robot",
    "layout_note",
    "open_ros2_server",
    "parse_ros2_url",
    "picture_size",
    "ros",
    "scan_problem",
    "scan_ranges",
    "scan_sweep",
    "serve_simulated_ros2",
    "twist_of_wheels",
    "wheels_of_twist",
    "yaw_of_quaternion",
]
