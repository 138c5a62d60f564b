"""The robot program served on a link, over an ARCOS robot (``--hardware arcos://…``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freelook.config import RobotConfig
from freelook.hardware.arcos._robot import ArcosRobot
from freelook.maps import World, choose_start
from freelook.robot import RobotProgram, RobotServer, ServerOptions
from freelook.runtime import RealtimeRuntime

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = ["open_arcos_server"]


async def open_arcos_server(
    config: RobotConfig,
    url: str,
    options: ServerOptions,
    *,
    robot_map: World | None = None,
    recorder: BackgroundRecorder | None = None,
    start: tuple[float, float, float] | None = None,
) -> tuple[RobotServer, str]:
    """Connect to the robot at ``url``, then build the robot server over it.

    The robot believes it stands at ``start`` on its map (checked against the map), or at the
    map's start (its ``RobotHome``), as ARNL assumes at startup; with no map, at ``start`` or
    the odometry origin.

    Raises :class:`ArcosError` naming the host or device when the robot cannot be reached or
    does not answer the handshake. The server runs :meth:`ArcosRobot.run` as a backend task,
    which keeps the link (reconnecting) and sends STOP and CLOSE when the server ends.
    """
    if robot_map is not None:
        start_pose = choose_start(robot_map, config.footprint, start)
    else:
        start_pose = start or (0.0, 0.0, 0.0)
    runtime = RealtimeRuntime()
    robot = ArcosRobot.from_config(url, config, clock=runtime.now)
    await robot.connect()
    program = RobotProgram(
        config,
        robot.hardware,
        runtime,
        robot_map=robot_map,
        start_pose=start_pose,
        background_localization=True,
    )

    async def keep_link() -> None:
        try:
            await robot.run()
        finally:
            await robot.close()

    server = RobotServer(program, runtime, options, recorder, backend_tasks=[keep_link])
    return server, robot.status
