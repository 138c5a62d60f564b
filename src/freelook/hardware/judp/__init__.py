"""JUDP: robots that speak JAUS behind the robot program's hardware interfaces.

:class:`JausRobot` (``judp://HOST[:PORT]``, JUDP's 3794 by default) discovers the robot's
services, takes control with the configured authority, keeps it, and exposes ``.hardware``:
a drive over the Velocity State Driver or the Primitive Driver, an odometer over the Local
Pose Sensor, an arm over the Primitive Manipulator. Underneath, :class:`JausClient` is the
whole conversation as a sans-I/O state machine over the codec of :mod:`freelook.judp`.
:func:`open_judp_server` puts the robot program on such a robot. See docs/jaus.md.
"""

from freelook.hardware.judp._arm import JausArm
from freelook.hardware.judp._client import JausClient
from freelook.hardware.judp._errors import JausRobotError
from freelook.hardware.judp._hal import jaus_hardware, jaus_notes
from freelook.hardware.judp._options import (
    ACCESS_CONTROL,
    BROADCAST,
    LOCAL_POSE_SENSOR,
    MANAGEMENT,
    MANIPULATOR_JOINT_POSITION_SENSOR,
    PRIMITIVE_DRIVER,
    PRIMITIVE_MANIPULATOR,
    VELOCITY_STATE_DRIVER,
    VELOCITY_STATE_SENSOR,
    ClientOptions,
    Phase,
)
from freelook.hardware.judp._robot import DEFAULT_PORT, JausRobot, JudpAddress, parse_judp_url
from freelook.hardware.judp._server import open_judp_server

__all__ = [
    "ACCESS_CONTROL",
    "BROADCAST",
    "DEFAULT_PORT",
    "LOCAL_POSE_SENSOR",
    "MANAGEMENT",
    "MANIPULATOR_JOINT_POSITION_SENSOR",
    "PRIMITIVE_DRIVER",
    "PRIMITIVE_MANIPULATOR",
    "VELOCITY_STATE_DRIVER",
    "VELOCITY_STATE_SENSOR",
    "ClientOptions",
    "JausArm",
    "JausClient",
    "JausRobot",
    "JausRobotError",
    "JudpAddress",
    "Phase",
    "jaus_hardware",
    "jaus_notes",
    "open_judp_server",
    "parse_judp_url",
]
