"""``freelook jaus``: the gateway's I/O shell, a JUDP socket and a station's link to a robot.

The robot side is the same authenticated native session an operator station opens (its own
station id and key from the robot's keys file, or the shared key), driven by the link driver;
the JAUS side is a UDP socket (JUDP's port 3794 by default). Every decision is the core's
(:class:`JausGateway`); this loop only moves bytes and ticks the clock.
"""

from __future__ import annotations

import asyncio
import logging
import math
from collections.abc import Callable

from freelook.config import RobotConfig
from freelook.jaus._gateway import (
    DEFAULT_COMPONENT,
    Address,
    GatewayOptions,
    GatewayOutput,
    JausGateway,
)
from freelook.judp import JausId
from freelook.link import (
    Accepted,
    LinkDriver,
    LinkEvent,
    LinkSession,
    NativeCodec,
    Side,
    TransportUrl,
    UdpEndpoint,
)
from freelook.runtime import MonotonicClock

__all__ = ["JAUS_PORT", "JausBridge", "run_gateway"]

log = logging.getLogger(__name__)

JAUS_PORT = 3794  # JUDP's registered port
TICK = 0.05  # s between timeout checks when no datagram arrives


def _loopback(host: str) -> bool:
    return host in ("localhost", "::1") or host.startswith("127.")


class JausBridge:
    """The running gateway: its core, its JUDP endpoint and its link driver."""

    def __init__(
        self,
        config: RobotConfig,
        robot: TransportUrl,
        key: bytes,
        *,
        station: int = 2,
        component: JausId = DEFAULT_COMPONENT,
        listen: Address = ("127.0.0.1", JAUS_PORT),
    ) -> None:
        self.config = config
        self.robot = robot
        self._bus_key = key  # logs in to an authenticated Zenoh bus
        self.listen = listen
        self.clock = MonotonicClock().now
        self.core = JausGateway(
            GatewayOptions(
                name=config.name,
                max_speed=config.limits.max_speed,
                max_turn_rate=math.radians(config.limits.max_turn_rate_deg),
                component=component,
                station=station,
            )
        )
        self.session = LinkSession(
            NativeCodec(key, sender=station),
            framing=robot.transport.framing,
            spacing=config.link.operator_tx_spacing,
            wire_offset=LinkDriver.wall_offset(self.clock),
            role="operator",
        )
        self.session.periodic = self.core.periodic
        self.jaus: UdpEndpoint | None = None
        self.driver: LinkDriver | None = None
        self.ready = asyncio.Event()

    @property
    def jaus_address(self) -> Address:
        assert self.jaus is not None, "not running"
        return self.jaus.local_address

    async def run(self) -> None:
        """Until cancelled."""
        robot = self.robot
        endpoint = await robot.transport.open(robot, Side("station", key=self._bus_key))
        self.jaus = await UdpEndpoint.open(self.listen)
        self.driver = LinkDriver(self.session, endpoint, self.clock, self._on_event)
        tasks = [asyncio.create_task(self.driver.run()), asyncio.create_task(self._serve())]
        self.ready.set()
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            endpoint.close()
            self.jaus.close()

    async def _serve(self) -> None:
        assert self.jaus is not None
        while True:
            item = await self.jaus.recv_from(TICK)
            if item is not None:
                data, source = item
                self._apply(self.core.on_datagram(data, source, self.clock()))
            self._apply(self.core.tick(self.clock()))

    def _on_event(self, event: LinkEvent) -> None:
        if isinstance(event, Accepted):
            self._apply(self.core.on_link(event.message, event.now))

    def _apply(self, out: GatewayOutput) -> None:
        if self.jaus is not None:
            for data, address in out.datagrams:
                self.jaus.send(data, address)
        if self.driver is not None:
            for message in out.link:
                self.driver.send(message)


async def run_gateway(
    config: RobotConfig,
    robot: TransportUrl,
    key: bytes,
    *,
    station: int = 2,
    component: JausId = DEFAULT_COMPONENT,
    listen: Address = ("127.0.0.1", JAUS_PORT),
    announce: Callable[[str], None] = print,
) -> None:
    """The gateway until cancelled; says where it listens (and warns beyond loopback: JUDP
    carries no authentication, anyone who reaches the port may ask for control)."""
    bridge = JausBridge(config, robot, key, station=station, component=component, listen=listen)
    task = asyncio.create_task(bridge.run())
    ready = asyncio.create_task(bridge.ready.wait())
    await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
    if task.done():
        ready.cancel()
        await task  # raises why it could not start
        return
    host, port = bridge.jaus_address
    if not _loopback(host):
        announce(
            f"WARNING: JUDP on {host}:{port} beyond loopback: JAUS has no authentication, "
            "anyone on that network may ask for control of the robot"
        )
    where = robot.device or f"{robot.host}:{robot.port}"  # a serial line's, or an address
    announce(f"freelook jaus: component {component} on udp://{host}:{port}, robot at {where}")
    try:
        await task
    finally:
        task.cancel()
