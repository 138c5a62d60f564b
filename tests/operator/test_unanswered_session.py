"""A station with a wrong key (or a station id the robot has no key for), over real UDP on
loopback: the station says its session requests go unanswered (a line for the terminal and a
field in the page's state), the robot logs what it refused, once per source and period, and a
station with the right key beside them opens its session as always."""

from __future__ import annotations

import asyncio
import logging
import socket
from pathlib import Path
from typing import Any

import pytest

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import KeyRing, UdpEndpoint, ZenohBus, derive_key, parse_transport_url
from freelook.maps import load_world
from freelook.operator import FleetStation, OperatorStation
from freelook.robot import ServerOptions
from keys_for_tests import write_keys_file
from loopback import running, serving
from waiting import wait_until_async

KEYS = """
[stations.1]
key = "station one"

[stations.2]
key = "station two"
"""


def test_wrong_keys_are_said_on_both_ends(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    write_keys_file(tmp_path / "keys.toml", KEYS)
    ring = KeyRing.load(tmp_path / "keys.toml", allow_weak=True)
    config, world = load_robot("pioneer3dx"), load_world("square")
    caplog.set_level(logging.WARNING, logger="freelook.robot")

    async def scenario() -> tuple[
        dict[str, list[str]], dict[str, dict[str, Any]], dict[str, tuple[str, int]]
    ]:
        server, _ = simulated_server(
            config,
            world,
            ServerOptions(listen="udp://127.0.0.1:0", keys=ring, camera=False),
            robot_map=None,
        )
        said: dict[str, list[str]] = {"wrong key": [], "unknown id": [], "right key": []}
        async with serving(server):
            address = server.local_address
            assert address is not None
            stations = {
                "wrong key": OperatorStation(
                    config, None, address, key=derive_key("not station one's"), station=1
                ),
                "unknown id": OperatorStation(
                    config, None, address, key=derive_key("station one"), station=9
                ),
                "right key": OperatorStation(
                    config, None, address, key=derive_key("station two"), station=2
                ),
            }
            for name, station in stations.items():
                station.on_status = said[name].append
            async with running(*stations.values()):
                await wait_until_async(
                    lambda: said["wrong key"] and said["unknown id"],
                    15,
                    "both refused stations to say their requests go unanswered",
                )
                await wait_until_async(
                    lambda: stations["right key"].telemetry, 15, "the right key's telemetry"
                )
                refused = [stations[name].session for name in ("wrong key", "unknown id")]
                asked = [session.unanswered_requests for session in refused]
                await wait_until_async(  # which the robot must not log again
                    lambda: all(
                        s.unanswered_requests >= n + 2 for s, n in zip(refused, asked, strict=True)
                    ),
                    15,
                    "two more requests from each refused station",
                )
                states = {name: s.state()["link"] for name, s in stations.items()}
                sources: dict[str, tuple[str, int]] = {}
                for name, station in stations.items():
                    assert station.driver is not None
                    assert isinstance(station.driver.endpoint, UdpEndpoint)
                    sources[name] = station.driver.endpoint.local_address
        return said, states, sources

    said, states, sources = asyncio.run(scenario())
    for name in ("wrong key", "unknown id"):
        (line,) = said[name]  # once, when it changed
        assert line.startswith("no answer to session request from the robot at udp://127.0.0.1:")
        assert "wrong key or station id, or no robot there" in line
        assert states[name]["session"] == "unanswered"
        assert states[name]["connected"] is False
    assert "as station 9" in said["unknown id"][0]
    assert said["right key"] == []  # it never went unanswered: nothing to say
    assert states["right key"]["session"] == "open"
    assert states["right key"]["connected"] is True
    # the robot: one line per refused source (within the 10 s period), naming it and why
    robot_lines = [r.getMessage() for r in caplog.records if r.name == "freelook.robot._server"]
    for name, reason in (("wrong key", "auth: tag does not verify"), ("unknown id", "session")):
        host, port = sources[name]
        mine = [line for line in robot_lines if f"{host}:{port} " in line]
        assert len(mine) == 1, robot_lines
        assert f"({reason}" in mine[0]
        assert "wrong key or station id" in mine[0]
    assert len(robot_lines) == 2, robot_lines  # the right key's station is not in the log


def test_a_fleet_station_with_a_wrong_key_says_so_for_its_robot() -> None:
    """Over Zenoh (``freelook operator --robot zenoh://…``): the fleet station's line names the
    robot on the bus that does not answer."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config, world = load_robot("pioneer3dx"), load_world("square")
    url = parse_transport_url(f"zenoh://127.0.0.1:{port}/scout-1")

    async def scenario() -> list[str]:
        server, _ = simulated_server(
            config,
            world,
            ServerOptions(listen=f"zenoh://127.0.0.1:{port}/scout-1", key=derive_key("right")),
            robot_map=None,
        )
        said: list[str] = []
        bus = ZenohBus.for_url(url, listen=False)
        fleet = FleetStation(
            config, None, bus, key=derive_key("wrong"), station=1, first="scout-1",
            on_status=said.append,
        )  # fmt: skip
        try:
            async with serving(server), running(fleet):
                await wait_until_async(lambda: said, 15, "the fleet station's line")
        finally:
            bus.close()
        return said

    (line,) = asyncio.run(scenario())
    assert line.startswith("no answer to session request from the robot at scout-1 on the Zenoh")
    assert "wrong key or station id, or no robot there" in line


def test_no_robot_there_then_a_robot_comes_the_station_says_both() -> None:
    """A station started before its robot: its requests go unanswered (no robot there); the
    robot starts on that address and the station says the session opened."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    config, world = load_robot("pioneer3dx"), load_world("square")
    key = derive_key("the one key")

    async def scenario() -> list[str]:
        said: list[str] = []
        station = OperatorStation(config, None, ("127.0.0.1", port), key=key)
        station.on_status = said.append
        async with running(station):
            await wait_until_async(lambda: said, 15, "the station to say nobody answers")
            server, _ = simulated_server(
                config,
                world,
                ServerOptions(listen=f"udp://127.0.0.1:{port}", key=key, camera=False),
                robot_map=None,
            )
            async with serving(server):
                await wait_until_async(
                    lambda: len(said) > 1, 15, "the station to say the session opened"
                )
                await wait_until_async(lambda: station.telemetry, 15, "telemetry")
        return said

    said = asyncio.run(scenario())
    assert said[0].startswith(
        f"no answer to session request from the robot at udp://127.0.0.1:{port}"
    )
    assert said[1:] == [f"session open with the robot at udp://127.0.0.1:{port}"]
