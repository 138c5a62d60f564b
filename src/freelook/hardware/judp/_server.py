"""The robot program served on a link, over a JAUS robot (``--hardware judp://…``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freelook.config import RobotConfig
from freelook.hardware.judp._robot import JausRobot
from freelook.maps import World
from freelook.robot import RobotServer, ServerOptions, serve_connected_robot

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
    return await serve_connected_robot(
        config,
        lambda clock: JausRobot.from_config(url, config, clock=clock),
        options,
        robot_map=robot_map,
        recorder=recorder,
        start=start,
    )
