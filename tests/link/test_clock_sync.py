"""The operator's estimate of the robot's clock: NTP exchanges through delays that burst in
one direction, and the echoes a robot-end session gives a station."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import (
    ClockEcho,
    ClockEstimator,
    EchoSchedule,
    Heartbeat,
    LinkSession,
    NativeCodec,
    VelocityCommand,
    derive_key,
)

KEY = derive_key("clock test passphrase")


def exchange(
    t1: float, offset: float, up: float, hold: float, down: float
) -> tuple[float, float, float, float]:
    """The four times of one exchange that left at ``t1`` (operator clock)."""
    t2 = t1 + up + offset
    t3 = t2 + hold
    t4 = t3 - offset + down
    return t1, t2, t3, t4


delays = st.floats(0.0, 2.0, allow_nan=False)


@settings(max_examples=200)
@given(
    offset=st.floats(-1e4, 1e4, allow_nan=False),
    base=st.floats(0.0, 1.0),
    bursts=st.lists(st.tuples(delays, delays, st.floats(0.0, 0.1)), min_size=1, max_size=40),
    clean_at=st.integers(0, 39),
)
def test_offset_is_exact_when_one_exchange_saw_the_base_delay(
    offset: float, base: float, bursts: list[tuple[float, float, float]], clean_at: int
) -> None:
    """However the other exchanges' delays burst in one direction, the one that saw only the
    (symmetric) base delay both ways gives the offset."""
    clock = ClockEstimator()
    clean = clean_at % len(bursts)
    for i, (extra_up, extra_down, hold) in enumerate(bursts):
        if i == clean:
            extra_up = extra_down = 0.0
        assert clock.add(*exchange(i * 0.25, offset, base + extra_up, hold, base + extra_down))
    assert clock.offset == pytest.approx(offset, abs=1e-6)
    assert clock.min_round_trip == pytest.approx(2 * base, abs=1e-6)


@settings(max_examples=200)
@given(
    offset=st.floats(-1e4, 1e4, allow_nan=False),
    legs=st.lists(st.tuples(delays, delays, st.floats(0.0, 0.1)), min_size=1, max_size=40),
)
def test_offset_error_is_within_half_the_chosen_round_trip(
    offset: float, legs: list[tuple[float, float, float]]
) -> None:
    """Whatever the delays (asymmetric all the way), the estimate is off by no more than the
    bound it states, half the round trip of the exchange it took."""
    clock = ClockEstimator()
    for i, (up, down, hold) in enumerate(legs):
        clock.add(*exchange(i * 0.25, offset, up, hold, down))
    bound = clock.error_bound
    assert clock.offset is not None
    assert bound is not None
    assert abs(clock.offset - offset) <= bound + 1e-6


def test_a_burst_up_does_not_move_the_estimate() -> None:
    """Steady 0.5 s each way with 0.1 s jitter, then 3 s during which the uplink queues up to
    2 s: the estimate stays within 0.1 s of the truth and the newest round trip shows the
    burst."""
    rng = random.Random(5)
    clock = ClockEstimator()
    offset = 1234.5
    t = 0.0
    for _ in range(40):
        clock.add(*exchange(t, offset, 0.5 + rng.uniform(0, 0.1), 0.01, 0.5 + rng.uniform(0, 0.1)))
        t += 0.25
    for k in range(12):
        clock.add(*exchange(t, offset, 0.5 + k / 6, 0.01, 0.5 + rng.uniform(0, 0.1)))
        t += 0.25
    assert clock.offset == pytest.approx(offset, abs=0.1)
    assert clock.round_trip is not None
    assert clock.round_trip > 2.0
    assert clock.delay_up is not None
    assert clock.delay_up > 1.5
    assert clock.delay_down is not None
    assert clock.delay_down < 0.75


def test_old_exchanges_leave_the_window() -> None:
    """A link whose base delay grew: after the window the estimate is the new path's."""
    clock = ClockEstimator(window=5.0)
    clock.add(*exchange(0.0, 10.0, 0.01, 0.0, 0.01))
    for i in range(1, 40):
        clock.add(*exchange(i * 0.25, 10.0, 0.3, 0.0, 0.1))
    assert clock.min_round_trip == pytest.approx(0.4)
    assert clock.offset == pytest.approx(10.0 + 0.1)  # half the asymmetry: NTP's own error


@pytest.mark.parametrize(
    ("times", "why"),
    [
        ((math.nan, 1.0, 1.0, 2.0), "nan"),
        ((0.0, math.inf, math.inf, 2.0), "inf"),
        ((0.0, 5.0, 4.0, 2.0), "the robot answered before it received"),
        ((0.0, 1.0, 1.5, -1.0), "arrived before it left"),
        ((0.0, 1.0, 5.0, 1.0), "held longer than the round trip"),
    ],
)
def test_impossible_exchanges_are_refused_and_counted(
    times: tuple[float, float, float, float], why: str
) -> None:
    clock = ClockEstimator()
    assert not clock.add(*times), why
    assert clock.refused == 1
    assert not clock.ready
    assert clock.offset is None
    assert clock.robot_time(1.0) is None


def test_estimator_settings_are_checked() -> None:
    with pytest.raises(ValueError, match="window"):
        ClockEstimator(window=math.nan)
    with pytest.raises(ValueError, match="max_samples"):
        ClockEstimator(max_samples=0)


def test_echo_schedule_echoes_the_fastest_packet_once_per_spacing() -> None:
    echoes = EchoSchedule(spacing=0.25)
    echoes.saw(1, 10.0, 10.3)
    echoes.saw(1, 10.05, 10.2)  # the fastest: 0.15 s
    echoes.saw(1, 10.1, 10.9)
    echoes.saw(1, math.nan, 11.0)  # ignored
    assert echoes.due(1, 11.0) == ClockEcho(10.05, 10.2)
    echoes.saw(1, 11.0, 11.1)
    assert echoes.due(1, 11.1) is None  # not due yet
    assert echoes.due(1, 11.25) == ClockEcho(11.0, 11.1)
    assert echoes.due(1, 12.0) is None  # nothing seen since
    echoes.saw(2, 1.0, 1.1)
    echoes.forget(2)
    assert echoes.due(2, 20.0) is None


def test_sessions_estimate_the_robot_clock_and_stamp_expiry() -> None:
    """A robot end and an operator end whose wire clocks differ by 1000 s, 50 ms each way:
    the operator learns the offset from the robot's echoes and stamps its motion commands
    with an expiry on the robot's clock; a heartbeat carries none."""
    robot = LinkSession(
        NativeCodec(KEY, sender=100), spacing=0.05, role="robot", nonce=b"r", wire_offset=1000.0
    )
    operator = LinkSession(
        NativeCodec(KEY, sender=7),
        spacing=0.05,
        role="operator",
        nonce=b"o",
        periodic=lambda now: [Heartbeat()],
    )
    delay, now = 0.05, 0.0
    in_flight: list[tuple[float, str, bytes]] = []
    for packet in operator.poll(now):
        in_flight.append((now + delay, "robot", packet))
    decoded_at_robot = []
    while now < 3.0:
        now = round(now + 0.01, 6)
        due = [p for p in in_flight if p[0] <= now]
        in_flight = [p for p in in_flight if p[0] > now]
        for _, to, packet in due:
            end = robot if to == "robot" else operator
            back = "operator" if to == "robot" else "robot"
            for event in end.receive(packet, now, source="peer"):
                packets = getattr(event, "packets", ())
                for reply in packets:
                    in_flight.append((now + delay, back, reply))
                if to == "robot" and hasattr(event, "decoded"):
                    decoded_at_robot.append(event.decoded)
        for packet in robot.poll(now):
            in_flight.append((now + delay, "operator", packet))
        for packet in operator.poll(now):
            in_flight.append((now + delay, "robot", packet))
    assert operator.clock.offset == pytest.approx(1000.0, abs=0.011)
    assert operator.clock.min_round_trip == pytest.approx(0.1, abs=0.021)
    for packet in operator.send(VelocityCommand(0.2, 0.0), now):
        in_flight.append((now + delay, "robot", packet))
    for packet in operator.send(Heartbeat(), now):
        in_flight.append((now + delay, "robot", packet))
    now += delay
    decoded_at_robot.clear()
    for _, _, packet in in_flight:
        for event in robot.receive(packet, now, source="peer"):
            if hasattr(event, "decoded"):
                decoded_at_robot.append(event.decoded)
    command = next(d for d in decoded_at_robot if isinstance(d.message, VelocityCommand))
    beat = next(d for d in decoded_at_robot if isinstance(d.message, Heartbeat))
    assert beat.expires is None
    # sent at 3.0 on the operator's clock, 1003.0 on the robot's: arrives 0.05 s later and
    # may act 0.5 s (the lifetime) past that
    assert command.expires == pytest.approx(1003.0 + 0.05 + 0.5, abs=0.02)
