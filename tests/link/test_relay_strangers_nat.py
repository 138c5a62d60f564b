"""Strangers on the relay, both ends behind NAT (the namespaces of ``test_relay_nat``): a
robot and its driver connect out through their MASQUERADE NATs to ``freelook relay`` on TLS;
the driver holds control and commands a stand-still. Then, from the public namespace (a
machine on the internet), the security round's Zenoh attacks are run through the relay:

* peers without credentials (no login, a guessed station user, the driver's user with a wrong
  password, and no TLS at all) subscribe to everything and put forged packets on the robot's
  control keys: the relay refuses them outright, they reach nothing and hear nothing;
* a peer holding a station's bus login (its password, as a stolen relay users file holds it)
  but not that station's link key subscribes to everything, puts forged packets (a key of its
  own) and replayed ones (the driver's packets signed 30 s ago, as a recording of the wire
  would hold them) on its own control key, and tries the driver's key too: it hears nothing of
  the driver's, and the robot drops every packet of its that arrives, counted by reason.

The robot's truth pose (the simulator's) does not move, the driver stays in control. Every
process runs as a user starts it, in its namespace, and is stopped by its pid."""

from __future__ import annotations

import asyncio
import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_relay_nat import (
    FIRST_START,
    PORT,
    RELAY,
    RelayWorld,
    _files,
    _read_until,
    _start,
    _stop,
    relay_world,
)

from keys_for_tests import KEY_B
from netns import unavailable

#: the second station's id in the robot's keys file: its bus login is the intruder's
INTRUDER = 2
#: packets each kind of injection puts on the relay
INJECTED = 200


@pytest.fixture
def world() -> Iterator[RelayWorld]:
    why = unavailable() or (None if shutil.which("openssl") else "openssl is not installed")
    if why is not None:
        pytest.skip(why)
    with relay_world() as made:
        yield made


def _say(process: subprocess.Popen[str], line: str) -> None:
    assert process.stdin is not None
    process.stdin.write(line + "\n")
    process.stdin.flush()


@pytest.mark.timeout(FIRST_START + 180)
def test_a_peer_on_the_relay_without_credentials_reads_nothing_and_moves_nothing(
    world: RelayWorld, tmp_path: Path
) -> None:
    keys = _files(tmp_path, f'[stations.{INTRUDER}]\nkey = "{KEY_B}"\nauthority = 10\n')
    url = f"zenoh+tls://{RELAY}:{PORT}/r1"
    ca = str(tmp_path / "ca.pem")
    started: list[subprocess.Popen[str]] = []
    said: dict[str, list[str]] = {"relay": [], "robot": [], "station": [], "attack": []}
    try:
        relay = _start(world.public, "-m", "freelook.cli", "relay", "--listen",
                       f"tls/{RELAY}:{PORT}", "--users", str(tmp_path / "relay.toml"))  # fmt: skip
        started.append(relay)
        _read_until(relay, "listening on", 60, said["relay"])
        robot = _start(world.robot, __file__, "robot", url, str(keys))
        started.append(robot)
        _read_until(robot, "SERVING", FIRST_START, said["robot"])
        station = _start(world.station, __file__, "station", url, ca)
        started.append(station)
        tag = _read_until(station, "CONTROL ", 60, said["station"]).split()[1]
        _say(robot, "STATE")
        before = json.loads(_read_until(robot, "STATE ", 30, said["robot"]).split(" ", 1)[1])
        attack = _start(world.public, __file__, "attack", ca, tag)
        started.append(attack)
        line = _read_until(attack, "RESULT ", 120, said["attack"])
        heard = json.loads(line.split(" ", 1)[1])
        time.sleep(1.0)  # what was put arrives
        _say(robot, "STATE")
        after = json.loads(_read_until(robot, "STATE ", 30, said["robot"]).split(" ", 1)[1])
        _say(station, "END")
        driver = json.loads(_read_until(station, "RESULT ", 30, said["station"]).split(" ", 1)[1])
    finally:
        for process in reversed(started):
            _stop(process)
    refused = {k: v - before["refused"].get(k, 0) for k, v in after["refused"].items()}
    refused = {k: v for k, v in refused.items() if v}
    moved = math.dist(before["truth"][:2], after["truth"][:2])
    turned = abs(after["truth"][2] - before["truth"][2])
    print(f"\nstrangers through the relay: {heard}; robot refused {refused}, moved {moved:.4f} m;")
    print(f"the driver: {driver}")
    # refused outright: no login, a guessed user, a wrong password, no TLS
    assert heard["connected"] == [0, 0, 0, 0], heard
    assert heard["heard"] == [0, 0, 0, 0], heard
    # a station's login without its key: on the relay, but nothing of the driver's reaches it
    assert heard["intruder_connected"] > 0, heard
    assert heard["intruder_heard_driver"] == 0, heard
    # its forged and replayed packets that reached the robot were dropped, each counted
    assert refused.get("auth", 0) + refused.get("session", 0) > 0, refused
    assert sum(refused.values()) <= heard["put"], (refused, heard)
    assert set(refused) <= {"auth", "session", "replay", "rate"}, refused
    assert moved < 1e-3, (before, after)
    assert turned < 1e-3, (before, after)
    assert after["controller"] == 1, after
    assert driver["in_control"], driver
    assert driver["telemetry_hz"] > 5, driver
    for name in ("relay", "robot"):
        assert "Traceback" not in "".join(said[name]), said[name]


# -- the processes, each run in its namespace by the test above ------------------------------


async def _robot(url: str, keys: str) -> None:
    """The robot on the relay; at each STATE line on its input, its truth pose, what its
    session refused (by reason) and who is in control."""
    from freelook.config import load_robot
    from freelook.hardware.sim import simulated_server
    from freelook.link import KeyRing
    from freelook.maps import load_world
    from freelook.robot import ServerOptions
    from loopback import serving

    server, robot = simulated_server(
        load_robot("pioneer3dx"),
        load_world("square"),
        ServerOptions(listen=url, keys=KeyRing.load(Path(keys)), camera=False),
        robot_map=None,
    )
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with serving(server, timeout=FIRST_START):
        print("SERVING", flush=True)
        while await reader.readline():
            stats = server.session.stats
            state = {
                "truth": list(robot.sim.vehicle.pose()),
                "refused": dict(stats.refused),
                "controller": server.program.core.arbiter.holder(robot.now()),
            }
            print("STATE " + json.dumps(state), flush=True)


async def _station(url: str) -> dict[str, Any]:
    """The driver: in control, commanding a stand-still, until END on its input."""
    from test_relay import STATION_KEY

    from freelook.config import load_robot
    from freelook.link import VelocityCommand, derive_key, parse_transport_url
    from freelook.operator import OperatorStation
    from loopback import alive, running
    from waiting import wait_until_async

    station = OperatorStation(
        load_robot("pioneer3dx"), None, parse_transport_url(url), key=derive_key(STATION_KEY),
        station=1,
    )  # fmt: skip
    station.drive_command = VelocityCommand(0.0, 0.0)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    async with running(station) as (task,):
        await wait_until_async(lambda: alive(task) and station.in_control, 60, "in control")
        assert station.driver is not None
        print(f"CONTROL {getattr(station.driver.endpoint, 'tag', '')}", flush=True)
        await reader.readline()
        alive(task)
        return {
            "in_control": station.in_control,
            "telemetry_hz": station.core.telemetry_rate.rate(station.clock()),
            "opened": station.sessions_opened,
        }


def _attack(ca: str, driver_tag: str) -> dict[str, Any]:
    """The strangers, then the intruder, against the relay (see the module's words)."""
    import random

    from test_relay import STATION_KEY
    from test_relay import _tls_peer as tls_peer
    from test_zenoh_acl import Peer

    from freelook.link import NativeCodec, VelocityCommand, derive_key, station_user

    endpoint = f"tls/{RELAY}:{PORT}"
    driver = station_user(derive_key(STATION_KEY))
    strangers = [
        tls_peer(endpoint, Path(ca), None),
        tls_peer(endpoint, Path(ca), ("station-0000000000000000", "guess")),
        tls_peer(endpoint, Path(ca), (driver.name, "not the password")),
        Peer("client", f"tcp/{RELAY}:{PORT}", None),
    ]
    login = station_user(derive_key(KEY_B))  # the intruder's login, not its link key
    intruder = tls_peer(endpoint, Path(ca), (login.name, login.password))
    for peer in [*strangers, intruder]:
        for key in ("**", "freelook/**", "freelook/r1/*/*"):
            peer.listen(key)
    draw = random.Random(60)
    forged = NativeCodec(draw.randbytes(32), sender=INTRUDER)  # a key of its own
    recorded = NativeCodec(derive_key(STATION_KEY), sender=1)  # the driver's, 30 s ago
    then = time.time() - 30.0
    packets = [forged.encode(VelocityCommand(1.0, 0.5), time.time()) for _ in range(INJECTED)]
    packets += [
        recorded.encode(VelocityCommand(1.0, 0.0), then + i * 0.05) for i in range(INJECTED)
    ]
    own = f"freelook/r1/control/{login.name}-{draw.randbytes(8).hex()}"
    put = 0
    for i, data in enumerate(packets):
        for peer in strangers:
            if peer.session is not None:
                peer.session.put(f"freelook/r1/control/{driver_tag}", data)
        assert intruder.session is not None
        intruder.session.put(own, data)  # its own key: the relay lets it through
        intruder.session.put(f"freelook/r1/control/{driver_tag}", data)  # the driver's: not
        put += 1
        if i % 20 == 19:
            time.sleep(0.05)
    time.sleep(2.0)
    out = {
        "connected": [peer.connected for peer in strangers],
        "heard": [peer.count("freelook/") for peer in strangers],
        "intruder_connected": intruder.connected,
        "intruder_heard": intruder.count("freelook/"),
        "intruder_heard_driver": intruder.count(driver.name),
        "put": put,
    }
    for peer in [*strangers, intruder]:
        peer.close()
    return out


if __name__ == "__main__":
    mode, args = sys.argv[1], sys.argv[2:]
    if mode == "robot":
        asyncio.run(_robot(*args))
    elif mode == "station":
        import os

        from freelook.link import TLS_CA_ENV

        os.environ[TLS_CA_ENV] = args[1]
        print("RESULT " + json.dumps(asyncio.run(_station(args[0]))), flush=True)
    else:
        print("RESULT " + json.dumps(_attack(*args)), flush=True)
