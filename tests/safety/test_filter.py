"""Safety: inner zones act, the approach check stops before walls and lets the robot out."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.link import SafetyFlags
from freelook.safety import SafetyFilter

ROBOT = load_robot("pioneer3dx")


def make() -> SafetyFilter:
    return SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive)


def wall_points(distance: float, angle: float = 0.0, length: float = 6.0) -> np.ndarray:
    """Points on a straight wall whose nearest point is ``distance`` ahead at ``angle``."""
    s = np.linspace(-length / 2, length / 2, 300)
    base = np.array([math.cos(angle), math.sin(angle)]) * distance
    along = np.array([-math.sin(angle), math.cos(angle)])
    return base[None, :] + s[:, None] * along[None, :]


def test_inner_zone_caps_to_its_own_limits() -> None:
    f = make()
    f.command_received(0.0)
    zones = ROBOT.safety.zones
    # an obstacle to the side, inside the Min zone (0.6 m), not in the path
    side = np.array([[0.0, 0.45]])
    d = f.filter(1.0, 0.5, side, 0.0)
    assert d.zone == 0
    assert abs(d.v) <= zones[0].max_speed + 1e-12
    assert abs(d.omega) <= math.radians(zones[0].max_turn_rate_deg) + 1e-12
    assert d.v / d.omega == pytest.approx(1.0 / 0.5)  # ratio kept
    between = f.filter(1.0, 0.0, np.array([[0.0, 1.0]]), 0.02)
    assert between.zone == 2
    assert between.v == pytest.approx(zones[2].max_speed)
    far = f.filter(0.3, 0.1, np.array([[0.0, 3.0]]), 0.04)
    assert far.zone == -1
    assert (far.v, far.omega) == (0.3, 0.1)
    assert any(e.kind == "zone" for e in d.events)


@settings(max_examples=60, deadline=None)
@given(st.floats(0.6, 4.0), st.floats(-0.6, 0.6), st.floats(0.2, 1.4), st.floats(-0.5, 0.5))
def test_never_touches_a_wall_driving_at_it(
    distance: float, angle: float, speed: float, turn: float
) -> None:
    f = make()
    period = 0.02
    wall = wall_points(distance, angle)
    x = y = th = 0.0
    v_actual = w_actual = 0.0
    a = ROBOT.drive.max_deceleration
    for step in range(int(8.0 / period)):
        now = step * period
        f.command_received(now)
        c, s = math.cos(th), math.sin(th)
        rel = wall - np.array([x, y])
        local = np.column_stack((c * rel[:, 0] + s * rel[:, 1], -s * rel[:, 0] + c * rel[:, 1]))
        d = f.filter(speed, turn, local, now)
        # the base follows with the deceleration limit (and the same when speeding up)
        dv = max(-a * period, min(a * period, d.v - v_actual))
        ratio = d.omega / d.v if abs(d.v) > 1e-9 else 0.0
        v_actual += dv
        w_actual = v_actual * ratio if abs(d.v) > 1e-9 else d.omega
        th += w_actual * period
        x += v_actual * math.cos(th) * period
        y += v_actual * math.sin(th) * period
        fp = ROBOT.footprint
        half_l, half_w = fp.length / 2, fp.width / 2
        px = local[:, 0] - fp.center_forward
        inside = (np.abs(px) < half_l) & (np.abs(local[:, 1]) < half_w)
        assert not inside.any(), f"touched the wall at t={now:.2f}"


def test_robot_can_always_back_or_turn_out() -> None:
    f = make()
    f.command_received(0.0)
    front = ROBOT.footprint.center_forward + ROBOT.footprint.length / 2
    wall = wall_points(front + 0.03)  # inside the margin already
    assert f.filter(0.5, 0.0, wall, 0.0).v == 0.0  # forward is blocked
    # backing out is let through, at the Min zone's speed (the thesis's zones look all round)
    back = f.filter(-0.3, 0.0, wall, 0.02)
    assert back.v == pytest.approx(-ROBOT.safety.zones[0].max_speed)
    assert not back.flags & SafetyFlags.APPROACH
    # a rectangle cannot spin in place this close to a wall, but it can reverse and turn
    turn = f.filter(-0.2, 0.6, wall, 0.04)
    assert turn.omega > 0.0
    assert turn.v / turn.omega == pytest.approx(-0.2 / 0.6)
    assert not turn.flags & SafetyFlags.APPROACH
    corner = np.vstack([wall, wall_points(ROBOT.footprint.width / 2 + 0.03, math.pi / 2)])
    out = f.filter(-0.2, 0.0, corner, 0.06)  # in a corner: straight back out
    assert out.v < 0.0  # allowed (the Min zone caps its speed)


def test_watchdog_stops_in_a_controlled_ramp_and_releases() -> None:
    f = make()
    f.command_received(0.0)
    assert f.filter(0.5, 0.0, np.zeros((0, 2)), 0.0).v == 0.5
    d = f.filter(0.5, 0.0, np.zeros((0, 2)), 0.49)
    assert d.v == 0.5
    speeds = []
    t = 0.49
    for _ in range(40):
        t += 0.02
        d = f.filter(0.5, 0.0, np.zeros((0, 2)), t)
        speeds.append(d.v)
        assert d.flags & SafetyFlags.WATCHDOG
    assert speeds[0] == pytest.approx(0.5 - ROBOT.drive.max_deceleration * 0.02, abs=1e-9)
    assert speeds[-1] == 0.0
    assert all(b <= a for a, b in itertools.pairwise(speeds))
    f.command_received(t)
    assert f.filter(0.2, 0.0, np.zeros((0, 2)), t + 0.01).v == 0.2


def test_a_base_that_brakes_itself_is_told_zero_at_the_watchdog() -> None:
    """``watchdog_stop = "zero"``: the first silent cycle commands zero, turning or not (the
    base's own controller brakes it, so it is not braked twice)."""
    safety = ROBOT.safety.model_copy(update={"watchdog_stop": "zero"})
    f = SafetyFilter(safety, ROBOT.footprint, ROBOT.drive)
    f.command_received(0.0)
    assert f.filter(0.5, 0.4, np.zeros((0, 2)), 0.49).v == 0.5
    d = f.filter(0.5, 0.4, np.zeros((0, 2)), 0.51)
    assert (d.v, d.omega) == (0.0, 0.0)
    assert d.flags & SafetyFlags.WATCHDOG
    f.command_received(0.6)
    assert f.filter(0.2, 0.0, np.zeros((0, 2)), 0.61).v == 0.2


def test_estop_latches_and_bumpers_block_their_side() -> None:
    f = make()
    f.command_received(0.0)
    f.set_estop(True)
    d = f.filter(0.5, 0.2, np.zeros((0, 2)), 0.01)
    assert (d.v, d.omega) == (0.0, 0.0)
    assert d.flags & SafetyFlags.ESTOP
    f.set_estop(False)
    assert f.filter(0.5, 0.0, np.zeros((0, 2)), 0.02, bumper_front=True).v == 0.0
    assert f.filter(-0.5, 0.0, np.zeros((0, 2)), 0.03, bumper_front=True).v == -0.5
