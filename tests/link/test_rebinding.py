"""A robot whose public address changes mid-session keeps its session, over real UDP on
loopback: a NAT of the test's own (two sockets facing the station: the mapping in use, and
the one it rebinds to) forwards between the station and the robot, and at ``rebind()`` the
old mapping dies and the robot's packets leave from a new port, as a NAT that lost its state
(a conntrack flush, an LTE handover) sends them.

The station follows the robot's authenticated packets to the new address at once, without
reopening its session; unauthenticated packets, forged ones and replays of the robot's own from
a new address never move it; commands held across the outage and delivered late are refused as
stale, and the robot, stopped by its watchdog meanwhile, does not move on them."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Awaitable, Callable

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import NativeCodec, UdpEndpoint, VelocityCommand
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ROBOT_STATION, RobotServer, ServerOptions
from loopback import robot_and_station
from waiting import wait_until_async

CONFIG = load_robot("pioneer3dx")
KEY = bytes(range(32))
Address = tuple[str, int]


class _Side(asyncio.DatagramProtocol):
    def __init__(self, nat: Nat, name: str) -> None:
        self.nat, self.name = nat, name
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a datagram endpoint's

    def datagram_received(self, data: bytes, addr: Address) -> None:
        self.nat.arrived(self.name, data, addr)


class Nat:
    """A port-restricted NAT in front of the robot: the station reaches the robot at the
    outside port in use; the robot's packets leave from it. ``rebind()`` moves to a second
    outside port: what reaches the old one is counted and dropped from then on."""

    def __init__(self, robot: Address) -> None:
        self.robot = robot
        self.station: Address | None = None
        self.sides: dict[str, _Side] = {}
        self.active = "outside-a"
        self.down_since: float | None = None  # the path is cut: nothing passes
        self.hold_for = 0.0  # s from the cut during which the station's packets are kept
        self.held: list[bytes] = []
        self.at: dict[str, list[tuple[float, int]]] = {"outside-a": [], "outside-b": []}
        self.robot_packets: list[bytes] = []  # the robot's, as an eavesdropper captures them
        self.rebound_at: float | None = None

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        for name in ("inside", "outside-a", "outside-b"):
            side = _Side(self, name)
            await loop.create_datagram_endpoint(lambda s=side: s, local_addr=("127.0.0.1", 0))
            self.sides[name] = side

    def address(self, name: str) -> Address:
        transport = self.sides[name].transport
        assert transport is not None
        host, port = transport.get_extra_info("sockname")[:2]
        return (host, port)

    def _send(self, name: str, data: bytes, to: Address) -> None:
        transport = self.sides[name].transport
        assert transport is not None
        transport.sendto(data, to)

    def arrived(self, name: str, data: bytes, addr: Address) -> None:
        now = asyncio.get_running_loop().time()
        if name == "inside":  # the robot's, out to the station from the mapping in use
            if addr != self.robot or self.station is None or self.down_since is not None:
                return
            if self.active == "outside-b" and self.rebound_at is None:
                self.rebound_at = now
            if len(self.robot_packets) < 64:
                self.robot_packets.append(data)
            self._send(self.active, data, self.station)
            return
        self.at[name].append((now, len(data)))
        if name != self.active:
            return  # the mapping this port stood for is gone
        if self.station is None:
            self.station = addr
        if addr != self.station:
            return  # port-restricted: only the station the mapping was made for
        if self.down_since is not None:
            if now - self.down_since < self.hold_for:
                self.held.append(data)  # in flight when the path went: a queue, a buffer
            return
        self._send("inside", data, self.robot)

    def rebind(self) -> None:
        """The robot's public address changes: the old port dies, the new one carries on."""
        self.active = "outside-b"

    def cut(self, hold_for: float) -> None:
        """The path goes down; the station's packets of the first ``hold_for`` s are kept."""
        self.down_since = asyncio.get_running_loop().time()
        self.hold_for = hold_for

    def release(self) -> None:
        """The path comes back; the packets held while it was down go to the robot first."""
        for data in self.held:
            self._send("inside", data, self.robot)
        self.down_since = None

    def close(self) -> None:
        for side in self.sides.values():
            if side.transport is not None:
                side.transport.close()


class Watch:
    """The longest time between two of the robot's reports reaching the station, and the
    robot's lowest speed, sampled every 5 ms."""

    def __init__(self, station: OperatorStation, speed: Callable[[], float]) -> None:
        self.station = station
        self.speed = speed
        self.longest = 0.0
        self.slowest = self.fastest = speed()
        self.task = asyncio.create_task(self._watch())

    async def _watch(self) -> None:
        loop = asyncio.get_running_loop()
        seen, last = self.station.core.report_rx, loop.time()
        while True:
            await asyncio.sleep(0.005)
            now = loop.time()
            self.slowest = min(self.slowest, self.speed())
            self.fastest = max(self.fastest, self.speed())
            if self.station.core.report_rx != seen:
                seen = self.station.core.report_rx
                self.longest = max(self.longest, now - last)
                last = now


Body = Callable[[Nat, OperatorStation, RobotServer, Callable[[], float]], Awaitable[None]]


async def _with_nat(body: Body) -> None:
    server, robot = simulated_server(
        CONFIG,
        load_world("square"),
        ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False),
        robot_map=None,
    )
    nat = Nat(("127.0.0.1", 0))
    await nat.start()

    def station_for(address: Address | None) -> OperatorStation:
        assert address is not None
        nat.robot = address
        return OperatorStation(CONFIG, None, nat.address("outside-a"), key=KEY)

    try:
        async with robot_and_station(server, station_for) as station:
            await body(nat, station, server, lambda: robot.sim.ground_truth.v)
    finally:
        nat.close()


def _endpoint(station: OperatorStation) -> UdpEndpoint:
    assert station.driver is not None
    endpoint = station.driver.endpoint
    assert isinstance(endpoint, UdpEndpoint)
    return endpoint


def test_the_station_follows_a_robot_whose_address_changes_and_keeps_its_session() -> None:
    async def body(
        nat: Nat, station: OperatorStation, server: RobotServer, speed: Callable[[], float]
    ) -> None:
        endpoint = _endpoint(station)
        station.drive_command = VelocityCommand(0.3, 0.0)
        await wait_until_async(lambda: speed() > 0.25, 10.0, "the robot to drive")
        watch = Watch(station, speed)
        await asyncio.sleep(0.5)
        nat.rebind()
        new = nat.address("outside-b")
        await wait_until_async(lambda: endpoint.peer == new, 5.0, "the station to follow")
        followed = asyncio.get_running_loop().time()
        await asyncio.sleep(1.5)
        watch.task.cancel()
        assert nat.rebound_at is not None
        # the robot's first packet from the new port verified, and the station answered there
        # from its next packet on: what it still sent the old port left before it knew
        to_b = [t for t, _ in nat.at["outside-b"]]
        late_to_a = [t for t, _ in nat.at["outside-a"] if t > followed]
        assert to_b, "nothing reached the new port"
        assert not late_to_a, late_to_a
        # one round trip: the robot's packet there, the station's next (its spacing) back
        round_trip = CONFIG.link.operator_tx_spacing + CONFIG.link.robot_tx_spacing
        assert to_b[0] - nat.rebound_at < round_trip + 0.5, to_b[0] - nat.rebound_at
        assert endpoint.moves == 1
        assert station.sessions_opened == 1  # the same session all along
        assert watch.longest < 1.0, watch.longest
        assert watch.slowest > 0.25, watch.slowest  # it never stopped
        assert server.stats.received > 0

    asyncio.run(_with_nat(body))


def test_unauthenticated_packets_from_a_new_address_never_move_the_station() -> None:
    """Garbage in the native framing, packets under a wrong key and replays of the robot's own
    packets, from a stranger's port and from the NAT's next port: the station refuses them all
    and keeps answering the robot where it is."""

    async def body(
        nat: Nat, station: OperatorStation, server: RobotServer, speed: Callable[[], float]
    ) -> None:
        endpoint = _endpoint(station)
        where = endpoint.peer
        await wait_until_async(lambda: len(nat.robot_packets) >= 64, 10.0, "packets to capture")
        codec = station.session.codec
        forger = NativeCodec(bytes(32), sender=ROBOT_STATION)  # the robot, a wrong key
        forged = [forger.encode(VelocityCommand(0.1, 0.0), float(i)) for i in range(20)]
        garbage = [codec.sync + bytes(range(codec.min_length + i)) for i in range(20)]
        stranger = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        stranger.bind(("127.0.0.1", 0))
        next_port = nat.sides["outside-b"].transport
        assert next_port is not None
        before = sum(station.stats.refused.values())
        try:
            for packet in [*garbage, *forged, *nat.robot_packets]:
                stranger.sendto(packet, endpoint.local_address)
                next_port.sendto(packet, endpoint.local_address)
                await asyncio.sleep(0.002)  # within what the strangers' queue holds
            refused = station.stats.refused
            sent = 2 * (len(garbage) + len(forged) + len(nat.robot_packets))
            await wait_until_async(
                lambda: sum(refused.values()) - before >= sent,
                10.0,
                "all of it to be refused",
                show=lambda: refused,
            )
            received = station.stats.received
            await wait_until_async(  # the robot's own still come
                lambda: station.stats.received > received + 5, 10.0, "the robot's packets"
            )
        finally:
            stranger.close()
        assert endpoint.peer == where
        assert endpoint.moves == 0
        # each kind reached the session and was refused for what it is, until its source had
        # spent its budget of refusals (then refused unread, as "rate")
        assert refused.get("malformed", 0) > 0, refused  # the garbage
        assert refused.get("session", 0) + refused.get("auth", 0) > 0, refused  # the forgeries
        assert refused.get("replay", 0) > 0, refused
        assert sum(refused.values()) - before == sent, refused  # none of it was taken
        assert endpoint.dropped_strangers == 0
        assert station.stats.received > received  # the robot's own still came
        assert station.sessions_opened == 1

    asyncio.run(_with_nat(body))


def test_commands_held_across_an_outage_do_not_move_the_robot_after_it_moves() -> None:
    """The path goes down for 2.5 s while the operator holds the stick; the commands in flight
    at the cut are delivered after the robot moved to its new address, 2.2 s late: the robot,
    stopped by its watchdog, refuses them as stale and does not move; the station finds the
    robot at its new address in the same session and, having heard nothing for longer than its
    reopen time, drops the held command as a re-open does; a new one drives."""

    async def body(
        nat: Nat, station: OperatorStation, server: RobotServer, speed: Callable[[], float]
    ) -> None:
        endpoint = _endpoint(station)
        station.drive_command = VelocityCommand(0.3, 0.0)
        await wait_until_async(lambda: speed() > 0.25, 10.0, "the robot to drive")
        nat.cut(hold_for=0.3)
        await wait_until_async(lambda: abs(speed()) < 0.005, 10.0, "the watchdog to stop it")
        # 2.5 s down: what was held is older than the session's max_age (2 s), and the station's
        # opens, a second apart while it hears nothing, are not under way as the path returns
        await asyncio.sleep(2.5 - (asyncio.get_running_loop().time() - (nat.down_since or 0.0)))
        held = len(nat.held)
        assert held >= 1  # the station kept sending its command into the cut
        stale = server.stats.refused.get("replay", 0)
        watch = Watch(station, speed)
        nat.rebind()
        nat.release()
        new = nat.address("outside-b")
        await wait_until_async(lambda: endpoint.peer == new, 5.0, "the station to follow")
        await asyncio.sleep(1.5)
        watch.task.cancel()
        assert server.stats.refused.get("replay", 0) - stale >= held, server.stats.refused
        assert watch.fastest < 0.01, watch.fastest  # nothing held moved it
        # the robot's packets of the same session came again from its new address; heard
        # after a silence longer than its reopen time, the station let go of what it held
        assert (station.sessions_opened, station.sessions_resumed) == (1, 1)
        assert station.drive_command is None
        station.drive_command = VelocityCommand(0.3, 0.0)
        await wait_until_async(lambda: speed() > 0.25, 10.0, "a new command to drive it")

    asyncio.run(_with_nat(body))
