"""The link over Zenoh, peer to peer on loopback only (tcp/127.0.0.1, multicast scouting
off): the same authenticated sessions as over UDP, forged and replayed packets dropped and
counted, two stations contending for one robot, discovery of the robots on the bus."""

from __future__ import annotations

import asyncio
import json
import socket
import threading

import pytest
import zenoh

from freelook.config import load_robot
from freelook.errors import ConfigError
from freelook.hardware.sim import simulated_server
from freelook.link import (
    Accepted,
    Heartbeat,
    KeyRing,
    LinkDriver,
    LinkEvent,
    LinkSession,
    NativeCodec,
    RobotInfo,
    TankCommand,
    VelocityCommand,
    ZenohAuth,
    ZenohBus,
    derive_key,
    parse_transport_url,
    station_user,
    zenoh_config,
)
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from loopback import running, serving
from waiting import wait_until_async

pytestmark = pytest.mark.timeout(60)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


async def _discovered(bus: ZenohBus, robots: int) -> list[RobotInfo]:
    """What ``bus.discover`` finds once it finds ``robots`` robots (each look takes 0.5 s)."""
    found: list[list[RobotInfo]] = [[]]

    async def all_found() -> bool:
        found.append(await asyncio.to_thread(bus.discover, 0.5))
        return len(found[-1]) >= robots

    await wait_until_async(all_found, 10, f"{robots} robot(s) discovered", show=lambda: found[-1])
    return found[-1]


def test_zenoh_config_touches_loopback_only() -> None:
    ours = zenoh_config(listen=["tcp/127.0.0.1:7447"], connect=["tcp/127.0.0.1:7448"])
    assert json.loads(ours.get_json("mode")) == "peer"
    assert json.loads(ours.get_json("scouting/multicast/enabled")) is False
    assert json.loads(ours.get_json("listen/endpoints")) == ["tcp/127.0.0.1:7447"]
    assert json.loads(ours.get_json("connect/endpoints")) == ["tcp/127.0.0.1:7448"]


def test_zenoh_urls_name_a_robot() -> None:
    url = parse_transport_url("zenoh://127.0.0.1:7447/scout-1")
    assert (url.scheme, url.host, url.port, url.robot, url.mode) == (
        "zenoh",
        "127.0.0.1",
        7447,
        "scout-1",
        "peer",
    )
    assert url.zenoh_endpoint == "tcp/127.0.0.1:7447"
    assert parse_transport_url("zenoh://10.0.0.2:7447/r?mode=client").mode == "client"
    for bad, match in (
        ("zenoh://127.0.0.1/r1", "expected zenoh://HOST:PORT/ROBOT"),
        ("zenoh://127.0.0.1:7447/", "expected zenoh://HOST:PORT/ROBOT"),
        ("zenoh://127.0.0.1:7447/a/b", "expected zenoh://HOST:PORT/ROBOT"),
        ("zenoh://127.0.0.1:7447/r*", "robot name 'r\\*'"),
        ("zenoh://127.0.0.1:7447/r?mode=router", "mode must be peer or client"),
    ):
        with pytest.raises(ConfigError, match=match):
            parse_transport_url(bad)


def test_robot_descriptions_are_validated() -> None:
    assert RobotInfo.from_json(RobotInfo("r1", "pioneer3dx").to_json()) == RobotInfo(
        "r1", "pioneer3dx"
    )
    for hostile in (
        b"not json",
        b"[1, 2]",
        b'{"name": "a/b"}',
        b'{"name": "*"}',
        b'{"name": 3}',
        b'{"name": "r", "model": 5}',
        b"[" * 100_000,
        b'{"name": "r", "model": "' + b"x" * 5000 + b'"}',
    ):
        assert RobotInfo.from_json(hostile) is None


def test_forged_and_replayed_packets_over_zenoh_are_dropped_and_counted() -> None:
    """A station opens its session over Zenoh and drives; a forger publishing on the robot's
    control key with a wrong key, and a replay of the station's own packets captured on the
    bus, are refused by the robot's session and counted; only the station's commands act."""
    port = free_port()
    keys = KeyRing.from_mapping({"stations": {"1": {"key": "station one"}}}, allow_weak=True)

    async def scenario() -> dict[str, object]:
        robot_bus = ZenohBus.peer(listen=[f"tcp/127.0.0.1:{port}"])
        station_bus = ZenohBus.peer(connect=[f"tcp/127.0.0.1:{port}"])
        spy_bus = ZenohBus.peer(connect=[f"tcp/127.0.0.1:{port}"])
        captured: list[tuple[str, bytes]] = []
        lock = threading.Lock()

        def capture(sample: zenoh.Sample) -> None:
            with lock:
                captured.append((str(sample.key_expr), sample.payload.to_bytes()))

        # what crosses the bus to the robot, as anyone on the robot's host could capture it
        spy = robot_bus.session.declare_subscriber("freelook/r1/control/*", capture)
        robot_end = robot_bus.robot(RobotInfo("r1", "pioneer3dx"))
        station_end = station_bus.station("r1")
        robot = LinkSession(
            NativeCodec(derive_key("robot"), sender=100),
            spacing=0.05,
            role="robot",
            keys=keys,
            nonce=b"test",
        )
        operator = LinkSession(
            NativeCodec(derive_key("station one"), sender=1), spacing=0.05, role="operator"
        )
        commands: list[object] = []
        telemetry: list[object] = []

        def on_robot(event: LinkEvent) -> None:
            if isinstance(event, Accepted):
                commands.append(event.message)

        def on_station(event: LinkEvent) -> None:
            if isinstance(event, Accepted):
                telemetry.append(event.message)

        loop = asyncio.get_running_loop()
        robot.periodic = lambda now: [VelocityCommand(0.0, 0.0)]  # a stand-in for telemetry
        operator.periodic = lambda now: [Heartbeat()]
        robot_driver = LinkDriver(robot, robot_end, loop.time, on_robot)
        station_driver = LinkDriver(operator, station_end, loop.time, on_station)
        tasks = [asyncio.create_task(d.run()) for d in (robot_driver, station_driver)]
        try:
            await wait_until_async(
                lambda: robot.sessions and telemetry, 5, "the session open and telemetry"
            )

            def station_packets() -> list[bytes]:
                with lock:
                    return [data for key, data in captured if key.endswith(station_end.tag)]

            opened = len(station_packets())  # those that opened the session are not replayed
            station_driver.send(TankCommand(0.25, 0.0))
            await wait_until_async(
                lambda: TankCommand(0.25, 0.0) in commands and len(station_packets()) >= opened + 5,
                5,
                "the station's command at the robot, and five packets of its session to replay",
            )
            accepted_before = len(commands)
            # a forger: the right robot, its own tag, the wrong key
            forger = NativeCodec(derive_key("not the key"), sender=1)
            forged = forger.encode(TankCommand(1.0, 0.0), loop.time())
            for _ in range(5):
                spy_bus.session.put("freelook/r1/control/00000000deadbeef", forged)
            # a replay: the station's own packets, captured on the bus, sent again
            replayed = station_packets()
            for data in replayed[-5:]:
                spy_bus.session.put(f"freelook/r1/control/{station_end.tag}", data)
            # hostile keys and sizes never reach the session
            spy_bus.session.put("freelook/r1/control/NOT-A-TAG", forged)
            spy_bus.session.put("freelook/r1/control/00000000deadbeef", bytes(10_000))

            def refused() -> dict[str, int]:
                counts = robot.stats.refused
                return {
                    "forged": counts.get("auth", 0) + counts.get("session", 0),
                    "replayed": counts.get("replay", 0),
                    "malformed": robot_end.malformed,
                }

            await wait_until_async(
                lambda: all(n >= w for n, w in zip(refused().values(), (5, 5, 2), strict=True)),
                5,
                "the forgeries, replays and malformed puts refused and counted",
                show=refused,
            )
            return {
                "sessions": dict(robot.sessions),
                "accepted_before": accepted_before,
                "accepted_after": len(commands),
                "tank": [c for c in commands if isinstance(c, TankCommand)],
                "refused": dict(robot.stats.refused),
                "malformed": robot_end.malformed,
                "replayed": len(replayed),
                "telemetry": len(telemetry),
            }
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            spy.undeclare()
            robot_end.close()
            station_end.close()
            for bus in (spy_bus, station_bus, robot_bus):
                bus.close()

    out = asyncio.run(scenario())
    assert 1 in out["sessions"]  # type: ignore[operator]
    assert out["telemetry"] > 0  # type: ignore[operator]
    assert out["tank"] == [TankCommand(0.25, 0.0)]  # only the station's, and only once
    refused = out["refused"]
    assert isinstance(refused, dict)
    assert refused.get("auth", 0) + refused.get("session", 0) >= 5  # the forgeries
    assert out["replayed"] >= 5
    assert refused.get("replay", 0) >= 5  # the replays
    assert out["malformed"] == 2  # a key that is not a tag, a payload longer than a packet


def test_two_stations_contend_for_one_robot_over_zenoh() -> None:
    """Two stations of equal authority over Zenoh: the first to ask drives, the second is
    refused while it holds control and its commands move nothing (they are counted). Video
    comes over the robot's video channel."""
    port = free_port()
    key = derive_key("fleet key")
    config, world = load_robot("pioneer3dx"), load_world("square")
    url = f"zenoh://127.0.0.1:{port}/r1"

    async def scenario() -> dict[str, object]:
        server, robot = simulated_server(
            config,
            world,
            ServerOptions(listen=url, key=key, camera=True, camera_rate=10.0),
            robot_map=None,
        )
        # the stations share the key, so its bus user may read both stations' channels
        spy_bus = ZenohBus.peer(
            connect=[f"tcp/127.0.0.1:{port}"], auth=ZenohAuth(user=station_user(key))
        )
        keys_seen: set[str] = set()
        spies = [
            spy_bus.session.declare_subscriber(
                f"freelook/r1/{channel}/{station_user(key).name}-$*",
                lambda s: keys_seen.add(str(s.key_expr).split("/")[2]),
            )
            for channel in ("telemetry", "video")
        ]
        first = OperatorStation(config, None, parse_transport_url(url), key=key, station=1)
        second = OperatorStation(config, None, parse_transport_url(url), key=key, station=2)
        try:
            async with serving(server), running(first):
                await wait_until_async(lambda: first.in_control, 5, "the first station in control")
                async with running(second):
                    await wait_until_async(
                        lambda: second.core.refused_control, 5, "the second station refused"
                    )
                    core = server.program.core
                    before = core.arbiter.dropped.get(2, 0)
                    second.drive_command = TankCommand(0.4, 0.0)
                    # ten of its commands reached the robot (and were dropped: had they been
                    # obeyed, the robot would be moving), and the first station has pictures
                    await wait_until_async(
                        lambda: (
                            core.arbiter.dropped.get(2, 0) >= before + 10
                            and first.assembler.completed > 0
                            and len(keys_seen) == 2
                        ),
                        10,
                        "the second station's commands dropped, and video",
                        show=lambda: (core.arbiter.dropped, first.assembler.completed, keys_seen),
                    )
                    return {
                        "first": first.in_control,
                        "second": second.in_control,
                        "second_refused": second.core.refused_control,
                        "second_hears": second.telemetry is not None,
                        "controller": second.telemetry.controller if second.telemetry else None,
                        "holder": core.arbiter.holder(server.runtime.now()),
                        "dropped": core.arbiter.dropped.get(2, 0),
                        "speed": robot.sim.ground_truth.v,
                        "frames": first.assembler.completed,
                        "channels": sorted(keys_seen),
                    }
        finally:
            for spy in spies:
                spy.undeclare()
            spy_bus.close()

    out = asyncio.run(scenario())
    assert out["first"] is True
    assert out["second"] is False
    assert out["second_refused"] is True
    assert out["second_hears"] is True  # it watches: telemetry says who controls
    assert out["controller"] == 1
    assert out["holder"] == 1
    assert out["dropped"] > 0  # type: ignore[operator]
    assert out["speed"] == 0.0  # the second station's commands moved nothing
    assert out["frames"] > 0  # type: ignore[operator]
    assert out["channels"] == ["telemetry", "video"]  # frames on their own key


def test_discovery_lists_the_robots_on_the_bus() -> None:
    port = free_port()

    async def scenario() -> tuple[list[RobotInfo], list[str], list[str]]:
        robots_bus = ZenohBus.peer(listen=[f"tcp/127.0.0.1:{port}"])
        station_bus = ZenohBus.peer(connect=[f"tcp/127.0.0.1:{port}"])
        ends = [
            robots_bus.robot(RobotInfo(name, model))
            for name, model in (("r2", "pioneer3dx"), ("r1", "taros"))
        ]
        try:
            found = await _discovered(station_bus, 2)
            # the liveliness query answered within 5 s (an answer is awaited; a busy machine's
            # may take longer than the half second a quiet one needs)
            alive = await asyncio.to_thread(station_bus.alive, 5.0)
            ends[0].close()  # r2 goes away: its token and its queryable with it
            said: list[list[str]] = [alive]

            async def r2_gone() -> bool:
                said.append(await asyncio.to_thread(station_bus.alive, 0.5))
                return "r2" not in said[-1]

            await wait_until_async(r2_gone, 10, "r2 gone from the bus", show=lambda: said[-1])
            return found, alive, said[-1]
        finally:
            for end in ends:
                end.close()
            station_bus.close()
            robots_bus.close()

    found, alive, after = asyncio.run(scenario())
    assert found == [RobotInfo("r1", "taros"), RobotInfo("r2", "pioneer3dx")]
    assert alive == ["r1", "r2"]
    assert after == ["r1"]


def test_robots_and_stations_on_many_hosts_meet_through_a_router() -> None:
    """``freelook fleet router`` (the README's command, on loopback): a robot and a station
    in client mode find each other through it, and ``freelook fleet list`` names the robot."""
    import subprocess
    import sys

    from typer.testing import CliRunner

    from freelook.cli import app

    port = free_port()
    router = subprocess.Popen(
        [sys.executable, "-m", "freelook.cli", "fleet", "router", "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        assert router.stdout is not None
        assert "listening on" in router.stdout.readline()
        url = parse_transport_url(f"zenoh://127.0.0.1:{port}/r7?mode=client")

        async def scenario() -> tuple[list[RobotInfo], int, str]:
            robot_bus = ZenohBus.for_url(url, listen=True)
            station_bus = ZenohBus.for_url(url, listen=False)
            robot_end = robot_bus.robot(RobotInfo("r7", "pioneer3dx"))
            station_end = station_bus.station("r7")
            try:
                found = await _discovered(station_bus, 1)
                station_end.send(b"hello robot")
                item = await robot_end.recv_from(5.0)
                assert item is not None
                robot_end.learn_peer(item[1])
                robot_end.send(b"hello station", item[1])
                back = await station_end.recv_from(5.0)
                listed = await asyncio.to_thread(
                    CliRunner().invoke, app, ["fleet", "list", url_text(port)]
                )
                assert back is not None
                return found, len(item[0]), listed.output + back[0].decode()
            finally:
                robot_end.close()
                station_end.close()
                station_bus.close()
                robot_bus.close()

        found, size, text = asyncio.run(scenario())
    finally:
        router.terminate()
        router.wait(timeout=10)
        if router.stdout is not None:
            router.stdout.close()
    assert found == [RobotInfo("r7", "pioneer3dx")]
    assert size == len(b"hello robot")
    assert "r7\tpioneer3dx\tnative" in text
    assert text.endswith("hello station")


def url_text(port: int) -> str:
    return f"zenoh://127.0.0.1:{port}/any?mode=client"
