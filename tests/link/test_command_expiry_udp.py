"""Commands that expire, over real UDP on loopback: a relay between station and robot holds
every packet of the station's for a 3 s outage (while the station keeps commanding forward),
then lets its queue out first in, first out at one datagram per 10 ms, as a radio's full
buffer drains, with the station's new packets joining the queue's end; the operator let go
when the outage ended. The queued commands arrive 3 s to 1 s late: with expiry the robot
refuses every one of them, counts it and does not move; without (the station stamps none),
the queued commands the link's 2 s stale bound lets through drive the robot on."""

from __future__ import annotations

import asyncio
import math
import struct
from collections import deque
from typing import Any

import pytest

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import PacketRecord, VelocityCommand
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from loopback import robot_and_station
from waiting import wait_until_async

CONFIG = load_robot("pioneer3dx")
KEY = bytes(range(32))
SPEED = 0.4  # m/s forward during the outage
OUTAGE = 3.0  # s
DRAIN = 0.01  # s between datagrams as the queue drains
TYPE_VELOCITY = 1  # the native profile's VelocityCommand (docs/protocol.md)


def forward(data: bytes) -> bool:
    """Whether a native packet is a VelocityCommand moving forward (its header and payload
    are authenticated, not encrypted: a relay can read them)."""
    return len(data) > 30 and data[4] == TYPE_VELOCITY and struct.unpack_from("<f", data, 22)[0] > 0


class OutageRelay(asyncio.DatagramProtocol):
    """Forwards between one station and the robot; while :attr:`holding`, the station's
    datagrams queue, and :meth:`drain` lets the queue out in order at one per ``DRAIN`` s."""

    def __init__(self) -> None:
        self.robot: tuple[str, int] = ("127.0.0.1", 0)
        self.station: tuple[str, int] | None = None
        self.holding = False
        self.queue: deque[bytes] = deque()
        self.draining = False
        self.held_forward = 0
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a datagram endpoint's

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        assert self.transport is not None
        if addr == self.robot:
            if self.station is not None:
                self.transport.sendto(data, self.station)
            return
        self.station = addr
        if self.holding or self.queue:
            # a forward command still in flight when the outage ends joins the queue's end
            # too: it is held like the others, and counted with them
            if forward(data):
                self.held_forward += 1
            self.queue.append(data)
        else:
            self.transport.sendto(data, self.robot)

    async def drain(self) -> None:
        self.holding = False
        self.draining = True
        while self.queue:
            assert self.transport is not None
            self.transport.sendto(self.queue.popleft(), self.robot)
            await asyncio.sleep(DRAIN)
        self.draining = False


async def outage(expiry: bool) -> dict[str, Any]:
    server, robot = simulated_server(
        CONFIG,
        load_world("square"),
        ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False),
        robot_map=None,
    )
    loop = asyncio.get_running_loop()
    relay = OutageRelay()
    transport, _ = await loop.create_datagram_endpoint(lambda: relay, local_addr=("127.0.0.1", 0))
    relay_address = transport.get_extra_info("sockname")[:2]
    # what the robot's link did with each forward command the outage held
    fates: list[tuple[bool, str]] = []

    def station_for(address: tuple[str, int] | None) -> OperatorStation:
        assert address is not None
        relay.robot = address
        station = OperatorStation(CONFIG, None, relay_address, key=KEY)
        if not expiry:
            station.session.command_lifetime = None
        return station

    def truth() -> tuple[float, float]:
        state = robot.sim.ground_truth
        return state.x, state.y

    try:
        async with robot_and_station(server, station_for) as station:
            recorded = server.session.on_packet

            def record(packet: PacketRecord) -> None:
                if relay.draining and forward(packet.data):
                    fates.append((packet.accepted, packet.kind))
                if recorded is not None:
                    recorded(packet)

            server.session.on_packet = record
            clock = station.session.clock
            await wait_until_async(lambda: clock.ready, 10.0, "the robot's clock echo")
            core = server.program.core
            relay.holding = True
            started = loop.time()
            station.drive_command = VelocityCommand(SPEED, 0.0)
            await wait_until_async(
                lambda: loop.time() - started >= OUTAGE and relay.held_forward >= 50,
                3 * OUTAGE,
                "the outage to queue 50 commands",
            )
            station.drive_command = VelocityCommand(0.0, 0.0)  # the operator let go
            late_before = core.log.late_commands
            start = truth()
            moved = 0.0
            drained = asyncio.create_task(relay.drain())
            until = loop.time() + 30.0
            while not drained.done() and loop.time() < until:
                await asyncio.sleep(0.02)
                moved = max(moved, math.dist(start, truth()))
            await drained
            settle = loop.time() + CONFIG.safety.watchdog_timeout + 1.0
            while loop.time() < settle:
                await asyncio.sleep(0.02)
                moved = max(moved, math.dist(start, truth()))
            return {
                "moved": moved,
                "late": core.log.late_commands - late_before,
                "held": relay.held_forward,
                "fates": fates,
                "offset": clock.offset,
            }
    finally:
        transport.close()


def one_command(lifetime: float) -> float:
    """How far one forward command moves the robot from rest: it accelerates for the
    command's lifetime (at most to ``SPEED``), then brakes."""
    drive = CONFIG.drive
    reach = min(SPEED, drive.max_acceleration * lifetime)
    rising = reach / drive.max_acceleration
    return (
        reach * rising / 2 + reach * (lifetime - rising) + reach**2 / (2 * drive.max_deceleration)
    )


@pytest.mark.parametrize("expiry", [True, False], ids=["expiry", "no-expiry"])
def test_a_queue_released_after_an_outage_moves_the_robot_at_most_one_command(
    expiry: bool,
) -> None:
    result = asyncio.run(outage(expiry))
    accepted = sum(1 for ok, _ in result["fates"] if ok)
    assert result["held"] >= 50
    # every held forward command reached the robot's link; those older than its 2 s stale
    # bound were refused there (replay), the others it let through to the robot program
    assert len(result["fates"]) == result["held"], result
    assert {kind for ok, kind in result["fates"] if not ok} <= {"replay"}, result
    assert accepted > 0, result
    if expiry:
        # the robot refused and counted every one of those (and the station's stops queued
        # behind them, as late): none acted, so the robot stood
        assert result["late"] >= accepted, result
        assert result["moved"] <= one_command(0.5), result
        assert result["moved"] < 0.02, result
    else:
        # what the expiry removes: the same queue, 1 to 2 s old, drives the robot
        assert result["late"] == 0, result
        assert result["moved"] > 0.05, result
