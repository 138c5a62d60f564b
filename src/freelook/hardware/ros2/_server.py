"""The robot program served on a link, over a ROS 2 robot (``--hardware ros2[://NAMESPACE]``)."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any

from freelook.config import RobotConfig
from freelook.errors import ConfigError
from freelook.hardware.ros2._localization import RosMap
from freelook.hardware.ros2._robot import Ros2Robot
from freelook.hardware.ros2._state import state_report
from freelook.link import EStop
from freelook.maps import World
from freelook.robot import RobotServer, ServerOptions, real_robot_server, start_on_map
from freelook.runtime import RealtimeRuntime

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = ["open_ros2_server", "parse_ros2_url"]

log = logging.getLogger(__name__)

_NAMESPACE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$")
WATCH_PERIOD = 0.1  # s between looks at whether the robot's topics still speak


def ros_map_shape(ros_map: RosMap) -> tuple[int, int]:
    """A ROS map's (columns, rows), as the log says them."""
    world = ros_map.latest()
    rows, cols = world.shape if world is not None else (0, 0)
    return cols, rows


def parse_ros2_url(url: str) -> str:
    """The namespace of ``ros2``, ``ros2://`` or ``ros2://NAMESPACE`` ("" for none)."""
    if url == "ros2":
        return ""
    if not url.startswith("ros2://"):
        raise ConfigError(f"--hardware {url!r}: expected ros2 or ros2://NAMESPACE")
    namespace = url[len("ros2://") :].strip("/")
    if namespace and not _NAMESPACE.match(namespace):
        raise ConfigError(
            f"--hardware {url!r}: the namespace {namespace!r} is not a ROS name "
            "(letters, digits and _, parts separated by /, not starting with a digit)"
        )
    return namespace


async def open_ros2_server(
    config: RobotConfig,
    url: str,
    options: ServerOptions,
    *,
    robot_map: World | None = None,
    recorder: BackgroundRecorder | None = None,
    start: tuple[float, float, float] | None = None,
    domain_id: int | None = None,
    map_topic: str | None = None,
) -> tuple[RobotServer, str]:
    """Wait for the robot's odometry and scan, then build the robot server over it.

    The robot believes it stands at ``start`` on its map, or at the map's start; without a
    map at ``start`` or its odometry origin. ``map_topic`` (else ``[ros2.topics] map``, if
    any) takes the robot's own map from that topic instead of ``robot_map``, and follows it as
    it changes. Raises :class:`Ros2Error` when rclpy is missing
    or a required topic is silent, of another type or unlike the description. The server
    keeps watching the topics and, when it ends, commands zero velocity and ends the node.
    """
    namespace = parse_ros2_url(url)
    runtime = RealtimeRuntime()
    robot = Ros2Robot(
        config,
        namespace,
        clock=runtime.now,
        domain_id=domain_id,
        camera=options.camera,
        map_topic=map_topic,
    )
    try:
        hardware = await robot.start()
        if robot.map is not None:
            robot_map = robot.map.latest()
        start_pose = start_on_map(config, robot_map, start)
    except BaseException:
        robot.close()
        raise
    period, state_period = config.link.control_period, config.ros2.state_period
    # the backend's work while the robot runs (``server`` is made below, before they run)
    tasks: list[Callable[[], Coroutine[Any, Any, None]]] = [
        lambda: _watch(robot),
        lambda: _publish_state(robot, server, runtime, state_period),
    ]
    if robot.odom_tf is not None:
        tasks.append(lambda: _publish_tf(robot, server, period))
    server = real_robot_server(
        config,
        hardware,
        runtime,
        options,
        start_pose=start_pose,
        robot_map=robot_map,
        recorder=recorder,
        backend_tasks=tasks,
    )
    loop = asyncio.get_running_loop()

    def engage() -> None:
        server.program.send(EStop(engaged=True))  # whoever may speak may stop the robot

    def pressed() -> None:  # on the ROS thread: engaged on the program's loop at once
        loop.call_soon_threadsafe(engage)

    robot.on_external_estop = pressed
    if robot.estop_pressed:
        engage()
    return server, robot.status


async def _watch(robot: Ros2Robot) -> None:
    """Say when a required topic goes quiet (the program stops commanding) and when the
    robot speaks again; take up a new map; close the robot when it ends."""
    ros_map = robot.map
    was = True
    try:
        while True:
            now = robot.connected
            if now != was:
                if now:
                    log.warning("the ROS 2 robot speaks again: %s", robot.status)
                else:
                    log.warning("%s", robot.status)
                was = now
            if ros_map is not None and ros_map.pending:
                # the program takes it up at its next cycle (see RobotProgram)
                name = robot.topics["map"][0]
                if await asyncio.to_thread(ros_map.convert, name) is not None:
                    log.info("%s: a new map (%d × %d cells)", name, *ros_map_shape(ros_map))
            await asyncio.sleep(WATCH_PERIOD)
    finally:
        robot.close()


async def _publish_state(
    robot: Ros2Robot, server: RobotServer, runtime: RealtimeRuntime, period: float
) -> None:
    """freelook's state on ROS every ``[ros2] state_period`` (``period``)."""
    while True:
        telemetry = server.program.core.telemetry(runtime.now())
        robot.state.publish(state_report(telemetry, robot.connected, robot.status))
        await asyncio.sleep(period)


async def _publish_tf(robot: Ros2Robot, server: RobotServer, period: float) -> None:
    """freelook's estimate as odom → base_link on /tf every control cycle, until another
    node is found to publish the base's transform."""
    while robot.odom_tf is not None and not robot.odom_tf.off:
        robot.publish_odom_tf(server.program.core.estimator.odometry.pose)
        await asyncio.sleep(period)
