"""A link rehearsed on this machine: the sans-I/O shaper (delay, jitter that keeps the order,
seeded loss) and, over real UDP on loopback, a robot server and an operator station that each
delay what they send, as ``--link-delay`` asks: the station's clock echoes measure the round
trip the two delays make."""

from __future__ import annotations

import asyncio
import math
import socket

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.hardware.sim import simulated_server
from freelook.link import (
    LinkDriver,
    LinkSession,
    LinkShaper,
    LinkShaping,
    NativeCodec,
    UdpEndpoint,
    VelocityCommand,
)
from freelook.maps import load_world
from freelook.operator import OperatorStation
from freelook.robot import ServerOptions
from loopback import robot_and_station
from waiting import wait_until_async

CONFIG = load_robot("pioneer3dx")
KEY = bytes(range(32))


@settings(max_examples=200)
@given(
    delay=st.floats(0, 5),
    jitter=st.floats(0, 2),
    sends=st.lists(st.floats(0, 0.5), min_size=1, max_size=200),
)
def test_each_packet_waits_the_delay_and_no_more_than_the_jitter_past_its_predecessor(
    delay: float, jitter: float, sends: list[float]
) -> None:
    shaper: LinkShaper[int] = LinkShaper(LinkShaping(delay, jitter))
    now, previous = 0.0, -math.inf
    for i, gap in enumerate(sends):
        now += gap
        due = shaper.push(now, i)
        assert due is not None
        assert due >= now + delay - 1e-9
        assert due <= max(now + delay + jitter, previous) + 1e-9
        assert due >= previous  # the order is kept
        previous = due
    out = shaper.due(math.inf)
    assert out == list(range(len(sends)))
    assert shaper.next_due() is None


def test_nothing_leaves_before_its_time() -> None:
    shaper: LinkShaper[str] = LinkShaper(LinkShaping(delay=0.5))
    shaper.push(1.0, "a")
    shaper.push(1.1, "b")
    assert shaper.due(1.49) == []
    assert shaper.next_due() == pytest.approx(1.5)
    assert shaper.due(1.5) == ["a"]
    assert shaper.due(1.6) == ["b"]


def test_loss_is_seeded_and_near_its_share() -> None:
    def lost(seed: int) -> list[bool]:
        shaper: LinkShaper[int] = LinkShaper(LinkShaping(loss=0.2, seed=seed))
        return [shaper.push(i * 0.01, i) is None for i in range(5000)]

    first = lost(3)
    assert first == lost(3)
    assert first != lost(4)
    assert 0.18 < sum(first) / len(first) < 0.22


def test_a_full_shaper_drops_the_newest() -> None:
    shaper: LinkShaper[int] = LinkShaper(LinkShaping(delay=10.0), max_held=3)
    assert [shaper.push(0.0, i) is not None for i in range(5)] == [True, True, True, False, False]
    assert shaper.overflowed == 2
    assert shaper.held == 3


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"delay": -0.1}, "delay"),
        ({"jitter": math.nan}, "jitter"),
        ({"loss": 1.5}, "loss"),
        ({"delay": math.inf}, "delay"),
    ],
)
def test_shapings_are_checked(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        LinkShaping(**kwargs)


def test_a_shaped_link_over_udp_measures_the_delay_it_was_given() -> None:
    """0.3 s each way, 0.05 s jitter: the station's shortest round trip is 0.6…0.7 s and its
    estimate of the robot's clock (the same wall clock here) is within that jitter."""
    shaping = LinkShaping(delay=0.3, jitter=0.05, seed=1)

    async def scenario() -> tuple[float, float, float]:
        server, _ = simulated_server(
            CONFIG,
            load_world("square"),
            ServerOptions(listen="udp://127.0.0.1:0", key=KEY, camera=False, shaping=shaping),
            robot_map=None,
        )

        def station_for(address: tuple[str, int] | None) -> OperatorStation:
            assert address is not None
            return OperatorStation(CONFIG, None, address, key=KEY, shaping=shaping)

        async with robot_and_station(server, station_for) as station:
            clock = station.session.clock
            await wait_until_async(lambda: clock.samples >= 8, 20.0, "eight clock echoes")
            assert clock.min_round_trip is not None
            assert clock.offset is not None
            assert clock.round_trip is not None
            return clock.min_round_trip, clock.offset, clock.round_trip

    shortest, offset, newest = asyncio.run(scenario())
    # no shorter than the shaping, and below the slowest round trip the robot believes (a
    # busy machine's scheduling adds to it)
    slowest = CONFIG.safety.delay_speed.max_round_trip
    assert 0.6 <= shortest < slowest
    # the estimate from the shortest trip is off by at most half what that trip took beyond
    # the shaped 0.3 s each way (how the rest split between the ways is unknown); + 0.01 s
    # for the stamps' own rounding
    assert abs(offset) <= (shortest - 0.6) / 2 + 0.01
    assert 0.6 <= newest < slowest


def test_a_shaped_driver_ends_when_cancelled_just_after_a_send() -> None:
    """A program's last command goes into the shaper and wakes its release loop, and the
    program's shutdown cancels the driver in the same turn of the event loop: the cancel is
    not taken for the wake-up (asyncio.wait_for in Python 3.11 returns the wake-up and drops
    the cancel, so a stopping sim went on waiting), and the driver ends."""

    async def scenario() -> tuple[int, bool, bool]:
        endpoint = await UdpEndpoint.open(("127.0.0.1", 0))
        friend = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        friend.bind(("127.0.0.1", 0))
        endpoint.learn_peer(friend.getsockname())
        loop = asyncio.get_running_loop()
        session = LinkSession(NativeCodec(KEY, sender=1), spacing=0.05)
        driver = LinkDriver(session, endpoint, loop.time, lambda event: None, LinkShaping(0.3))
        task = asyncio.create_task(driver.run())
        try:
            for _ in range(5):  # the driver's loops started and waiting
                await asyncio.sleep(0)
            driver.send(VelocityCommand(0.0, 0.0))
            assert driver.shaper is not None
            held = driver.shaper.held
            task.cancel()
            done, _ = await asyncio.wait({task}, timeout=5.0)  # at once; 5 s is far beyond
            return held, task in done, task.cancelled()
        finally:
            endpoint.close()
            friend.close()

    held, ended, cancelled = asyncio.run(scenario())
    assert held == 1  # the command was in the shaper, its release loop woken
    assert ended
    assert cancelled
