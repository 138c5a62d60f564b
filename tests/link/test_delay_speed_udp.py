"""The delay rule end to end: the simulated robot served over real UDP on loopback, both ends'
sends shaped 0.5 s each way (0.05 s jitter), the station commanding 1.2 m/s in the open. The
robot measures the round trip from the station's echoes itself, caps its speed to what it can
stop from within the seen range at that round trip, and says so in its telemetry."""

from __future__ import annotations

import asyncio
import math

import pytest

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import LinkShaping, SafetyFlags, VelocityCommand
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from freelook.safety import DelaySpeedRule, delay_speed_cap
from loopback import robot_and_station
from waiting import wait_until_async

BASE = load_robot("pioneer3dx")
SEEN = 1.5  # m ahead counted clear (the test's robot trusts its laser this far)
CONFIG = BASE.model_copy(
    update={
        "safety": BASE.safety.model_copy(
            update={
                "rules": (*BASE.safety.rules, "delay_speed"),
                "delay_speed": BASE.safety.delay_speed.model_copy(update={"seen_range": SEEN}),
            }
        ),
        "limits": BASE.limits.model_copy(update={"max_speed": 1.2}),
    }
)
KEY = bytes(range(32))
SPEED = 1.2  # m/s asked


async def drive() -> dict[str, float]:
    shaping = LinkShaping(delay=0.5, jitter=0.05, seed=59)
    server, robot = simulated_server(
        CONFIG,
        load_world("square"),  # heading east from the middle: 5.75 m to the east marker
        ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False, shaping=shaping),
        robot_map=None,
    )
    (rule,) = [r for r in server.program.core.safety.rules if isinstance(r, DelaySpeedRule)]
    loop = asyncio.get_running_loop()

    def station_for(address: tuple[str, int] | None) -> OperatorStation:
        assert address is not None
        return OperatorStation(CONFIG, None, address, key=KEY, shaping=shaping)

    async with robot_and_station(server, station_for) as station:
        await wait_until_async(lambda: station.session.clock.ready, 20.0, "the robot's echo")

        def in_control() -> bool:
            telemetry = station.telemetry
            return telemetry is not None and telemetry.controller != 0

        await wait_until_async(in_control, 20.0, "the station to hold control")
        holding = True

        async def hold_the_stick() -> None:
            # the operator holds the stick forward: the input repeats, as the page's does (a
            # session that opens again at this delay lets go of what it held)
            while holding:
                station.drive_command = VelocityCommand(SPEED, 0.0)
                await asyncio.sleep(0.05)

        stick = asyncio.create_task(hold_the_stick())
        # the robot's own round trips come once it takes commands from the station
        await wait_until_async(lambda: rule.samples >= 4, 20.0, "four round trips")
        await wait_until_async(
            lambda: robot.sim.ground_truth.v > 0.5, 20.0, "the robot to get going"
        )
        await asyncio.sleep(1.0)  # up to speed
        state = robot.sim.ground_truth
        start, started = (state.x, state.y), loop.time()
        fastest = 0.0
        flags = SafetyFlags.NONE
        over_cap = []  # each report's command less the cap the same report carried
        told: list[tuple[float, float]] = []  # the cap and round trip the telemetry carried
        while loop.time() - started < 1.0:
            await asyncio.sleep(0.02)
            fastest = max(fastest, robot.sim.ground_truth.v)
            telemetry = station.telemetry
            if telemetry is not None:
                flags |= telemetry.safety_flags
                if telemetry.speed_cap is not None:
                    told.append(telemetry.speed_cap)
                    over_cap.append(telemetry.cmd_v - telemetry.speed_cap[0])
        state = robot.sim.ground_truth
        speed = math.dist(start, (state.x, state.y)) / (loop.time() - started)
        holding = False
        await stick
        station.drive_command = VelocityCommand(0.0, 0.0)
        trip = rule.round_trip_at(server.runtime.now())
        return {
            "trip": trip,
            "cap": rule.cap,
            "speed": speed,
            "fastest": fastest,
            "delay_flag": float(bool(flags & SafetyFlags.DELAY)),
            "cmd_over_cap": max(over_cap),
            "refused": float(rule.refused),
            "told_cap": max(c for c, _ in told),
            "told_trip": max(t for _, t in told),
            "told": float(len(told)),
        }


def test_over_a_shaped_link_the_robot_caps_its_speed_to_the_round_trip_it_measured() -> None:
    result = asyncio.run(drive())
    print(result)
    # the robot's own measure: no shorter than the shaped 0.5 s each way, and believed as
    # measured below the rule's slowest round trip (a busy machine's scheduling adds to it, and
    # the cap follows what was measured)
    slowest = CONFIG.safety.delay_speed.max_round_trip
    assert 1.0 <= result["trip"] < slowest, result
    expected = delay_speed_cap(SEEN - 0.1, result["trip"], 0.04, CONFIG.drive.max_deceleration)
    assert result["cap"] == pytest.approx(expected), result
    assert result["cap"] <= 1.01, result  # well under the 1.2 m/s asked (1.01 at a 1 s trip)
    assert result["speed"] <= result["cap"] + 0.02, result
    assert result["fastest"] <= result["cap"] + 0.05, result
    assert result["speed"] >= result["cap"] - 0.1, result  # driving at the cap, not stopped
    assert result["delay_flag"] == 1.0, result  # the telemetry says which rule acted
    # the command the robot drove never over the cap of its cycle (the cap follows the round
    # trip, which moves with the jitter: a report is judged by its own)
    assert result["cmd_over_cap"] <= 0.02, result
    assert result["refused"] == 0.0, result
    # the station hears the cap and the robot's round trip (for the cockpit's chip)
    assert result["told"] >= 10, result
    assert abs(result["told_cap"] - result["cap"]) <= 0.05, result
    assert abs(result["told_trip"] - result["trip"]) <= 0.1, result
