"""The thesis profile keeps its format, and its commands can still expire: a robot given
``command_max_age`` measures each command's age from the sender's millisecond tick (its delay
minus the least delay seen) and refuses, counts and never executes one older than that. Over
real UDP on loopback with thesis packets as a thesis-style radio sends them."""

from __future__ import annotations

import asyncio
import math
import socket

from hypothesis import given
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import StampAge, ThesisCodec, VelocityCommand
from freelook.maps import load_world
from freelook.robot import ServerOptions
from loopback import serving
from waiting import wait_until_async

CONFIG = load_robot("pioneer3dx")


@given(
    st.floats(-1e6, 1e6),
    st.lists(st.tuples(st.floats(0, 10), st.floats(0, 2)), min_size=1, max_size=30),
)
def test_ages_are_delays_beyond_the_least(
    offset: float, packets: list[tuple[float, float]]
) -> None:
    """Whatever the sender's clock, a packet's age is its delay minus the least delay seen
    (so far): never negative, and 0 for the least delayed."""
    ages = StampAge()
    least = math.inf
    for sent, delay in sorted(packets):
        least = min(least, delay)
        age = ages.age(1, sent + offset, sent + delay)
        assert age >= 0
        assert math.isclose(age, delay - least, abs_tol=1e-6)


def test_a_wrapped_tick_starts_the_ages_again() -> None:
    ages = StampAge()
    assert ages.age(1, 4294967.0, 10.0) == 0.0
    assert math.isclose(ages.age(1, 4294967.2, 10.5), 0.3, abs_tol=1e-6)
    assert ages.age(1, 0.3, 10.6) == 0.0  # the tick wrapped: a new baseline
    assert ages.age(1, 0.4, 10.7) == 0.0
    assert ages.age(2, math.nan, 1.0) == math.inf


def test_an_old_thesis_command_is_refused_and_counted() -> None:
    async def scenario() -> None:
        server, robot = simulated_server(
            CONFIG,
            load_world("square"),
            ServerOptions(
                listen="udp://127.0.0.1:0", wire="thesis", camera=False, command_max_age=0.3
            ),
            robot_map=None,
        )
        codec = ThesisCodec()
        sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        sock.bind(("127.0.0.1", 0))
        loop = asyncio.get_running_loop()
        try:
            async with serving(server):
                address = server.local_address
                assert address is not None
                core = server.program.core
                tick = 1000.0  # the radio's own clock
                start = loop.time()

                def send(v: float, age: float) -> None:
                    stamp = tick + (loop.time() - start) - age
                    sock.sendto(codec.encode(VelocityCommand(v, 0.0), stamp), address)

                for _ in range(10):  # a fresh stream: the least delay, and the robot moves
                    send(0.3, 0.0)
                    await asyncio.sleep(0.05)
                await wait_until_async(
                    lambda: robot.sim.ground_truth.v > 0.1, 10.0, "the robot to drive"
                )
                send(0.0, 0.0)
                await wait_until_async(
                    lambda: abs(robot.sim.ground_truth.v) < 0.01, 10.0, "the robot to stop"
                )
                for _ in range(10):  # a second old: each refused, the robot stands
                    send(0.3, 1.0)
                    await asyncio.sleep(0.05)
                # all ten taken in and refused (the first of them half a second ago: time
                # enough to move the robot, had it been obeyed)
                await wait_until_async(
                    lambda: core.log.late_commands >= 10,
                    10.0,
                    "the ten late commands refused",
                    show=lambda: core.log.late_commands,
                )
                assert core.log.late_commands == 10
                assert abs(robot.sim.ground_truth.v) < 0.01
                assert any("s late" in line for line in core.log.rejections)
        finally:
            sock.close()

    asyncio.run(scenario())
