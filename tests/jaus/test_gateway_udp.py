"""The JAUS gateway end to end over real UDP on loopback, in front of the simulated robot
program, with a JAUS client written here from the standards' message layouts (struct only, not
the gateway's codec): it gets ReportIdentification, is refused while another station holds the
robot, obtains control once that station has gone, drives (the odometry it queries moves),
keeps a second client out, and lets go."""

from __future__ import annotations

import asyncio
import math
import secrets
import struct
from typing import Any, cast

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.jaus import JausBridge
from freelook.link import TransportUrl
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from loopback import OPENS, alive, running, serving
from waiting import wait_until_async

GATEWAY = (1, 1, 1)  # subsystem, node, component
# message codes (AS5710 core, AS6009 mobility)
REQUEST_CONTROL, RELEASE_CONTROL, CONFIRM_CONTROL, REJECT_CONTROL = 0x000D, 0x000E, 0x000F, 0x0010
QUERY_IDENTIFICATION, REPORT_IDENTIFICATION = 0x2B00, 0x4B00
SET_WRENCH_EFFORT, SET_VELOCITY_COMMAND = 0x0405, 0x0415
QUERY_LOCAL_POSE, REPORT_LOCAL_POSE = 0x2403, 0x4403
QUERY_VELOCITY_STATE, REPORT_VELOCITY_STATE = 0x2404, 0x4404
CONTROL_ACCEPTED, NOT_AVAILABLE, INSUFFICIENT_AUTHORITY = 0, 1, 2
CONTROL_RELEASED = 0


def scaled(value: float, lower: float, upper: float, bits: int) -> int:
    return round((value - lower) / (upper - lower) * ((1 << bits) - 1))


def unscaled(k: int, lower: float, upper: float, bits: int) -> float:
    return lower + k * (upper - lower) / ((1 << bits) - 1)


class JausClient(asyncio.DatagramProtocol):
    """A JAUS component at ``me`` speaking JUDP to the gateway."""

    def __init__(self, me: tuple[int, int, int]) -> None:
        self.me = me
        self.sequence = 0
        self.inbox: asyncio.Queue[tuple[int, bytes]] = asyncio.Queue()
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.DatagramTransport, transport)

    def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
        assert data[0] == 2, "JUDP transport version"
        offset = 1
        while offset < len(data):
            _, size, _, dc, dn, ds, sc, sn, ss = struct.unpack_from("<BHBBBHBBH", data, offset)
            assert (ds, dn, dc) == self.me
            assert (ss, sn, sc) == GATEWAY
            payload = data[offset + 12 : offset + size - 2]
            (code,) = struct.unpack_from("<H", payload)
            self.inbox.put_nowait((code, payload[2:]))
            offset += size

    def send(self, gateway: tuple[str, int], code: int, body: bytes = b"") -> None:
        ds, dn, dc = GATEWAY
        ss, sn, sc = self.me
        payload = struct.pack("<H", code) + body
        header = struct.pack("<BHBBBHBBH", 0, 14 + len(payload), 0x01, dc, dn, ds, sc, sn, ss)
        assert self.transport is not None
        self.transport.sendto(
            bytes([2]) + header + payload + struct.pack("<H", self.sequence), gateway
        )
        self.sequence += 1

    async def expect(self, code: int, timeout: float = 5.0) -> bytes:
        """The body of the next message with ``code`` (others are passed over); at ``timeout``
        an ``AssertionError`` naming it and the codes that came instead."""
        others: list[int] = []
        try:
            async with asyncio.timeout(timeout):
                while True:
                    got, body = await self.inbox.get()
                    if got == code:
                        return body
                    others.append(got)
        except TimeoutError:
            came = [f"{c:#06x}" for c in others]
            raise AssertionError(
                f"waited {timeout:g} s for a message {code:#06x}; came instead: {came}"
            ) from None

    async def ask(self, gateway: tuple[str, int], code: int, body: bytes, reply: int) -> bytes:
        self.send(gateway, code, body)
        return await self.expect(reply)

    async def local_pose(self, gateway: tuple[str, int]) -> tuple[float, float, float]:
        """(x, y, yaw) from ReportLocalPose, fields X, Y and Yaw (presence bits 0, 1, 6)."""
        body = await self.ask(
            gateway, QUERY_LOCAL_POSE, struct.pack("<H", 0b1000011), REPORT_LOCAL_POSE
        )
        presence, kx, ky, kyaw = struct.unpack("<HIIH", body)
        assert presence == 0b1000011
        return (
            unscaled(kx, -100_000, 100_000, 32),
            unscaled(ky, -100_000, 100_000, 32),
            unscaled(kyaw, -math.pi, math.pi, 16),
        )


async def _client(me: tuple[int, int, int]) -> JausClient:
    loop = asyncio.get_running_loop()
    _, protocol = await loop.create_datagram_endpoint(
        lambda: JausClient(me), local_addr=("127.0.0.1", 0)
    )
    return protocol


async def _drive(
    bridge: JausBridge,
    holder: OperatorStation,
    holder_task: asyncio.Task[None],
    seen: dict[str, Any],
) -> None:
    """A JAUS client identifies the robot, is refused while ``holder`` holds it, takes control
    once the holder has gone, drives and turns, keeps a rival out and lets go."""
    gw = bridge.jaus_address
    ocu = await _client((7, 1, 1))
    rival = await _client((8, 1, 1))
    try:
        body = await ocu.ask(gw, QUERY_IDENTIFICATION, bytes([2]), REPORT_IDENTIFICATION)
        query_type, kind, count = struct.unpack_from("<BHB", body)
        seen["identification"] = (query_type, kind, body[4 : 4 + count].decode())
        await wait_until_async(lambda: holder.in_control, 10, "the holder in control")
        (seen["while_held"],) = await ocu.ask(gw, REQUEST_CONTROL, bytes([50]), CONFIRM_CONTROL)
        # the holder goes away; its control lapses, and the JAUS client gets it
        holder_task.cancel()
        await asyncio.gather(holder_task, return_exceptions=True)
        answers: list[int] = []

        async def granted() -> bool:
            (answer,) = await ocu.ask(gw, REQUEST_CONTROL, bytes([50]), CONFIRM_CONTROL)
            answers.append(answer)
            return answer == CONTROL_ACCEPTED

        await wait_until_async(
            granted, 15, "control for the JAUS client", every=0.3, show=lambda: answers[-5:]
        )
        (seen["rival"],) = await rival.ask(gw, REQUEST_CONTROL, bytes([50]), CONFIRM_CONTROL)
        start = await ocu.local_pose(gw)
        # SetVelocityCommand: presence vector (Velocity_X, bit 0), command type 0, 0.3 m/s
        drive = struct.pack("<BBI", 0b1, 0, scaled(0.3, -327.68, 327.67, 32))
        for _ in range(15):  # held for 1.5 s, the rival sending its own all the while
            ocu.send(gw, SET_VELOCITY_COMMAND, drive)
            rival.send(gw, SET_VELOCITY_COMMAND, struct.pack("<BBI", 0b1, 0, 0))
            await asyncio.sleep(0.1)
        moved = await ocu.local_pose(gw)
        # SetWrenchEffort: PropulsiveRotationalEffortZ (bit 5) −40 %: JAUS yaw is clockwise
        # positive (z down), so this turns counter-clockwise
        turn = struct.pack("<HH", 1 << 5, scaled(-40.0, -100, 100, 16))
        for _ in range(10):  # held for a second
            ocu.send(gw, SET_WRENCH_EFFORT, turn)
            await asyncio.sleep(0.1)
        turned = await ocu.local_pose(gw)
        velocity = await ocu.ask(
            gw, QUERY_VELOCITY_STATE, struct.pack("<H", 1 | 1 << 6), REPORT_VELOCITY_STATE
        )
        seen["velocity_presence"] = struct.unpack_from("<H", velocity)[0]
        seen["poses"] = (start, moved, turned)
        (seen["released"],) = await ocu.ask(gw, RELEASE_CONTROL, b"", REJECT_CONTROL)
        seen["dropped"] = dict(bridge.core.dropped)
    finally:
        for client in (ocu, rival):
            assert client.transport is not None
            client.transport.close()


def test_a_jaus_client_identifies_takes_control_drives_and_is_refused_when_held() -> None:
    config, world = load_robot("pioneer3dx"), load_world("square")
    key = secrets.token_bytes(32)
    seen: dict[str, Any] = {}

    async def scenario() -> None:
        server, _ = simulated_server(
            config,
            world,
            ServerOptions(listen="udp://127.0.0.1:0", key=key, camera=False),
            robot_map=None,
        )
        async with serving(server):
            assert server.local_address is not None
            host, port = server.local_address
            # another station holds the robot (same key, same authority: the holder keeps it)
            holder = OperatorStation(config, None, server.local_address, key=key, station=1)
            holder.core.attach()  # transmits steadily, renewing its control
            bridge = JausBridge(
                config, TransportUrl("udp", host, port), key, station=2, listen=("127.0.0.1", 0)
            )
            async with running(holder, bridge) as (holder_task, bridge_task):
                await wait_until_async(
                    lambda: alive(holder_task, bridge_task) and bridge.ready.is_set(),
                    OPENS,
                    "the JAUS gateway to listen",
                )
                await _drive(bridge, holder, holder_task, seen)

    asyncio.run(scenario())
    assert seen["identification"] == (2, 10001, "pioneer3dx")  # a vehicle, by its name
    assert seen["while_held"] == NOT_AVAILABLE
    assert seen["rival"] == INSUFFICIENT_AUTHORITY  # equal authority: the holder keeps it
    start, moved, turned = seen["poses"]
    assert math.dist(start[:2], moved[:2]) > 0.15, seen["poses"]  # 0.3 m/s for about 1.5 s
    # JAUS yaw is clockwise: a counter-clockwise turn makes it smaller
    assert math.remainder(turned[2] - moved[2], math.tau) < -0.1, seen["poses"]
    assert seen["velocity_presence"] == 1 | 1 << 6
    assert seen["released"] == CONTROL_RELEASED
    assert seen["dropped"].get("command from a client not in control", 0) >= 10
