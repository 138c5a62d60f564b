"""A robot behind a real NAT (network namespaces, iptables MASQUERADE with random ports, one
UDP port forwarded to the robot) driven by a station on the NAT's far side; mid-drive the NAT
loses its state (``conntrack -F``) and the robot's next packets leave from a new random port.

``freelook robot`` runs in the robot's namespace as a user starts it, the station in this
process inside the operator's namespace. The flush costs at most a second of telemetry and no
session re-open: the station follows the robot's verified packets to its new port (and the
robot its station's, which the NAT moved too), and the robot keeps driving. Skipped where
namespaces cannot be made (not root, no ``ip``, ``iptables`` or ``conntrack``); the namespaces
are deleted after the test whatever happened."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Iterator

import pytest

from cli_processes import read_until, stop
from freelook.config import load_robot
from freelook.link import UdpEndpoint, VelocityCommand, link_key
from freelook.operator import OperatorStation
from keys_for_tests import KEY_A
from loopback import OPENS, alive, running, session_open
from netns import NatWorld, entered, nat_world, unavailable
from waiting import wait_until_async

CONFIG = load_robot("pioneer3dx")
#: s a robot program may take to serve: a first start compiles its loops
FIRST_START = 480.0


@pytest.fixture
def world() -> Iterator[NatWorld]:
    why = unavailable()
    if why is not None:
        pytest.skip(why)
    with nat_world() as made:
        yield made


async def _robot_in(world: NatWorld) -> tuple[asyncio.subprocess.Process, list[str]]:
    process = await asyncio.create_subprocess_exec(
        "ip", "netns", "exec", world.robot,
        sys.executable, "-m", "freelook.cli", "robot", "--hardware", "sim", "--world",
        "square", "--listen", f"udp://0.0.0.0:{world.port}", "--key", KEY_A,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
    )  # fmt: skip
    lines: list[str] = []
    try:
        await read_until(process, lines, lambda line: "profile on" in line, FIRST_START, "serve")
    except BaseException:
        await stop(process)
        raise
    return process, lines


async def _drain(process: asyncio.subprocess.Process, lines: list[str]) -> None:
    """Keep reading what the robot says (a full pipe would stall it)."""
    assert process.stdout is not None
    while line := await process.stdout.readline():
        lines.append(line.decode(errors="replace"))


def _reported_speed(station: OperatorStation) -> float:
    telemetry = station.core.telemetry
    return 0.0 if telemetry is None else telemetry.v


class Watch:
    """The longest gap between the robot's reports at the station and the lowest speed they
    reported, sampled every 5 ms."""

    def __init__(self, station: OperatorStation) -> None:
        self.station = station
        self.longest = 0.0
        self.slowest = _reported_speed(station)
        self.task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        seen, last = self.station.core.report_rx, loop.time()
        while True:
            await asyncio.sleep(0.005)
            now = loop.time()
            if self.station.core.report_rx != seen:
                seen = self.station.core.report_rx
                self.longest = max(self.longest, now - last)
                self.slowest = min(self.slowest, _reported_speed(self.station))
                last = now


def test_a_conntrack_flush_mid_drive_costs_under_a_second_of_telemetry_and_no_reopen(
    world: NatWorld,
) -> None:
    key = link_key(KEY_A)
    assert key is not None

    async def scenario() -> None:
        robot, lines = await _robot_in(world)
        drain = asyncio.create_task(_drain(robot, lines))
        try:
            station = OperatorStation(CONFIG, None, world.robot_public, key=key)
            async with running(station) as (task,):
                await wait_until_async(
                    lambda: alive(task) and session_open(station), OPENS, "the session"
                )
                assert station.driver is not None
                endpoint = station.driver.endpoint
                assert isinstance(endpoint, UdpEndpoint)
                station.drive_command = VelocityCommand(0.3, 0.0)
                await wait_until_async(
                    lambda: _reported_speed(station) > 0.25, 20.0, "the robot to drive"
                )
                before = endpoint.peer
                watch = Watch(station)
                await asyncio.sleep(1.0)
                await asyncio.get_running_loop().run_in_executor(None, world.flush_conntrack)
                await wait_until_async(lambda: endpoint.moves >= 1, 5.0, "the station to follow")
                await asyncio.sleep(2.0)
                watch.task.cancel()
                alive(task)
            assert endpoint.peer != before  # the robot's packets came from a new port
            assert endpoint.peer is not None
            assert endpoint.peer[0] == world.robot_public[0]
            assert station.sessions_opened == 1  # no session re-open
            assert station.sessions_resumed == 0
            assert watch.longest < 1.0, watch.longest
            assert watch.slowest > 0.2, watch.slowest  # the robot drove all along (0.3 m/s)
        finally:
            await stop(robot)
            await drain
        said = "".join(lines)
        assert "Traceback" not in said, said

    with entered(world.operator):
        asyncio.run(scenario())
