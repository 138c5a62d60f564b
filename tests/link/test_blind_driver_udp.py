"""A driver whose cockpit goes blind stops its robot, over real UDP on loopback: a relay
between station and robot passes the station's commands on but stops passing the robot's
telemetry (as a flood or a failing downlink would), and the robot, told so by the station's
reception reports, stops; once the station sees again, a new command drives it."""

from __future__ import annotations

import asyncio

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import VelocityCommand
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import BLIND_GRACE, ServerOptions
from loopback import robot_and_station
from waiting import wait_until_async

CONFIG = load_robot("pioneer3dx")
KEY = bytes(range(32))


class Relay(asyncio.DatagramProtocol):
    """Forwards datagrams between one station and the robot; ``blind`` drops the robot's."""

    def __init__(self, robot: tuple[str, int]) -> None:
        self.robot = robot
        self.station: tuple[str, int] | None = None
        self.blind = False
        self.dropped = 0
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a datagram endpoint's

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        assert self.transport is not None
        if addr == self.robot:
            if self.blind or self.station is None:
                self.dropped += 1
            else:
                self.transport.sendto(data, self.station)
        else:
            self.station = addr
            self.transport.sendto(data, self.robot)


def test_the_robot_stops_when_its_drivers_cockpit_is_blind_and_drives_when_it_sees() -> None:
    async def scenario() -> None:
        server, robot = simulated_server(
            CONFIG,
            load_world("square"),
            ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False),
            robot_map=None,
        )
        loop = asyncio.get_running_loop()
        relay = Relay(("127.0.0.1", 0))
        transport, _ = await loop.create_datagram_endpoint(
            lambda: relay, local_addr=("127.0.0.1", 0)
        )
        relay_address = transport.get_extra_info("sockname")[:2]

        def station_for(address: tuple[str, int] | None) -> OperatorStation:
            assert address is not None
            relay.robot = address
            return OperatorStation(CONFIG, None, relay_address, key=KEY)

        def speed() -> float:
            return robot.sim.ground_truth.v

        try:
            async with robot_and_station(server, station_for) as station:
                station.drive_command = VelocityCommand(0.3, 0.0)
                await wait_until_async(lambda: speed() > 0.25, 10.0, "the robot to drive")
                relay.blind = True  # the commands still go through; the telemetry does not
                blinded = loop.time()
                await wait_until_async(lambda: abs(speed()) < 0.005, 10.0, "the robot to stop")
                stopped = loop.time() - blinded
                # overdue past the watchdog's timeout, a report (every ~0.2 s) to say so,
                # then the braking from 0.3 m/s
                bound = (
                    CONFIG.safety.watchdog_timeout
                    + BLIND_GRACE
                    + CONFIG.link.robot_tx_spacing
                    + 4 * CONFIG.link.operator_tx_spacing
                    + 0.3 / CONFIG.drive.max_deceleration
                )
                assert stopped < bound + 0.5, (stopped, bound)  # + scheduling on a busy machine
                assert not server.program.core.sight.sees(station.core.station)
                relay.blind = False
                core = server.program.core
                await wait_until_async(
                    lambda: core.sight.sees(station.core.station), 10.0, "the station to see again"
                )
                # a station that lost the robot for this long opened its session again, which
                # drops what it held: the robot drives again on a new command
                station.drive_command = VelocityCommand(0.3, 0.0)
                await wait_until_async(lambda: speed() > 0.25, 10.0, "the robot to drive again")
        finally:
            transport.close()

    asyncio.run(scenario())
