"""Choosing a backend: ``sim``, ``arcos://…``, ``judp://…`` or ``ros2[://…]``, and the map the
robot is given."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freelook.config import RobotConfig
from freelook.errors import ConfigError
from freelook.hardware.arcos import open_arcos_server
from freelook.hardware.judp import open_judp_server
from freelook.hardware.ros2 import open_ros2_server
from freelook.hardware.sim import published_map, simulated_server
from freelook.maps import World, load_world
from freelook.robot import RobotServer, ServerOptions

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = ["open_robot_server"]


def _robot_map(spec: str | None, default: World | None) -> World | None:
    if spec is None:
        return default
    if spec.lower() == "none":
        return None
    return load_world(spec)  # WorldError names the file and what was wrong


async def open_robot_server(
    config: RobotConfig,
    hardware: str,
    options: ServerOptions,
    *,
    world: str = "lab",
    robot_map: str | None = None,
    seed: int = 0,
    recorder: BackgroundRecorder | None = None,
    start: tuple[float, float, float] | None = None,
) -> tuple[RobotServer, str]:
    """A robot server on the backend ``hardware`` names, and a line describing it.

    ``robot_map``: a map file or built-in world, ``"none"`` for range sensors alone, or None
    for the backend's default (the simulated world's own map file; no map on a real robot).
    ``start``: where the robot starts (the simulator puts it there) or, on a real robot, where
    it stands on its map; None: the map's start or the free place nearest its origin.
    Raises a :class:`freelook.errors.FreelookError` naming what could not be opened.
    """
    if hardware == "sim":
        the_world = load_world(world)
        server, _ = simulated_server(
            config,
            the_world,
            options,
            seed=seed,
            robot_map=_robot_map(robot_map, published_map(the_world)),
            recorder=recorder,
            start=start,
        )
        return server, f"the simulator in {the_world.name}"
    if hardware.startswith("arcos:"):
        return await open_arcos_server(
            config,
            hardware,
            options,
            robot_map=_robot_map(robot_map, None),
            recorder=recorder,
            start=start,
        )
    if hardware.startswith("judp:"):
        return await open_judp_server(
            config,
            hardware,
            options,
            robot_map=_robot_map(robot_map, None),
            recorder=recorder,
            start=start,
        )
    if hardware == "ros2" or hardware.startswith("ros2:"):
        return await open_ros2_server(
            config,
            hardware,
            options,
            robot_map=_robot_map(robot_map, None),
            recorder=recorder,
            start=start,
        )
    raise ConfigError(
        f"--hardware {hardware!r}: expected sim, arcos://HOST:PORT, arcos:///dev/DEVICE, "
        "judp://HOST:PORT, ros2 or ros2://NAMESPACE"
    )
