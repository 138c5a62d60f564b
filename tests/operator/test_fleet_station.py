"""A fleet station over Zenoh on loopback: robots of a batched simulator found on the bus,
one driven and the others watched; switching lets go of the old robot; hostile picks are
refused. Plus the fleet's start poses and the station core's watch mode."""

from __future__ import annotations

import asyncio
import math
import socket
from pathlib import Path
from typing import Any

import pytest

from freelook.config import load_robot
from freelook.errors import WorldError
from freelook.hardware.sim import SimulatedFleet, fleet_starts
from freelook.link import (
    ControlRelease,
    ControlRequest,
    Heartbeat,
    KeyRing,
    LinkSession,
    NativeCodec,
    TankCommand,
    VelocityCommand,
    ZenohBus,
    derive_key,
)
from freelook.maps import load_world
from freelook.operator import FleetStation, StationCore
from freelook.robot import ServerOptions
from waiting import wait_until_async

pytestmark = pytest.mark.timeout(60)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_fleet_starts_are_distinct_places_where_the_robot_fits() -> None:
    config, world = load_robot("pioneer3dx"), load_world("lab")
    starts = fleet_starts(world, config, 8)
    assert len(starts) == 8
    for k, (x, y, _) in enumerate(starts):
        for x2, y2, _ in starts[k + 1 :]:
            assert math.hypot(x - x2, y - y2) >= 1.2 - 1e-9
    with pytest.raises(WorldError, match="room for"):
        fleet_starts(world, config, 10_000)


def test_a_watching_core_asks_for_nothing_and_lets_go_when_it_stops_driving() -> None:
    config = load_robot("pioneer3dx")
    session = LinkSession(NativeCodec(derive_key("k"), sender=1), spacing=0.047)
    core = StationCore(config, None, session, station=1)
    core.driving = False
    assert core.start() == [Heartbeat()]
    beats = [core.periodic(0.047 * k) for k in range(1, 201)]
    assert sum(1 for out in beats if out) == 2  # a heartbeat every 100 transmissions
    assert all(not isinstance(m, ControlRequest) for out in beats for m in out)
    assert core.drive() == [ControlRequest(1, 10)]
    core.drive_command = TankCommand(0.3, 0.0)
    assert core.watch() == [VelocityCommand(0.0, 0.0), ControlRelease(1)]
    assert core.drive_command is None
    assert core.watch() == []  # already watching


def test_fleet_station_drives_one_robot_watches_the_others_and_switches() -> None:
    config, world = load_robot("pioneer3dx"), load_world("lab")
    port = free_port()
    ring = KeyRing.from_mapping({"stations": {"1": {"key": "one"}}}, allow_weak=True)
    names = ["alpha", "bravo", "charlie"]

    async def scenario() -> dict[str, Any]:
        robots_bus = ZenohBus.peer(listen=[f"tcp/127.0.0.1:{port}"])
        station_bus = ZenohBus.peer(connect=[f"tcp/127.0.0.1:{port}"])
        fleet = SimulatedFleet(
            config,
            world,
            3,
            lambda i: ServerOptions(
                listen=f"zenoh://127.0.0.1:{port}/{names[i]}", keys=ring, camera=False
            ),
            bus=robots_bus,
        )
        fleet_task = asyncio.create_task(fleet.run())
        await fleet.ready()
        station = FleetStation(
            config,
            None,
            station_bus,
            key=derive_key("one"),
            station=1,
            first="bravo",
            discovery_period=0.3,
        )
        task = asyncio.create_task(station.run())
        out: dict[str, Any] = {}
        try:
            await wait_until_async(
                lambda: len(station.summary()["robots"]) == 3 and station.current.in_control,
                5,
                "three robots found and the first one in control",
            )
            out["names"] = [r["name"] for r in station.summary()["robots"]]
            holders = {name: s.core.driving for name, s in station.stations.items()}
            out["driving"] = holders
            station.current.drive_command = TankCommand(0.3, 0.0)
            await asyncio.sleep(1.0)  # driven for a second
            poses = fleet.fleet.poses
            out["moved"] = [
                float(math.hypot(*(poses[i, :2] - fleet.starts[i][:2]))) for i in range(3)
            ]
            slot: Any = None
            out["hostile"] = [
                await station.handle_browser({"type": "fleet_select", "robot": bad}, slot)
                for bad in (None, 7, "x" * 100, "delta", "*")
            ]
            out["switch"] = station.select("charlie")
            await wait_until_async(lambda: station.current.in_control, 3, "control of charlie")

            def holders() -> tuple[int | None, int | None]:
                now = fleet.servers[1].runtime.now()
                bravo, charlie = (fleet.servers[k].program.core.arbiter for k in (1, 2))
                return bravo.holder(now), charlie.holder(now)

            # well inside the robots' 5 s control lapse: bravo was let go, not timed out
            await wait_until_async(
                lambda: holders() == (None, 1), 2, "bravo let go and charlie held by station 1"
            )
            out["bravo_holder"], out["charlie_holder"] = holders()
            out["selected"] = station.selected
        finally:
            task.cancel()
            fleet_task.cancel()
            await asyncio.gather(task, fleet_task, return_exceptions=True)
            station_bus.close()
            robots_bus.close()
        return out

    out = asyncio.run(scenario())
    assert out["names"] == ["alpha", "bravo", "charlie"]  # found by discovery
    assert out["driving"] == {"alpha": False, "bravo": True, "charlie": False}
    moved = out["moved"]
    assert moved[1] > 0.1  # the driven robot moved
    assert moved[0] < 1e-6  # the watched ones did not
    assert moved[2] < 1e-6
    assert out["hostile"][:3] == ["refused: fleet_select needs a robot name"] * 3
    assert out["hostile"][3] == "refused: no robot 'delta' on the bus"
    assert out["hostile"][4] == "refused: no robot '*' on the bus"
    assert out["switch"] is None
    assert out["selected"] == "charlie"
    assert out["bravo_holder"] is None  # let go
    assert out["charlie_holder"] == 1


def test_a_fleet_session_records_every_robot_under_its_name(tmp_path: Path) -> None:
    """``sim --robots 2 --record``: one MCAP holds both robots' streams, each robot's topics
    under ``/NAME`` and its frames as ``NAME/…`` (the map frame shared); the driven robot's
    odometry moves in the file, the watched one's stays."""
    from mcap.reader import make_reader
    from mcap_ros2.decoder import DecoderFactory

    from freelook.launch import SessionOptions, run_fleet_session

    recording = tmp_path / "fleet.mcap"
    options = SessionOptions(port=free_port(), open_browser=False, record=recording)
    lines: list[str] = []

    async def scenario() -> None:
        started = asyncio.Event()
        parts: dict[str, Any] = {}
        session = asyncio.create_task(
            run_fleet_session(
                load_robot("pioneer3dx"),
                load_world("lab"),
                2,
                1,
                options,
                zenoh_address=("127.0.0.1", free_port()),
                announce=lines.append,
                started=started,
                parts=parts,
            )
        )
        try:
            async with asyncio.timeout(30):
                await started.wait()
            station = parts["stations"][0]
            await wait_until_async(
                lambda: len(station.stations) == 2 and station.current.in_control,
                30,
                "both robots found and the first one in control",
            )
            station.current.drive_command = TankCommand(0.3, 0.0)
            await asyncio.sleep(1.5)  # driven for a while
        finally:
            session.cancel()
            await asyncio.gather(session, return_exceptions=True)

    asyncio.run(scenario())
    assert any(f"recording every robot to {recording}" in line for line in lines), lines
    assert any(line.startswith("recorded ") for line in lines), lines
    odometry: dict[str, list[Any]] = {"/robot-1/odom": [], "/robot-2/odom": []}
    frames: set[tuple[str, str]] = set()
    topics: set[str] = set()
    with recording.open("rb") as stream:
        reader = make_reader(stream, decoder_factories=[DecoderFactory()])
        for _, channel, _, message in reader.iter_decoded_messages():
            topics.add(channel.topic)
            if channel.topic in odometry:
                odometry[channel.topic].append(message)
                frames.add((message.header.frame_id, message.child_frame_id))
            if channel.topic.endswith("/map"):
                frames.add((message.header.frame_id, "(grid)"))
    assert {"/robot-1/scan", "/robot-2/scan", "/robot-1/odom", "/robot-2/odom"} <= topics
    assert not {"/odom", "/scan"} & topics  # nothing without a robot's name
    assert ("robot-1/odom", "robot-1/base_link") in frames
    assert ("robot-2/odom", "robot-2/base_link") in frames
    assert all(frame == "map" for frame, child in frames if child == "(grid)")

    def travelled(topic: str) -> float:
        first, last = odometry[topic][0].pose.pose.position, odometry[topic][-1].pose.pose.position
        return math.hypot(last.x - first.x, last.y - first.y)

    assert travelled("/robot-1/odom") > 0.1  # station 1 drives robot-1 first
    assert travelled("/robot-2/odom") < 1e-3
