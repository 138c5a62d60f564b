"""Driving through delay with the camera on, over real UDP on loopback: both ends' sends
shaped 0.5 s each way (0.05 s jitter), a relay between them. The robot judges its driver's
reception reports at the round trip it measures, so it drives on for 5 s without taking its
driver for blind; when the relay withholds the camera's frames (and passes the telemetry),
the driver's picture freezes and the robot stops within the picture's bound, the round trip
and its braking."""

from __future__ import annotations

import asyncio
import logging
import math

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import LinkShaping, VelocityCommand
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import BLIND_GRACE, VIDEO_BLIND_GRACE, ServerOptions
from loopback import robot_and_station
from waiting import wait_until_async

CONFIG = load_robot("pioneer3dx")
KEY = bytes(range(32))
DELAY = 0.5
SPEED = 0.3
#: bytes: the robot's datagrams this long or longer are its camera's fragments (its telemetry
#: is 500-600 bytes, echoes and grants less; a frame's fragments are 1200 but its last)
FRAGMENT = 700


class Lines(logging.Handler):
    """What the program logs, kept."""

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())

    def count(self, text: str) -> float:
        return float(sum(text in line for line in self.lines))


class Relay(asyncio.DatagramProtocol):
    """Forwards datagrams between one station and the robot; ``withhold`` drops the robot's
    camera fragments."""

    def __init__(self) -> None:
        self.robot: tuple[str, int] = ("127.0.0.1", 0)
        self.station: tuple[str, int] | None = None
        self.withhold = False
        self.withheld = 0
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a datagram endpoint's

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        assert self.transport is not None
        if addr == self.robot:
            if self.station is None or (self.withhold and len(data) >= FRAGMENT):
                self.withheld += 1
            else:
                self.transport.sendto(data, self.station)
        else:
            self.station = addr
            self.transport.sendto(data, self.robot)


async def scenario() -> dict[str, float]:
    shaping = LinkShaping(delay=DELAY, jitter=0.05, seed=591)
    server, robot = simulated_server(
        CONFIG,
        load_world("square"),  # heading east from the middle: 5.75 m to the east marker
        ServerOptions(listen="udp://127.0.0.1:0", key=KEY, shaping=shaping),
        robot_map=None,
    )
    core = server.program.core
    loop = asyncio.get_running_loop()
    relay = Relay()
    transport, _ = await loop.create_datagram_endpoint(lambda: relay, local_addr=("127.0.0.1", 0))
    relay_address = transport.get_extra_info("sockname")[:2]

    def station_for(address: tuple[str, int] | None) -> OperatorStation:
        assert address is not None
        relay.robot = address
        return OperatorStation(CONFIG, None, relay_address, key=KEY, shaping=shaping)

    def speed() -> float:
        return robot.sim.ground_truth.v

    out: dict[str, float] = {}
    lines = Lines()
    logging.getLogger("freelook").addHandler(lines)
    try:
        async with robot_and_station(server, station_for) as station:
            holding = True

            async def hold_the_stick() -> None:
                while holding:  # the operator holds the stick forward
                    station.drive_command = VelocityCommand(SPEED, 0.0)
                    await asyncio.sleep(0.05)

            stick = asyncio.create_task(hold_the_stick())
            await wait_until_async(lambda: speed() > 0.25, 20.0, "the robot to drive")
            await wait_until_async(
                lambda: core.sight.trip(station.core.station) > 0.0, 20.0, "a round trip"
            )
            start, slowest, blind = loop.time(), SPEED, 0
            x0, y0 = robot.sim.ground_truth.x, robot.sim.ground_truth.y
            slow_at: tuple[float, float, str, int] = (0.0, SPEED, "", 0)
            while loop.time() - start < 5.0:
                await asyncio.sleep(0.02)
                slowest = min(slowest, speed())
                if speed() < slow_at[1]:  # what the robot said when slowest
                    told = station.telemetry
                    flags = told.safety_flags if told is not None else None
                    slow_at = (loop.time() - start, speed(), str(flags), len(lines.lines))
                blind += not core.sight.sees(station.core.station)
            out["slowest"], out["blind_polls"] = slowest, float(blind)
            state = robot.sim.ground_truth
            out["driven"] = math.hypot(state.x - x0, state.y - y0)
            print("slowest at", slow_at, "log", lines.lines[-3:])
            out["notices"] = lines.count("cannot see")
            out["trip"] = core.sight.trip(station.core.station)
            out["frames_per_s"] = station.core.video_rate.rate(station.clock())
            out["frames_refused"] = float(sum(station.video_refusals.values()))
            relay.withhold = True  # the camera's frames stop reaching the station
            withheld = loop.time()
            await wait_until_async(lambda: abs(speed()) < 0.005, 15.0, "the robot to stop")
            out["stopped_after"] = loop.time() - withheld
            out["picture_notices"] = lines.count("camera picture is")
            out["sees"] = float(core.sight.sees(station.core.station))
            out["withheld"] = float(relay.withheld)
            out["opened"] = float(station.sessions_opened)
            out["resumed"] = float(station.sessions_resumed)
            holding = False
            await stick
    finally:
        transport.close()
        logging.getLogger("freelook").removeHandler(lines)
    return out


def test_through_delay_the_robot_drives_on_seeing_and_stops_when_frames_are_withheld() -> None:
    result = asyncio.run(scenario())
    print(result)
    # the camera's 30/s (fewer when the machine is busy) reached the station, none refused
    assert result["frames_per_s"] > 10.0, result
    assert result["frames_refused"] == 0, result
    # no shorter than the shaped delay, and under the longest the robot believes (its blind
    # bound, the watchdog and a grace): a busy machine's scheduling adds to it
    assert 2 * DELAY <= result["trip"] < CONFIG.safety.watchdog_timeout + BLIND_GRACE, result
    assert result["opened"] == 1, result  # one session all along (none replaced it)
    # and its start, the robot's first packet a round trip after the challenge, was no
    # silence that dropped what the operator held
    assert result["resumed"] == 0, result
    assert result["notices"] == 0, result  # never judged blind while it saw
    assert result["blind_polls"] == 0, result
    # and drove on: of the 1.5 m asked at 0.3 m/s, more than half (a loaded machine delays a
    # command past its expiry now and then, and the robot slows for it; that is no blindness,
    # which the counts above rule out; a robot judged blind would stand still)
    assert result["driven"] > 0.5 * SPEED * 5.0, result
    # the picture frozen: a report older than its bound (the frames' last hop, a report every
    # 0.2 s, one way up), then braking from 0.3 m/s; + scheduling on a busy machine
    bound = CONFIG.safety.watchdog_timeout + VIDEO_BLIND_GRACE
    braking = SPEED / CONFIG.drive.max_deceleration
    assert result["stopped_after"] < bound + 2 * DELAY + 0.1 + 0.2 + braking + 1.0, result
    assert result["stopped_after"] > bound, result
    assert result["picture_notices"] >= 1, result
    assert result["sees"] == 0.0, result
