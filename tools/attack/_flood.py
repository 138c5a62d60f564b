"""A flood against a running robot or its operator station while the operator drives
(loopback only).

Used by the ``link.flood…`` benchmarks and the flood tests: the robot server and the operator
station run in this process on a simulated robot with its camera on; a separate process sends
datagrams to the robot's port or to the station's, as fast as asked, from one socket or from
many (each its own source port), either signed with a wrong key or plain garbage. The figures:
watchdog stops while driving (the chassis turning on the spot), the share of the telemetry
showing it turn as commanded, the share of the robot's packets that reached the station
during the flood, and the telemetry rate and driving-camera frame rate the operator kept,
against the same run without the flood. The rates depend on the machine (the flooder and the
kernel take their share of its cores); the shares do not: tests assert on them, the
benchmarks report the rates.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from freelook.operator import OperatorStation

__all__ = ["FloodResult", "flood_trial"]


_FLOODER = """
import os, random, socket, sys, time
from freelook.link import NativeCodec, VelocityCommand
port, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
payload, count = sys.argv[4], int(sys.argv[5])
if payload == "garbage":
    draw = random.Random(7)
    packets = [os.urandom(draw.randrange(1, 1400)) for _ in range(256)]
else:
    codec = NativeCodec(bytes(32), sender=1)
    packets = [codec.encode(VelocityCommand(1.0, 0.0), time.time()) for _ in range(256)]
socks = [socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for _ in range(count)]
target = ("127.0.0.1", port)
start = time.monotonic(); sent = 0
while (now := time.monotonic()) - start < seconds:
    due = int((now - start) * rate)
    while sent < due:
        try:
            socks[sent % count].sendto(packets[sent & 255], target)
        except OSError:  # the receiver's buffer is full: it was sent as far as this end goes
            pass
        sent += 1
    time.sleep(0.0005)
print(sent)
"""

Target = Literal["robot", "station"]
Payload = Literal["wrong_key", "garbage"]


@dataclass(frozen=True)
class FloodResult:
    flood_pps: float  # what the flooder achieved
    watchdog_stops: int  # watchdog trips while the operator drove
    telemetry_hz: float  # at the operator, during the flood
    telemetry_hz_quiet: float  # at the operator, the same time without a flood
    video_fps: float  # driving-camera frames completed at the operator, during the flood
    video_fps_quiet: float  # the same without a flood
    refused: int  # packets the flooded end refused or dropped unread
    delivered: float  # of the robot's packets during the flood, the share the station got
    #: the share of the telemetry during the flood that shows the chassis turning as commanded
    #: (a robot that stood still would pass the other figures)
    driving_share: float = 0.0


@dataclass(frozen=True)
class _Run:
    trips: int
    telemetry_hz: float
    video_fps: float
    flood_pps: float
    refused: int
    delivered: float
    driving_share: float


WARM_UP = 30.0  # s: a bound for the first telemetry and video to arrive, not a timing
TURN = 0.5  # rad/s: the operator's command while the flood runs


async def _driving_share(station: OperatorStation, seconds: float) -> float:
    """For ``seconds``: the share of new telemetry showing the chassis commanded to turn."""
    loop = asyncio.get_running_loop()
    until = loop.time() + seconds
    seen: set[float] = set()
    turning = 0
    while loop.time() < until:
        telemetry = station.telemetry
        if telemetry is not None and telemetry.stamp not in seen:
            seen.add(telemetry.stamp)
            turning += telemetry.cmd_omega > 0.5 * TURN
        await asyncio.sleep(0.02)
    return turning / len(seen) if seen else 0.0


async def _flowing(station: OperatorStation, timeout: float) -> None:
    """Until the station has control and gets telemetry and video at their rates (the first
    frames of a process compile and warm the renderer)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    core = station.core
    while not (
        core.in_control
        and core.telemetry_rate.rate(station.clock()) > 10
        and core.video_rate.rate(station.clock()) > 5
    ):
        if loop.time() > deadline:
            raise RuntimeError(f"no telemetry and video at the station within {timeout:g} s")
        await asyncio.sleep(0.05)


async def _drive(
    seconds: float, flood_pps: float, target: Target, payload: Payload, sockets: int
) -> _Run:
    from freelook.config import load_robot
    from freelook.hardware.sim import simulated_server
    from freelook.link import UdpEndpoint, VelocityCommand, derive_key
    from freelook.maps import load_world
    from freelook.operator import OperatorStation
    from freelook.robot import ServerOptions

    config, world = load_robot("pioneer3dx"), load_world("square")
    key = derive_key("flood")
    options = ServerOptions(listen="udp://127.0.0.1:0", key=key, camera=True)
    server, _ = simulated_server(config, world, options, robot_map=None)
    robot_task = asyncio.create_task(server.run())
    await server.ready.wait()
    assert server.local_address is not None
    station = OperatorStation(config, None, server.local_address, key=key)
    station_task = asyncio.create_task(station.run())
    flooder = None
    try:
        await _flowing(station, WARM_UP)
        station.drive_command = VelocityCommand(0.0, TURN)  # the chassis turning on the spot
        await asyncio.sleep(0.5)
        assert station.driver is not None
        assert server.driver is not None
        flooded = server.driver.endpoint if target == "robot" else station.driver.endpoint
        assert isinstance(flooded, UdpEndpoint)
        stats = (server.session if target == "robot" else station.session).stats

        def refused() -> int:
            failures = stats.auth_failures + stats.crc_failures + stats.malformed
            return failures + flooded.dropped_strangers

        refused_before = refused()
        if flood_pps > 0:
            flooder = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _FLOODER,
                str(flooded.local_address[1]),
                str(flood_pps),
                str(seconds),
                payload,
                str(sockets),
                stdout=subprocess.PIPE,
            )
        trips = sum(1 for e in server.program.core.log.events if e.kind == "watchdog")
        heard = station.session.stats
        received, lost = heard.received, heard.lost
        driving = await _driving_share(station, seconds)
        received, lost = heard.received - received, heard.lost - lost
        delivered = received / (received + lost) if received + lost else 0.0
        now = station.clock()
        telemetry_hz = station.core.telemetry_rate.rate(now)  # over the flood's last 2 s
        video_fps = station.core.video_rate.rate(now)
        trips = sum(1 for e in server.program.core.log.events if e.kind == "watchdog") - trips
        sent = 0
        if flooder is not None:
            out, _ = await flooder.communicate()
            sent = int(out.decode().strip() or 0)
        refused_now = refused() - refused_before
        return _Run(trips, telemetry_hz, video_fps, sent / seconds, refused_now, delivered, driving)
    finally:
        if flooder is not None and flooder.returncode is None:
            flooder.kill()
            await flooder.wait()
        for task in (station_task, robot_task):
            task.cancel()
        await asyncio.gather(station_task, robot_task, return_exceptions=True)


def flood_trial(
    flood_pps: float,
    seconds: float = 5.0,
    *,
    target: Target = "robot",
    payload: Payload = "wrong_key",
    sockets: int = 1,
) -> FloodResult:
    """Drive for ``seconds`` without and then with a flood of ``flood_pps`` packets of
    ``payload`` at ``target``'s port from ``sockets`` sockets."""
    quiet = asyncio.run(_drive(seconds, 0.0, target, payload, sockets))
    run = asyncio.run(_drive(seconds, flood_pps, target, payload, sockets))
    return FloodResult(
        run.flood_pps,
        run.trips,
        run.telemetry_hz,
        quiet.telemetry_hz,
        run.video_fps,
        quiet.video_fps,
        run.refused,
        run.delivered,
        run.driving_share,
    )
