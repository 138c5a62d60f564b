"""The robot program on a real robot's hardware, served on a link: what every real-robot
backend (ARCOS, JAUS, ROS 2) does once its robot answers, and for a robot behind a connection
it keeps (ARCOS, JAUS) the whole of it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from freelook.config import RobotConfig
from freelook.hal import RobotHardware
from freelook.maps import World, choose_start
from freelook.robot._program import RobotProgram
from freelook.robot._server import BackendTask, RobotServer, ServerOptions
from freelook.runtime import RealtimeRuntime

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = [
    "ConnectedRobot",
    "ConnectedRobotOpener",
    "RobotFactory",
    "real_robot_server",
    "start_on_map",
]


def start_on_map(
    config: RobotConfig, robot_map: World | None, start: tuple[float, float, float] | None
) -> tuple[float, float, float]:
    """Where a real robot believes it stands when the program starts: at ``start`` on its map
    (checked against the map) or at the map's start (its ``RobotHome``), as ARNL assumes;
    with no map, at ``start`` or the odometry origin. A start on an obstacle raises
    :class:`freelook.errors.WorldError` (before anything connects)."""
    if robot_map is not None:
        return choose_start(robot_map, config.footprint, start)
    return start or (0.0, 0.0, 0.0)


def real_robot_server(
    config: RobotConfig,
    hardware: RobotHardware,
    runtime: RealtimeRuntime,
    options: ServerOptions,
    *,
    start_pose: tuple[float, float, float],
    robot_map: World | None,
    recorder: BackgroundRecorder | None,
    backend_tasks: Sequence[BackendTask],
) -> RobotServer:
    """The robot program on ``hardware`` (localizing in the background, as a real robot's
    cycle cannot wait for a global search), served with ``backend_tasks`` beside it (keeping
    the robot's connection)."""
    program = RobotProgram(
        config,
        hardware,
        runtime,
        robot_map=robot_map,
        start_pose=start_pose,
        background_localization=True,
    )
    return RobotServer(program, runtime, options, recorder, backend_tasks=backend_tasks)


class ConnectedRobot(Protocol):
    """A real robot behind a connection the backend keeps (an ARCOS or a JAUS robot)."""

    @property
    def hardware(self) -> RobotHardware | None:
        """Its devices once :meth:`connect` returned."""

    @property
    def status(self) -> str:
        """A line describing it, for the operator."""

    async def connect(self) -> None:
        """Reach the robot; raises an error naming what did not answer."""

    async def run(self) -> None:
        """Keep the connection until :meth:`close`."""

    async def close(self) -> None:
        """Stop the robot and let it go."""


class RobotFactory(Protocol):
    """How a backend makes its robot for a URL (``ArcosRobot.from_config``)."""

    def __call__(
        self, url: str, config: RobotConfig, *, clock: Callable[[], float]
    ) -> ConnectedRobot: ...


@dataclass(frozen=True, slots=True)
class ConnectedRobotOpener:
    """The ``open_…_server`` of a backend whose robot sits behind a connection it keeps (ARCOS,
    JAUS): one opener serves them all, told only how to make the robot."""

    robot: RobotFactory

    async def __call__(
        self,
        config: RobotConfig,
        url: str,
        options: ServerOptions,
        *,
        robot_map: World | None = None,
        recorder: BackgroundRecorder | None = None,
        start: tuple[float, float, float] | None = None,
    ) -> tuple[RobotServer, str]:
        """Connect to the robot at ``url``, then serve the robot program on it (see
        :func:`start_on_map` for where it believes it stands), and its status line. Raises
        the backend's error naming what did not answer. The server keeps the connection as a
        backend task and closes it (stopping the robot) when it ends."""
        start_pose = start_on_map(config, robot_map, start)
        runtime = RealtimeRuntime()
        robot = self.robot(url, config, clock=runtime.now)
        await robot.connect()
        assert robot.hardware is not None  # connect() built it

        async def keep_robot() -> None:
            try:
                await robot.run()
            finally:
                await robot.close()

        server = real_robot_server(
            config,
            robot.hardware,
            runtime,
            options,
            start_pose=start_pose,
            robot_map=robot_map,
            recorder=recorder,
            backend_tasks=[keep_robot],
        )
        return server, robot.status
