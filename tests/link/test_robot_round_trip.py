"""The robot's own measure of the round trip: the station echoes the robot's packets as the
robot echoes the station's, and the robot believes only its own clock (sans-I/O sessions on an
injected clock, delays the test sets)."""

from __future__ import annotations

import math
import random

import pytest

from freelook.link import ClockEcho, Heartbeat, LinkSession, NativeCodec, derive_key
from freelook.link._clock_sync import RoundTrips

KEY = derive_key("round trip test passphrase")


def run(
    up: float, down: float, jitter: float, seconds: float, seed: int
) -> tuple[list[float], LinkSession, LinkSession]:
    """Both ends in session through a link of ``up`` and ``down`` s one way (plus a uniform
    0…``jitter``): the round trips the robot measured, and the robot and operator ends."""
    rng = random.Random(seed)
    robot = LinkSession(
        NativeCodec(KEY, sender=100),
        spacing=0.05,
        role="robot",
        nonce=b"r",
        wire_offset=1000.0,
        periodic=lambda now: [Heartbeat()],
    )
    operator = LinkSession(
        NativeCodec(KEY, sender=7), spacing=0.05, role="operator", nonce=b"o",
        periodic=lambda now: [Heartbeat()],
    )  # fmt: skip
    measured: list[float] = []
    robot.round_trips.on_round_trip = lambda station, trip, now: measured.append(trip)
    in_flight: list[tuple[float, str, bytes]] = []
    now = 0.0

    def send(to: str, packet: bytes) -> None:
        delay = (up if to == "robot" else down) + rng.uniform(0.0, jitter)
        in_flight.append((now + delay, to, packet))

    while now < seconds:
        now = round(now + 0.01, 6)
        due = [p for p in in_flight if p[0] <= now]
        in_flight = [p for p in in_flight if p[0] > now]
        for _, to, packet in due:
            end = robot if to == "robot" else operator
            for event in end.receive(packet, now, source="peer"):
                for reply in getattr(event, "packets", ()):
                    send("operator" if to == "robot" else "robot", reply)
        for packet in robot.poll(now):
            send("operator", packet)
        for packet in operator.poll(now):
            send("robot", packet)
    return measured, robot, operator


@pytest.mark.parametrize(("up", "down"), [(0.01, 0.01), (0.3, 0.2), (0.5, 0.5), (0.05, 0.8)])
def test_the_robot_measures_the_round_trip_from_the_station_s_echoes(
    up: float, down: float
) -> None:
    measured, _, _ = run(up, down, 0.0, 8.0, seed=591)
    assert len(measured) >= 12  # an echo every 0.25 s, once the session opened
    # each is the round trip of the fastest packet since the last echo: the link's, to the
    # poll's 10 ms grid on either end
    assert min(measured) >= up + down - 1e-5
    assert max(measured) <= up + down + 0.02 + 1e-5


def test_jitter_shows_in_the_measure() -> None:
    measured, _, _ = run(0.25, 0.25, 0.1, 8.0, seed=592)
    assert min(measured) >= 0.5 - 1e-5
    assert max(measured) <= 0.7 + 0.02
    assert max(measured) - min(measured) > 0.03


def test_an_echo_that_cannot_be_true_is_refused_and_counted() -> None:
    trips = RoundTrips(max_hold=0.5)
    said: list[float] = []
    trips.on_round_trip = lambda station, trip, now: said.append(trip)
    trips.sent(10.0)
    trips.sent(10.05)
    assert trips.echoed(7, ClockEcho(10.0, 50.0), 50.1, 10.4, 0.4) == pytest.approx(0.3)
    # not one of the robot's stamps (a stamp it never sent, one ahead of any it sent)
    assert trips.echoed(7, ClockEcho(10.02, 50.0), 50.0, 10.4, 0.4) is None
    assert trips.echoed(7, ClockEcho(10.5, 50.0), 50.0, 10.4, 0.4) is None
    # not finite anywhere
    for echo, stamp, arrival in [
        (ClockEcho(math.nan, 50.0), 50.0, 10.4),
        (ClockEcho(10.0, math.inf), 50.0, 10.4),
        (ClockEcho(10.0, 50.0), math.nan, 10.4),
        (ClockEcho(10.0, 50.0), 50.0, math.inf),
    ]:
        assert trips.echoed(7, echo, stamp, arrival, 0.4) is None
    # a hold below zero, an arrival before the send
    assert trips.echoed(7, ClockEcho(10.0, 50.0), 49.0, 10.4, 0.4) is None
    assert trips.echoed(7, ClockEcho(10.05, 50.0), 50.0, 10.0, 0.4) is None
    assert trips.refused == 8
    assert said == [pytest.approx(0.3)]
    # a station claiming a long hold shortens the round trip by max_hold at most
    assert trips.echoed(7, ClockEcho(10.0, 50.0), 1e9, 12.0, 2.0) == pytest.approx(1.5)
    # the robot forgets its oldest stamps: an echo of one no longer known is refused
    small = RoundTrips(remember=4)
    for k in range(6):
        small.sent(k * 0.05)
    assert small.echoed(7, ClockEcho(0.0, 1.0), 1.0, 1.0, 1.0) is None
    assert small.echoed(7, ClockEcho(0.25, 1.0), 1.0, 1.0, 1.0) == pytest.approx(0.75)


def test_a_station_in_session_that_echoes_what_the_robot_never_sent_moves_nothing() -> None:
    """An authenticated station's forged echoes (a stamp the robot never sent, one ahead of
    its clock, a hold below zero) reach the robot's session and are refused there:
    no round trip comes of them."""
    measured, robot, operator = run(0.1, 0.1, 0.0, 4.0, seed=593)
    assert measured  # the session is open and honest echoes were taken
    before, refused = len(measured), robot.round_trips.refused
    now = 4.01
    for echo in (ClockEcho(1003.123456, 5.0), ClockEcho(1e6, 5.0), ClockEcho(1000.5, 1e9)):
        for packet in operator.send(echo, now):
            events = robot.receive(packet, now, source="peer")
            assert [type(e).__name__ for e in events] == ["Accepted"]
    assert robot.round_trips.refused == refused + 3
    assert len(measured) == before
