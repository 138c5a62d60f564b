"""The campaign's forged-source probe: datagrams towards the station that carry the robot's own
address and port in their IP and UDP headers (a raw socket writes them; root or CAP_NET_RAW),
while a driver drives.

A simulated robot behind a real robot server and a real operator station talk over UDP on
loopback, the station's page holding forward. The forgeries are 1-byte datagrams and native
packets with the robot's sync and length tagged with a key nobody holds, ``rate`` a second of
each. Effects: the robot moving more than 1 m while the driver's picture or telemetry is
stale, the robot stopping (the driver blinded), a packet of the robot's own refused with the
forgeries, or the session opened again. Without a raw socket the probe says so and tries
nothing.
"""

from __future__ import annotations

import asyncio
import math
import os
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import NativeCodec, UdpEndpoint, VelocityCommand, derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation, parse_browser_message
from freelook.robot import ServerOptions
from tools.attack._tally import Tally

__all__ = [
    "MAX_BLIND",
    "MIN_SPEED",
    "ForgedSourceRun",
    "attack_forged_sources",
    "forged_source_run",
    "raw_socket",
    "spoofed",
]

MAX_BLIND = 1.0  # m the robot may move while its driver cannot see (the security issue's bound)
PICTURE_STALE = 0.5  # s: a picture older than this is no picture to drive by
START = 20.0  # s: a bound for the session and the first frame
#: m/s the driver must average under the attack (held forward, it drives at about 0.25 m/s and
#: may slow near a wall): slower, and the forgeries stopped it
MIN_SPEED = 0.1
_ROBOT_ID = 100


def _checksum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total: int = sum(struct.unpack(f"!{len(data) // 2}H", data))
    total = (total >> 16) + (total & 0xFFFF)
    total += total >> 16
    return ~total & 0xFFFF


def spoofed(source: tuple[str, int], target: tuple[str, int], payload: bytes) -> bytes:
    """An IPv4 datagram from ``source`` to ``target`` carrying ``payload`` over UDP."""
    src, dst = socket.inet_aton(source[0]), socket.inet_aton(target[0])
    length = 8 + len(payload)
    pseudo = src + dst + struct.pack("!BBH", 0, socket.IPPROTO_UDP, length)
    header = struct.pack("!HHHH", source[1], target[1], length, 0)
    check = _checksum(pseudo + header + payload) or 0xFFFF
    udp = struct.pack("!HHHH", source[1], target[1], length, check) + payload
    ip = struct.pack(
        "!BBHHHBBH4s4s", 0x45, 0, 20 + length, 0, 0, 64, socket.IPPROTO_UDP, 0, src, dst
    )
    return ip + udp


def raw_socket() -> socket.socket | None:
    """A socket that writes whole IPv4 datagrams; None without the right to one."""
    try:
        return socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_RAW)
    except PermissionError:
        return None


@dataclass(frozen=True)
class ForgedSourceRun:
    """What a drive under forged datagrams came to (distances on the simulator's truth)."""

    driven: float  # m
    blind: float  # m moved while the driver's picture or telemetry was stale
    forged: int  # datagrams forged
    refused: int  # packets the station refused meanwhile
    reopened: int  # sessions opened again


def forged_source_run(raw: socket.socket, seconds: float, rate: float = 50.0) -> ForgedSourceRun:
    """Drive forward for ``seconds`` while ``raw`` forges ``rate`` datagrams a second of each
    kind from the robot's address to the station's."""
    return asyncio.run(_drive_under_forgeries(raw, seconds, rate))


async def _drive_under_forgeries(
    raw: socket.socket, seconds: float, rate: float
) -> ForgedSourceRun:
    config, world = load_robot("pioneer3dx"), load_world("square")
    key = derive_key(os.urandom(32).hex())
    server, robot = simulated_server(
        config, world, ServerOptions(listen="udp://127.0.0.1:0", key=key), robot_map=None
    )
    station: OperatorStation | None = None
    tasks = [asyncio.create_task(server.run())]
    try:
        await _until(lambda: server.ready.is_set(), tasks, "the robot to listen")
        robot_address = server.local_address
        assert robot_address is not None
        station = OperatorStation(config, None, robot_address, key=key)
        tasks.append(asyncio.create_task(station.run()))
        live = station
        await _until(
            lambda: live.session.session_status(live.clock()) == "open", tasks, "the session"
        )
        await _until(lambda: live.core.video_rx is not None, tasks, "the first camera frame")
        assert station.driver is not None
        endpoint = station.driver.endpoint
        assert isinstance(endpoint, UdpEndpoint)
        target = endpoint.local_address
        tasks.append(asyncio.create_task(_hold_forward(station)))
        liar = NativeCodec(os.urandom(32), sender=_ROBOT_ID)
        forgeries = (
            spoofed(robot_address, target, b"\x00"),
            spoofed(robot_address, target, liar.encode(VelocityCommand(0.0, 0.0), 1.0)),
        )
        await asyncio.sleep(1.0)  # under way
        refused_before = sum(station.session.stats.refused.values())
        opened_before = station.sessions_opened
        state = robot.sim.vehicle.state()
        driven = blind = 0.0
        forged = 0
        start = time.monotonic()
        while time.monotonic() - start < seconds:
            _check(tasks)
            for datagram in forgeries:
                raw.sendto(datagram, (target[0], 0))
            forged += len(forgeries)
            await asyncio.sleep(1.0 / rate)
            moved = robot.sim.vehicle.state()
            step = math.hypot(moved.x - state.x, moved.y - state.y)
            state = moved
            driven += step
            if not _sees(station, config.safety.watchdog_timeout):
                blind += step
        return ForgedSourceRun(
            driven,
            blind,
            forged,
            sum(station.session.stats.refused.values()) - refused_before,
            station.sessions_opened - opened_before,
        )
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


def _sees(station: OperatorStation, telemetry_bound: float) -> bool:
    now = station.clock()
    picture, telemetry = station.core.video_rx, station.core.report_rx
    return (
        picture is not None
        and now - picture <= PICTURE_STALE
        and telemetry is not None
        and now - telemetry <= telemetry_bound
    )


async def _hold_forward(station: OperatorStation) -> None:
    """The page: Free Look, forward held (repeated every 50 ms, as the page repeats it)."""
    mode = parse_browser_message({"type": "mode", "mode": "free_look"}, station.core.scales)
    assert mode is not None
    station.send(station.core.handle(mode, station.clock(), time.time()))
    held = {"type": "axes", "mode": "free_look", "forward": 0.5}
    while True:
        request = parse_browser_message(held, station.core.scales)
        assert request is not None
        station.send(station.core.handle(request, station.clock(), time.time()))
        await asyncio.sleep(0.05)


def _check(tasks: list[asyncio.Task[None]]) -> None:
    for task in tasks:
        if task.done():
            task.result()
            raise RuntimeError("a part of the run ended while it was attacked")


async def _until(test: Callable[[], bool], tasks: list[asyncio.Task[None]], what: str) -> None:
    deadline = time.monotonic() + START
    while not test():
        _check(tasks)
        if time.monotonic() > deadline:
            raise RuntimeError(f"no {what} within {START:g} s")
        await asyncio.sleep(0.02)


def attack_forged_sources(seconds: float, seed: int) -> Tally:
    """The probe: a drive under forged datagrams, judged (``seed``: the campaign's; the
    forgeries carry fresh random keys and need none)."""
    tally = Tally("forged sources: the robot's address at the station")
    raw = raw_socket()
    if raw is None:
        tally.notes.append("not run: writing a forged source address needs CAP_NET_RAW (root)")
        return tally
    try:
        run = forged_source_run(raw, seconds)
    except Exception as err:  # the robot or the station ended under the attack
        tally.crash(f"{type(err).__name__}: {err}"[:200])
        return tally
    finally:
        raw.close()
    tally.tried("forged datagram", run.forged)
    if run.blind > MAX_BLIND:
        tally.effect(f"the robot moved {run.blind:.2f} m while its driver could not see")
    if run.driven < MIN_SPEED * seconds:
        tally.effect(f"the driver was stopped: {run.driven:.2f} m in {seconds:g} s")
    if run.refused > run.forged:
        tally.effect(f"{run.refused - run.forged} of the robot's own packets refused")
    if run.reopened:
        tally.effect(f"the session opened again {run.reopened} times")
    tally.notes.append(
        f"{run.forged:,} forged; {run.refused:,} refused; {run.driven:.2f} m driven, "
        f"{run.blind:.2f} m of it blind"
    )
    return tally
