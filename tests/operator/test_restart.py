"""A robot restarted under a station that holds a key down, over real UDP on loopback: the
new robot does not drive on what the station held from before; it drives once the operator has
let go and pressed again."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot, simulated_server
from freelook.link import derive_key
from freelook.maps import load_world
from freelook.operator import OperatorStation, parse_browser_message
from freelook.robot import RobotServer, ServerOptions
from loopback import OPENS, alive
from waiting import wait_until_async

KEY = derive_key("ef" * 32)
CONFIG, WORLD = load_robot("pioneer3dx"), load_world("square")


def _robot(port: int) -> tuple[RobotServer, SimulatedRobot]:
    return simulated_server(
        CONFIG,
        WORLD,
        ServerOptions(listen=f"udp://127.0.0.1:{port}", key=KEY, camera=False),
        robot_map=None,
    )


def _moved(robot: SimulatedRobot, since: tuple[float, float]) -> float:
    state = robot.sim.vehicle.state()
    return math.hypot(state.x - since[0], state.y - since[1])


def test_a_restarted_robot_does_not_drive_on_the_held_key_until_it_is_pressed_again() -> None:
    async def scenario() -> dict[str, Any]:
        first, first_robot = _robot(0)
        first_task = asyncio.create_task(first.run())
        await wait_until_async(
            lambda: alive(first_task) and first.ready.is_set(), OPENS, "the first robot to listen"
        )
        address = first.local_address
        assert address is not None
        station = OperatorStation(CONFIG, None, address, key=KEY)
        station_task = asyncio.create_task(station.run())
        keys: dict[str, Any] = {"type": "axes", "mode": "free_look", "forward": 0.6}

        async def page() -> None:  # the page repeats what is held every 50 ms
            mode = parse_browser_message({"type": "mode", "mode": "free_look"}, station.core.scales)
            assert mode is not None
            station.send(station.core.handle(mode, station.clock(), time.time()))
            while True:
                request = parse_browser_message(keys, station.core.scales)
                assert request is not None
                station.send(station.core.handle(request, station.clock(), time.time()))
                await asyncio.sleep(0.05)

        page_task = asyncio.create_task(page())
        second_task = None
        try:
            start = first_robot.sim.vehicle.state()
            await wait_until_async(
                lambda: _moved(first_robot, (start.x, start.y)) > 0.1,
                20,
                "the first robot to drive",
            )
            first_task.cancel()  # the robot process dies, and another starts on its port
            await asyncio.gather(first_task, return_exceptions=True)
            second, second_robot = _robot(address[1])
            second_task = asyncio.create_task(second.run())
            await wait_until_async(
                lambda: alive(second_task) and second.ready.is_set(),
                OPENS,
                "the restarted robot to listen on the same port",
            )
            await wait_until_async(
                lambda: station.sessions_opened >= 2, 20, "the station's session to open again"
            )
            still = second_robot.sim.vehicle.state()
            await asyncio.sleep(2.0)  # the key is still held on the page all this while
            held_back = _moved(second_robot, (still.x, still.y))
            needs_release = station.state()["needs_release"]
            keys = {"type": "axes", "mode": "free_look"}  # let go
            await wait_until_async(
                lambda: not station.core.needs_release, 5, "the page's release to reach the station"
            )
            keys = {"type": "axes", "mode": "free_look", "forward": 0.6}  # and press again
            again = second_robot.sim.vehicle.state()
            await wait_until_async(
                lambda: _moved(second_robot, (again.x, again.y)) > 0.05,
                20,
                "the restarted robot to drive on the new press",
            )
            return {"held_back": held_back, "needs_release": needs_release}
        finally:
            for task in (page_task, station_task, first_task, second_task):
                if task is not None:
                    task.cancel()
            await asyncio.gather(
                *(t for t in (page_task, station_task, second_task) if t is not None),
                return_exceptions=True,
            )

    result = asyncio.run(scenario())
    assert result["needs_release"] is True
    assert result["held_back"] < 0.005, result
