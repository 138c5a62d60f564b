"""The robot program served on a link, over an ARCOS robot (``--hardware arcos://…``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freelook.config import RobotConfig
from freelook.hardware.arcos._robot import ArcosRobot
from freelook.maps import World
from freelook.robot import RobotServer, ServerOptions, serve_connected_robot

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
    return await serve_connected_robot(
        config,
        lambda clock: ArcosRobot.from_config(url, config, clock=clock),
        options,
        robot_map=robot_map,
        recorder=recorder,
        start=start,
    )
