"""The robot program served on a link, over a JAUS robot (``--hardware judp://…``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freelook.config import RobotConfig
from freelook.hardware.judp._robot import JausRobot
from freelook.maps import World, choose_start
from freelook.robot import RobotProgram, RobotServer, ServerOptions
from freelook.runtime import RealtimeRuntime

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = ["open_judp_server"]


async def open_judp_server(
    config: RobotConfig,
    url: str,
    options: ServerOptions,
    *,
    robot_map: World | None = None,
    recorder: BackgroundRecorder | None = None,
    start: tuple[float, float, float] | None = None,
) -> tuple[RobotServer, str]:
    """Discover the JAUS robot at ``url``, take control of it, then build the robot server.

    Raises :class:`JausRobotError` naming the address, what was asked and what was answered
    when the robot does not answer discovery, refuses control or offers no drive service.
    The server keeps the robot (keep-alive, sensor queries) as a backend task and releases
    control when it ends.
    """
    if robot_map is not None:
        start_pose = choose_start(robot_map, config.footprint, start)
    else:
        start_pose = start or (0.0, 0.0, 0.0)
    runtime = RealtimeRuntime()
    robot = JausRobot.from_config(url, config, clock=runtime.now)
    await robot.connect()
    assert robot.hardware is not None
    program = RobotProgram(
        config,
        robot.hardware,
        runtime,
        robot_map=robot_map,
        start_pose=start_pose,
        background_localization=True,
    )

    async def keep_robot() -> None:
        try:
            await robot.run()
        finally:
            await robot.close()

    server = RobotServer(program, runtime, options, recorder, backend_tasks=[keep_robot])
    return server, robot.status
