"""The thesis's half-duplex radio link (sans-I/O): frames take their serial and air time, a
lone sender loses nothing, frames on the air together are both lost, the loss rises with the
load, a collision may lock a node until it is restarted."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import HalfDuplexLink, HalfDuplexRadio, periodic_link

THESIS = {"up": (15, 0.047), "down": (107, 0.031)}  # bytes, s: the thesis's frames (§5.1, §6.1)
EXACT = HalfDuplexRadio(tick=0.0, jitter=0.0)  # sends at their due time exactly


def test_a_frame_takes_its_serial_lines_and_its_air_time() -> None:
    radio = HalfDuplexRadio()
    assert radio.serial_time(107) == pytest.approx(107 * 10 / 921_600)
    assert radio.airtime(107) == pytest.approx((107 + 17) * 8 / 250_000)  # 3.97 ms
    link = HalfDuplexLink(EXACT)
    start = link.send("robot", b"x" * 107, 1.0)
    assert start == pytest.approx(1.0 + radio.serial_time(107))
    arrives = start + radio.airtime(107) + radio.serial_time(107)
    assert link.receive("station", arrives - 1e-6) == []
    assert link.receive("station", arrives) == [b"x" * 107]
    assert link.counters["down"].delivered == 1


@settings(max_examples=40, deadline=None)
@given(
    sizes=st.lists(st.integers(1, 120), min_size=1, max_size=30),
    gaps=st.lists(st.floats(0.0, 0.05), min_size=30, max_size=30),
    sender=st.sampled_from(["station", "robot"]),
    seed=st.integers(0, 1000),
)
def test_no_frame_is_delivered_before_its_air_time_ends(
    sizes: list[int], gaps: list[float], sender: str, seed: int
) -> None:
    radio = HalfDuplexRadio()
    link = HalfDuplexLink(radio, seed)
    other = "robot" if sender == "station" else "station"
    due, sent = 0.0, {}
    for k, size in enumerate(sizes):
        due += gaps[k]
        data = k.to_bytes(2, "big") * size
        start = link.send(sender, data, due)  # type: ignore[arg-type]
        assert start >= due + radio.serial_time(len(data))
        sent[data] = start + radio.airtime(len(data)) + radio.serial_time(len(data))
    now = 0.0
    while now < due + 1.0:
        for data in link.receive(other, now):  # type: ignore[arg-type]
            assert now >= sent[data] - 1e-12
        now += 0.0005
    # a lone sender on an idle channel loses nothing, whatever its frames and spacing
    counters = link.counters[link.direction(sender)]  # type: ignore[arg-type]
    assert counters.delivered == counters.sent == len(sizes)
    assert link.collisions == 0


@settings(max_examples=30, deadline=None)
@given(
    size=st.integers(1, 120),
    spacing=st.floats(0.005, 0.2),
    seed=st.integers(0, 10_000),
    side=st.sampled_from(["up", "down"]),
)
def test_a_lone_sender_on_its_timer_loses_nothing(
    size: int, spacing: float, seed: int, side: str
) -> None:
    frames = (size, spacing)
    link = periodic_link(
        HalfDuplexRadio(lock_per_collision=1.0),
        seed,
        5.0,
        frames if side == "up" else None,
        frames if side == "down" else None,
    )
    link.receive("robot" if side == "up" else "station", 6.0)  # the ones still in flight
    counters = link.counters[side]
    assert counters.sent > 0
    assert counters.delivered == counters.sent
    assert counters.collided == counters.silenced == 0
    assert link.lockups == []


def test_frames_on_the_air_together_are_both_lost_and_apart_both_arrive() -> None:
    link = HalfDuplexLink(EXACT)
    link.send("robot", bytes(107), 0.0)
    link.send("station", bytes(15), 0.002)  # inside the robot's 3.97 ms on the air
    assert link.receive("station", 1.0) == []
    assert link.receive("robot", 1.0) == []
    assert link.collisions == 1
    assert link.counters["up"].collided == link.counters["down"].collided == 1
    apart = HalfDuplexLink(EXACT)
    end = apart.send("robot", bytes(107), 0.0) + EXACT.airtime(107)
    # on the air a turnaround after the robot's frame ended
    apart.send("station", bytes(15), end + EXACT.turnaround - EXACT.serial_time(15) + 1e-6)
    assert apart.receive("station", 1.0) == [bytes(107)]
    assert apart.receive("robot", 1.0) == [bytes(15)]
    assert apart.collisions == 0


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), seconds=st.floats(1.0, 20.0))
def test_every_frame_sent_is_delivered_lost_or_in_flight(seed: int, seconds: float) -> None:
    radio = HalfDuplexRadio(lock_per_collision=0.01)
    link = periodic_link(radio, seed, seconds, THESIS["up"], THESIS["down"])
    for side in ("up", "down"):
        c = link.counters[side]
        assert 0 <= c.sent - (c.delivered + c.collided + c.silenced) <= 2
    # each collision at these frames and spacings pairs one frame each way
    assert link.counters["up"].collided <= link.collisions
    assert link.counters["down"].collided <= link.collisions


def _mean_drop(side: str, up: tuple[int, float], down: tuple[int, float]) -> float:
    drops = [periodic_link(EXACT, s, 20.0, up, down).counters[side].drop for s in range(3)]
    return sum(drops) / len(drops)


def test_the_drop_rises_with_the_load() -> None:
    # the robot's frames grow: the station's commands collide more often
    by_size = [_mean_drop("up", THESIS["up"], (size, 0.031)) for size in (10, 50, 107)]
    assert by_size[0] < by_size[1] < by_size[2]
    # the station sends more often: the robot's telemetry collides more often
    by_rate = [_mean_drop("down", (15, spacing), THESIS["down"]) for spacing in (0.2, 0.047, 0.016)]
    assert by_rate[0] < by_rate[1] < by_rate[2]
    # the rate the unsynchronised senders give: (both air times) / the other side's spacing
    airtimes = EXACT.airtime(15) + EXACT.airtime(107) + 2 * EXACT.turnaround
    assert by_size[2] == pytest.approx(100 * airtimes / 0.031, rel=0.15)


def test_on_their_windows_timers_the_thesiss_trials_differ_by_the_clocks_phases() -> None:
    # the same frames and spacings, only the hosts' clocks drawn anew: some draws never
    # collide, some lose half the station's commands (its every other send on a robot tick)
    drops = [
        periodic_link(HalfDuplexRadio(), s, 60.0, THESIS["up"], THESIS["down"]).counters["up"].drop
        for s in range(12)
    ]
    assert min(drops) < 1.0
    assert max(drops) > 30.0
    assert max(drops) <= 51.0


def test_a_collision_locks_the_second_node_until_it_is_restarted() -> None:
    radio = HalfDuplexRadio(tick=0.0, jitter=0.0, lock_per_collision=1.0, boot=1.0)
    link = HalfDuplexLink(radio)
    link.send("robot", bytes(107), 0.0)
    link.send("station", bytes(15), 0.002)  # the station's frame comes second
    assert link.lockups == [(pytest.approx(0.002 + radio.serial_time(15)), "station")]
    assert link.locked("station", 0.5)
    assert link.silent(0.5)
    assert not link.locked("robot", 0.5)
    assert link.first_lockup(0.5) == link.lockups[0]
    for k in range(1, 10):  # nothing either way while it is locked
        link.send("robot", bytes(107), 0.1 * k)
        link.send("station", bytes(15), 0.1 * k + 0.05)
    assert link.receive("station", 1.0) == []
    assert link.receive("robot", 1.0) == []
    link.restart("robot", 1.0)  # the working node: nothing changes
    assert link.locked("station", 1.5)
    link.restart("station", 1.0)  # boots for 1 s
    assert link.locked("station", 1.9)
    assert not link.locked("station", 2.0)
    link.send("robot", bytes(107), 2.1)
    link.send("station", bytes(15), 2.2)
    assert link.receive("station", 3.0) == [bytes(107)]
    assert link.receive("robot", 3.0) == [bytes(15)]
    assert link.restarts == [(1.0, "robot"), (1.0, "station")]


def test_a_radio_that_cannot_be_is_refused() -> None:
    with pytest.raises(ValueError, match="lock_per_collision"):
        HalfDuplexRadio(lock_per_collision=1.5)
    with pytest.raises(ValueError, match="baud"):
        HalfDuplexRadio(baud=0.0)
    with pytest.raises(ValueError, match="≥ 0"):
        HalfDuplexRadio(jitter=-1.0)
