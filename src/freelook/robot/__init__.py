"""The robot program: control cycle, modes, safety and estimation wiring, and the server that
puts it on a link. It knows its hardware through the interfaces of :mod:`freelook.hal`; the
backends that implement them (the simulator, real robots) live in :mod:`freelook.hardware`."""

from freelook.robot._core import BLIND_GRACE, VIDEO_BLIND_GRACE, MapParts, RobotCore
from freelook.robot._cycle import CycleOutput
from freelook.robot._estimator import LocalizationJob, LocalizationResult
from freelook.robot._program import RobotProgram
from freelook.robot._real import (
    ConnectedRobot,
    ConnectedRobotOpener,
    RobotFactory,
    real_robot_server,
    start_on_map,
)
from freelook.robot._server import ROBOT_STATION, RobotServer, ServerOptions

__all__ = [
    "BLIND_GRACE",
    "ROBOT_STATION",
    "VIDEO_BLIND_GRACE",
    "ConnectedRobot",
    "ConnectedRobotOpener",
    "CycleOutput",
    "LocalizationJob",
    "LocalizationResult",
    "MapParts",
    "RobotCore",
    "RobotFactory",
    "RobotProgram",
    "RobotServer",
    "ServerOptions",
    "real_robot_server",
    "start_on_map",
]
