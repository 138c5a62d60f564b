"""A wrong-key flood against a running robot while an operator drives it (loopback only).

Used by the ``link.flood`` benchmark and the flood test: the robot server and the operator
station run in this process on a simulated robot; a separate process sends datagrams signed
with a wrong key to the robot's port as fast as asked. The figures: watchdog stops while
driving, and the telemetry rate the operator kept, against the same run without the flood.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from dataclasses import dataclass

__all__ = ["FloodResult", "flood_trial"]

_FLOODER = """
import socket, sys, time
from freelook.link import NativeCodec, VelocityCommand
port, rate, seconds = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
codec = NativeCodec(bytes(32), sender=1)
packets = [codec.encode(VelocityCommand(1.0, 0.0), time.time()) for _ in range(256)]
sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
start = time.monotonic(); sent = 0
while (now := time.monotonic()) - start < seconds:
    due = int((now - start) * rate)
    while sent < due:
        sock.sendto(packets[sent & 255], ("127.0.0.1", port)); sent += 1
    time.sleep(0.0005)
print(sent)
"""


@dataclass(frozen=True)
class FloodResult:
    flood_pps: float  # what the flooder achieved
    watchdog_stops: int  # watchdog trips while the operator drove
    telemetry_hz: float  # at the operator, during the flood
    telemetry_hz_quiet: float  # at the operator, the same time without a flood
    refused: int  # packets the robot refused


async def _drive(seconds: float, flood_pps: float) -> tuple[int, float, float, int]:
    from freelook.config import load_robot
    from freelook.hardware.sim import simulated_server
    from freelook.link import FreeLookCommand, derive_key
    from freelook.maps import load_world
    from freelook.operator import OperatorStation
    from freelook.robot import ServerOptions

    config, world = load_robot("pioneer3dx"), load_world("square")
    key = derive_key("flood")
    options = ServerOptions(listen="udp://127.0.0.1:0", key=key, camera=False)
    server, _ = simulated_server(config, world, options, robot_map=None)
    robot_task = asyncio.create_task(server.run())
    await server.ready.wait()
    assert server.local_address is not None
    station = OperatorStation(config, None, server.local_address, key=key)
    station_task = asyncio.create_task(station.run())
    flooder = None
    try:
        await asyncio.sleep(1.0)  # control granted, telemetry flowing
        station.drive_command = FreeLookCommand(0.0, 0.0, 0.5)  # turning on the spot
        await asyncio.sleep(0.5)
        if flood_pps > 0:
            flooder = await asyncio.create_subprocess_exec(
                sys.executable,
                "-c",
                _FLOODER,
                str(server.local_address[1]),
                str(flood_pps),
                str(seconds),
                stdout=subprocess.PIPE,
            )
        before = station.stats.received
        trips = sum(1 for e in server.program.core.events if e.kind == "watchdog")
        start = time.monotonic()
        await asyncio.sleep(seconds)
        elapsed = time.monotonic() - start
        telemetry_hz = (station.stats.received - before) / elapsed
        trips = sum(1 for e in server.program.core.events if e.kind == "watchdog") - trips
        sent = 0
        if flooder is not None:
            out, _ = await flooder.communicate()
            sent = int(out.decode().strip() or 0)
        stats = server.session.stats
        refused = stats.auth_failures + stats.crc_failures + stats.malformed
        return trips, telemetry_hz, sent / seconds, refused
    finally:
        if flooder is not None and flooder.returncode is None:
            flooder.kill()
            await flooder.wait()
        for task in (station_task, robot_task):
            task.cancel()
        await asyncio.gather(station_task, robot_task, return_exceptions=True)


def flood_trial(flood_pps: float, seconds: float = 5.0) -> FloodResult:
    """Drive for ``seconds`` without and then with a flood of ``flood_pps`` wrong-key packets."""
    _, quiet_hz, _, _ = asyncio.run(_drive(seconds, 0.0))
    trips, hz, achieved, refused = asyncio.run(_drive(seconds, flood_pps))
    return FloodResult(achieved, trips, hz, quiet_hz, refused)
