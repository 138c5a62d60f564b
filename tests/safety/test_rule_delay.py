"""The delay rule: the speed capped so the robot stops within what the operator has seen, at
the round trip the robot measured; a missing, stale or impossible round trip caps to the
slowest. Every test on its own injected clock."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.link import SafetyFlags
from freelook.safety import DelaySpeedRule, SafetyFilter, delay_speed_cap

ROBOT = load_robot("pioneer3dx")
NONE = np.zeros((0, 2))
FRONT = ROBOT.footprint.center_forward + ROBOT.footprint.length / 2
REAR = ROBOT.footprint.center_forward - ROBOT.footprint.length / 2
A_MAX = ROBOT.drive.max_deceleration
CYCLE = 0.04  # the filter's latency: a command's cycle to the wheels


def make(*rules: str, **delay: object) -> SafetyFilter:
    config = ROBOT.safety.delay_speed.model_copy(update=delay)
    safety = ROBOT.safety.model_copy(update={"rules": rules, "delay_speed": config})
    return SafetyFilter(safety, ROBOT.footprint, ROBOT.drive, latency=CYCLE)


def rule_of(f: SafetyFilter) -> DelaySpeedRule:
    (rule,) = [r for r in f.rules if isinstance(r, DelaySpeedRule)]
    return rule


def wall(distance: float) -> np.ndarray:
    """A wall across the lane, ``distance`` ahead of the footprint's front."""
    return np.column_stack((np.full(21, FRONT + distance), np.linspace(-1.0, 1.0, 21)))


def test_the_cap_is_the_stopping_distance_formula() -> None:
    for clear, trip in [(0.5, 0.0), (2.0, 0.3), (3.0, 1.0), (1.0, 2.0)]:
        v = delay_speed_cap(clear, trip, CYCLE, A_MAX)
        assert v > 0
        assert v * (trip + CYCLE) + v * v / (2 * A_MAX) == pytest.approx(clear)
    assert delay_speed_cap(0.0, 0.1, CYCLE, A_MAX) == 0.0
    assert delay_speed_cap(-1.0, 0.1, CYCLE, A_MAX) == 0.0


def test_the_cap_falls_as_the_round_trip_grows() -> None:
    f = make("hardware", "estop", "watchdog", "delay_speed")
    rule = rule_of(f)
    caps = []
    now = 0.0
    for trip in (0.01, 0.1, 0.25, 0.5, 1.0, 2.0):
        now += 10.0  # past the window: only this round trip counts
        assert rule.measured(now, trip)
        f.command_received(now)
        d = f.filter(4.0, 0.4, wall(3.0), now)
        expected = delay_speed_cap(3.0 - 0.1, trip, CYCLE, A_MAX)
        assert d.v == pytest.approx(expected)
        assert d.omega == pytest.approx(0.4 * expected / 4.0)  # the arc kept
        assert d.rules == ("delay_speed",)
        assert d.flags == SafetyFlags.DELAY
        assert rule.cap == pytest.approx(expected)
        caps.append(d.v)
    assert caps == sorted(caps, reverse=True)
    assert len(set(caps)) == len(caps)
    # slower than the cap is left alone; a point turn too
    assert f.filter(0.2, 0.4, wall(3.0), now).rules == ()
    assert f.filter(0.0, 1.0, wall(0.01), now).omega == 1.0


def test_the_lane_is_the_footprint_s_along_the_direction_of_travel() -> None:
    f = make("hardware", "estop", "watchdog", "delay_speed")
    rule = rule_of(f)
    rule.measured(0.0, 0.5)
    f.command_received(0.0)
    half = ROBOT.footprint.width / 2 + 0.1
    beside = np.array([[FRONT + 0.3, half + 0.05], [FRONT + 0.3, -half - 0.05]])
    behind = np.array([[REAR - 0.3, 0.0]])
    seen = delay_speed_cap(4.0 - 0.1, 0.5, CYCLE, A_MAX)  # the lane is empty: the seen range
    assert f.filter(3.0, 0.0, np.vstack((beside, behind)), 0.0).v == pytest.approx(seen)
    # reversing, the point behind is what counts, from the rear
    near = delay_speed_cap(0.3 - 0.1, 0.5, CYCLE, A_MAX)
    assert f.filter(-3.0, 0.0, np.vstack((beside, behind)), 0.0).v == pytest.approx(-near)
    # a point in the lane between the middle and the front is touching: no speed forward
    touching = np.array([[FRONT - 0.05, 0.0]])
    assert f.filter(0.5, 0.0, touching, 0.0).v == 0.0
    assert f.filter(-0.5, 0.0, touching, 0.0).v == -0.5  # backing away is free


def test_a_burst_counts_at_once_and_for_the_window() -> None:
    f = make("hardware", "estop", "watchdog", "delay_speed")
    rule = rule_of(f)
    for k in range(8):
        rule.measured(k * 0.25, 0.05)
    rule.measured(2.0, 0.9)  # a burst
    rule.measured(2.25, 0.05)
    assert rule.round_trip_at(2.25) == 0.9
    rule.measured(3.5, 0.05)
    assert rule.round_trip_at(3.9) == 0.9
    rule.measured(4.1, 0.05)
    assert rule.round_trip_at(4.1) == 0.05  # the burst left the 2 s window


def test_a_missing_stale_or_hostile_round_trip_caps_to_the_slowest() -> None:
    f = make("hardware", "estop", "watchdog", "delay_speed")
    rule = rule_of(f)
    slowest = delay_speed_cap(3.0 - 0.1, 2.0, CYCLE, A_MAX)
    f.command_received(0.0)
    assert f.filter(2.0, 0.0, wall(3.0), 0.0).v == pytest.approx(slowest)  # none measured yet
    for hostile in (math.nan, math.inf, -math.inf, -0.1, -1e300):
        assert not rule.measured(0.5, hostile)
    assert not rule.measured(math.nan, 0.1)
    assert rule.refused == 6
    f.command_received(0.5)
    assert f.filter(2.0, 0.0, wall(3.0), 0.5).v == pytest.approx(slowest)
    # longer than the slowest counts as the slowest (never beyond: the cap stays ≥ it)
    assert rule.measured(0.6, 1e300)
    f.command_received(0.6)
    assert f.filter(2.0, 0.0, wall(3.0), 0.6).v == pytest.approx(slowest)
    # a round trip stamped ahead of the robot's clock is not believed
    g = make("hardware", "estop", "watchdog", "delay_speed")
    rule_of(g).measured(100.0, 0.01)
    g.command_received(1.0)
    assert g.filter(2.0, 0.0, wall(3.0), 1.0).v == pytest.approx(slowest)
    # fresh, then stale: the cap falls back to the slowest after stale_after
    h = make("hardware", "estop", "watchdog", "delay_speed")
    rule_of(h).measured(0.0, 0.05)
    h.command_received(0.0)
    fast = h.filter(2.0, 0.0, wall(3.0), 0.0).v
    assert fast > slowest
    h.command_received(1.6)
    assert h.filter(2.0, 0.0, wall(3.0), 1.6).v == pytest.approx(slowest)
    # whatever a sender feeds, the cap never passes the one of the longest round trip fed
    rng = random.Random(59)
    k = make("hardware", "estop", "watchdog", "delay_speed")
    rule = rule_of(k)
    for step in range(400):
        now = step * 0.05
        value = rng.choice([math.nan, -1.0, math.inf, 0.0, rng.uniform(0.0, 3.0), 1e9])
        rule.measured(now, value)
        k.command_received(now)
        d = k.filter(5.0, 0.0, wall(2.0), now)
        assert d.v <= delay_speed_cap(2.0 - 0.1, 0.0, CYCLE, A_MAX) + 1e-12
        assert d.v >= delay_speed_cap(2.0 - 0.1, 2.0, CYCLE, A_MAX) - 1e-12
        assert math.isfinite(d.v)


def _approach(rules: tuple[str, ...], one_way: float, seed: int) -> tuple[float, float]:
    """A robot driven at 1.2 m/s towards a box its laser first sees 1.5 m ahead; the operator
    sees through a link of ``one_way`` s (±20 ms jitter) each way and stops as soon as the box
    shows, the stop reaching the robot a one-way delay later; only the operator stops it (no
    approach check). Returns the least gap between the footprint's front and the box (m) and
    the top speed (m/s)."""
    rng = random.Random(seed)
    laser_range = 1.5
    f = make(*rules, seen_range=laser_range)
    delay = [r for r in f.rules if isinstance(r, DelaySpeedRule)]
    dt = CYCLE
    box = 6.0  # the box's distance from the start of the footprint's front
    x = v = 0.0
    seen_at: list[tuple[float, float]] = []  # (when the operator sees it, the gap it showed)
    inbox: list[tuple[float, float]] = []  # (arrival, command)
    stopped = False
    least = math.inf
    top = 0.0
    for step in range(int(20.0 / dt)):
        now = step * dt
        gap = box - x
        least = min(least, gap)
        # the operator's side: what the robot saw one_way ago, and a command sent now
        seen_at.append((now + one_way + rng.uniform(0.0, 0.02), gap))
        if not stopped and any(t <= now and g <= laser_range for t, g in seen_at):
            stopped = True
        inbox.append((now + one_way + rng.uniform(0.0, 0.02), 0.0 if stopped else 1.2))
        # the robot's side
        if step % 6 == 0:  # a clock echo every 0.24 s: the round trip it measures
            for rule in delay:
                rule.measured(now, 2 * one_way + rng.uniform(0.0, 0.04))
        arrived = [c for t, c in inbox if t <= now]
        inbox = [(t, c) for t, c in inbox if t > now]
        command = arrived[-1] if arrived else None
        if command is not None:
            f.command_received(now)
            target = command
        points = np.array([[FRONT + gap, 0.0]]) if gap <= laser_range else NONE
        d = f.filter(target if command is not None else v, 0.0, points, now)
        # the wheels follow within the deceleration limit
        v = max(d.v, v - A_MAX * dt) if d.v < v else min(d.v, v + A_MAX * dt)
        x += v * dt
        top = max(top, v)
        if stopped and v == 0.0 and now > 3.0:
            break
    return least, top


@pytest.mark.parametrize("seed", [591, 592, 593])
def test_at_half_a_second_each_way_the_operator_s_stop_lands_short_of_the_box(seed: int) -> None:
    base = ("hardware", "estop", "watchdog")
    without, fastest = _approach(base, 0.5, seed)
    gap, top = _approach((*base, "delay_speed"), 0.5, seed)
    print(
        f"seed {seed}: without the cap {without:.3f} m at {fastest:.2f} m/s; "
        f"with it {gap:.3f} m at {top:.2f} m/s"
    )
    assert fastest == pytest.approx(1.2)
    assert without < 0.0  # without the cap the stop comes too late: contact
    assert gap > 0.0  # with it, the robot stops within what was seen: no contact
    # cruising at the cap of the round trip measured (1.0…1.04 s), not at the slowest
    assert delay_speed_cap(1.5 - 0.1, 1.04, CYCLE, A_MAX) - 1e-9 <= top
    assert top <= delay_speed_cap(1.5 - 0.1, 1.0, CYCLE, A_MAX) + 1e-9


def test_with_the_approach_check_the_cap_creeps_where_it_would_stand() -> None:
    # a passage whose walls' echoes reach across the lane: 0 clear, a cap of 0 for good
    # without the approach check; with it, a creep at min_speed, the check stopping it short
    touching = np.array([[FRONT + 0.01, 0.0]])
    alone = make("hardware", "estop", "watchdog", "delay_speed")
    checked = make("hardware", "estop", "watchdog", "zone", "approach", "delay_speed")
    for f in (alone, checked):
        rule_of(f).measured(0.0, 0.5)
        f.command_received(0.0)
    assert alone.filter(0.5, 0.0, touching, 0.0).v == 0.0
    crept = checked.filter(0.5, 0.0, np.array([[FRONT + 1.2, 0.0]]), 0.0)
    assert rule_of(checked).cap >= ROBOT.safety.delay_speed.min_speed
    assert crept.v > 0.0
    # at the point itself the approach check, not the delay rule, stands the robot still
    assert checked.filter(0.5, 0.0, touching, 0.0).v == 0.0
    assert rule_of(checked).cap == ROBOT.safety.delay_speed.min_speed
