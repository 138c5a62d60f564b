"""``freelook robot --hardware ros2``, started as a user starts it, drives the tests' own ROS 2
base (standard topics only, no command timeout of its own) for a thesis-profile operator over
real UDP on loopback and real DDS: commands arrive, position packets follow the odometry, a
quiet link publishes zero velocity, and full speed at a wall ends before the wall."""

from __future__ import annotations

import asyncio
import math
import time

import pytest
from ros2_base import RoomBase
from ros2_processes import CLI_TEST_TIMEOUT, start_robot_program

from cli_processes import ThesisOperator, free_udp_port, stop
from freelook.link import SetTransmission, VelocityCommand
from waiting import wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]


def test_a_thesis_operator_drives_a_ros2_base_and_its_safety_stops_it_at_the_wall(
    ros_domain: int,
) -> None:
    async def run() -> None:
        base = RoomBase(ros_domain).start()
        udp_port = free_udp_port()
        process, lines = await start_robot_program(udp_port)
        operator = await ThesisOperator.open(udp_port)
        positions = operator.positions

        async def drive(v: float, omega: float, seconds: float) -> float:
            """Command (v, ω) for ``seconds``; returns when the last command went."""
            end = time.monotonic() + seconds
            while True:
                operator.send(VelocityCommand(v, omega))
                sent = time.monotonic()
                await asyncio.sleep(0.047)  # the thesis's operator spacing
                if time.monotonic() >= end:
                    return sent

        try:
            assert any("a ROS 2 robot" in line for line in lines), lines
            operator.send(SetTransmission(True))
            # the commanded speed reaches the base within half a second
            sent = time.monotonic()
            operator.send(VelocityCommand(0.3, math.radians(5)))
            await wait_until_async(
                lambda: any(abs(c.v - 0.3) < 1e-6 for c in base.commands_since(sent)),
                0.5 - (time.monotonic() - sent),
                "a cmd_vel of 0.3 m/s at the base within 0.5 s",
                every=0.002,
            )
            quiet = await drive(0.3, math.radians(5), 1.0)
            # position packets follow the base's odometry: two more, 31 ms apart, still moving
            # (the watchdog trips half a second after the last command)
            heard = len(positions)
            await wait_until_async(lambda: len(positions) >= heard + 2, 2.0, "two more positions")
            last = positions[-1]
            assert base.x > 0.05  # it went forwards (how far in the second is the machine's)
            assert last.x == pytest.approx(base.x, abs=0.06)
            assert last.y == pytest.approx(base.y, abs=0.06)
            assert math.remainder(last.theta - base.theta, math.tau) == pytest.approx(0, abs=0.03)
            # the link goes quiet: the program itself publishes zero (the base has no timeout)
            stopped = await wait_until_async(
                lambda: next((c for c in base.commands_since(quiet) if c.v == 0.0), None),
                2.0 - (time.monotonic() - quiet),  # a bound for a run gone wrong; timed below
                "a zero velocity at the base within 2 s of the quiet link",
                every=0.002,
            )
            # the watchdog (0.5 s) trips within a cycle (20 ms), then a controlled stop at the
            # deceleration limit (0.3 m/s at 1.5 m/s²: 0.2 s), and a cycle; DDS, two processes
            # and a busy machine get 0.35 s (a watchdog of the thesis's 1 s, its stop 1.24 s
            # after the last command, would still fail)
            assert stopped.stamp - quiet < 0.5 + 0.02 + 0.2 + 0.02 + 0.35
            # full speed at the wall 4 m ahead: the program's own safety stops the base
            await drive(1.4, 0.0, 14.0)  # the robot's own limits make it 0.5 m/s
            assert base.collisions == 0
            assert 0.0 < base.clearance() < 0.5  # it did drive up to the wall, and stopped
            assert base.received[-1].v == pytest.approx(0.0, abs=0.02)
        finally:
            operator.close()
            await stop(process)
            base.close()

    asyncio.run(run())
