"""A real session over loopback UDP: the robot tells the station its map, the recording carries
it as ROS 2 does (``/map`` latched, ``/robot_description``), and the recorded speed is the
robot's."""

from __future__ import annotations

import asyncio
import dataclasses
import math
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from mcap.reader import make_reader
from rosbags.highlevel import AnyReader

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import MAP_CHUNK, VelocityCommand, derive_key, encode_map, map_digest
from freelook.maps import World, load_world
from freelook.operator import OperatorStation
from freelook.record import BackgroundRecorder, Recorder, read_messages
from freelook.robot import ServerOptions
from loopback import robot_and_station

KEY = derive_key("robot map test")


async def _session(
    path: Path,
    robot_map: World,
    *,
    drive: VelocityCommand | None = None,
    seconds: float = 0.0,
) -> tuple[OperatorStation, int]:
    """A robot server over the simulator with ``robot_map``, a station with no map of its
    own, recording; the station drives ``drive`` for ``seconds`` once the map is in."""
    config, world = load_robot("pioneer3dx"), load_world("lab")
    background = BackgroundRecorder(Recorder(path, metadata={"robot": config.name}))
    server, _ = simulated_server(
        config,
        world,
        ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False),
        robot_map=robot_map,
    )
    try:
        async with robot_and_station(
            server,
            lambda address: OperatorStation(config, None, address, key=KEY, recorder=background),
            opened=lambda station: station.core.robot_map,
            what="the robot's map at the station",
            timeout=30,
        ) as station:
            if drive is not None:
                station.core.attach()  # a browser is there: the station transmits
                station.drive_command = drive
                await asyncio.sleep(seconds)  # driven for as long as asked
                station.drive_command = VelocityCommand(0.0, 0.0)
                await asyncio.sleep(0.5)  # and at rest for a moment
    finally:
        assert background.close().dropped == 0
    assert server.map is not None
    return station, server.map.chunks_sent


def test_a_map_the_station_lacks_is_fetched_and_recorded_as_an_occupancy_grid(
    tmp_path: Path,
) -> None:
    path = tmp_path / "run.mcap"
    # the square world from a file of its own: no built-in name, so its cells cross the link
    robot_map = dataclasses.replace(load_world("square"), source=str(tmp_path / "square.toml"))
    station, chunks = asyncio.run(_session(path, robot_map))
    assert station.core.maps.source == "robot"
    assert chunks >= math.ceil(len(encode_map(robot_map)) / MAP_CHUNK)  # every chunk came over
    received = station.core.robot_map
    assert received is not None
    assert map_digest(encode_map(received)) == map_digest(encode_map(robot_map))
    assert station.world is received  # the cockpit shows the robot's map

    # rosbags reads /map as a ROS 2 OccupancyGrid and /robot_description as a URDF
    with AnyReader([path]) as reader:
        maps = [c for c in reader.connections if c.topic == "/map"]
        assert [c.msgtype for c in maps] == ["nav_msgs/msg/OccupancyGrid"]
        grids: list[Any] = [
            reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(maps)
        ]
        described = [c for c in reader.connections if c.topic == "/robot_description"]
        urdfs: list[Any] = [
            reader.deserialize(raw, c.msgtype) for c, _, raw in reader.messages(described)
        ]
    (grid,) = grids
    rows, cols = robot_map.shape
    assert (grid.info.width, grid.info.height) == (cols, rows)
    assert math.isclose(grid.info.resolution, robot_map.resolution, rel_tol=1e-6)
    assert (grid.info.origin.position.x, grid.info.origin.position.y) == robot_map.origin
    cells = np.asarray(grid.data).reshape(rows, cols)
    assert np.array_equal(cells == 100, robot_map.obstacles())
    assert set(np.unique(cells)) <= {0, 100}
    (urdf,) = urdfs
    names = {link.get("name") for link in ET.fromstring(urdf.data).iter("link")}
    assert {"base_link", "laser", "camera"} <= names

    # latched as ROS 2 latches: transient-local QoS on the channel, and its first message
    with open(path, "rb") as stream:
        summary = make_reader(stream).get_summary()
    assert summary is not None
    for channel in summary.channels.values():
        if channel.topic in ("/map", "/robot_description"):
            (qos,) = yaml.safe_load(channel.metadata["offered_qos_profiles"])
            assert qos["durability"] == 1  # transient local


def test_a_built_in_world_goes_by_name_and_no_chunk_is_sent(tmp_path: Path) -> None:
    path = tmp_path / "run.mcap"
    station, chunks = asyncio.run(_session(path, load_world("lab")))
    assert station.core.maps.source == "built-in"
    assert chunks == 0
    assert station.world is not None
    assert station.world.objects  # the built-in world, with its objects for the cockpit
    assert [m.topic for m in read_messages(path, ["/map"])] == ["/map"]


def test_the_recorded_speed_of_a_steady_drive_is_the_wheels_speed(tmp_path: Path) -> None:
    """Driving straight at 0.2 m/s: the recorded /odom speed spreads by what the robot's
    encoders can resolve (the simulated wheels have no speed noise), not by the event loop's
    jitter."""
    path = tmp_path / "run.mcap"
    asyncio.run(_session(path, load_world("lab"), drive=VelocityCommand(0.2, 0.0), seconds=4.0))
    odom, cmd = [], []
    for item in read_messages(path, ["/odom", "/cmd_vel"]):
        m = item.message
        if item.topic == "/odom":
            odom.append((item.publish_time, m.twist.twist.linear.x))
        else:
            cmd.append((item.publish_time, m.linear.x))
    speeds, commands = np.array(odom), np.array(cmd)
    # steady: the command (after safety) held at 0.2 m/s for the last second
    steady = [
        v
        for t, v in speeds
        if (window := commands[(commands[:, 0] > t - 1.0) & (commands[:, 0] <= t)]).size
        and np.all(np.abs(window[:, 1] - 0.2) < 1e-6)
        and commands[0, 0] < t - 1.0
    ]
    assert len(steady) > 40
    config = load_robot("pioneer3dx")
    drive = config.drive
    metre = math.pi * drive.wheel_diameter / drive.encoder_counts_per_rev
    quantum = metre * config.gyro.rate_hz if config.gyro else metre * 100  # one count a sample
    deviation = np.abs(np.array(steady) - 0.2)
    assert np.std(steady) <= quantum
    assert np.percentile(deviation, 95) <= quantum


def test_a_thesis_station_records_the_world_it_was_given(tmp_path: Path) -> None:
    """The thesis profile carries no map: the station records its own ``--world``."""
    path = tmp_path / "run.mcap"
    config, world = load_robot("pioneer3dx"), load_world("eod")

    async def session() -> None:
        background = BackgroundRecorder(Recorder(path))
        server, _ = simulated_server(
            config, world, ServerOptions(listen="udp://127.0.0.1:0", wire="thesis")
        )
        async with robot_and_station(
            server,
            lambda address: OperatorStation(
                config, world, address, wire="thesis", recorder=background
            ),
            opened=lambda station: station.telemetry is not None or station.core.position,
            what="the robot's telemetry at the station",
            timeout=30,
        ):
            pass  # the station has heard the robot: enough to have recorded its own world
        background.close()
        assert server.map is None  # nothing to announce on this profile

    asyncio.run(session())
    (grid,) = [m.message for m in read_messages(path, ["/map"])]
    assert (grid.info.width, grid.info.height) == world.shape[::-1]
