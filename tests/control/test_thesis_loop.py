"""The thesis's station pieces: Algorithm 5.3's limits with its minimums, and Algorithm 5.2's
reach-then-advance target generator."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from freelook.control import (
    ReachThenAdvance,
    TrackingController,
    ellipse_points,
    thesis_limit_velocity,
)
from freelook.control._reference import Reference

V_MAX, W_MAX = 0.5, math.radians(50)
V_MIN, W_MIN = 0.2, math.radians(2)


def _command(bound: float) -> st.SearchStrategy[float]:
    """0, or a magnitude a controller outputs (from 1e-6): denormals underflow in the ratio."""
    magnitude = st.floats(1e-6, bound)
    return st.one_of(st.just(0.0), magnitude, magnitude.map(lambda x: -x))


@given(_command(3), _command(5))
def test_thesis_limits_keep_signs_and_bounds(v: float, w: float) -> None:
    lv, lw = thesis_limit_velocity(v, w, V_MAX, W_MAX, V_MIN, W_MIN)
    assert abs(lv) <= V_MAX + 1e-12
    assert abs(lw) <= W_MAX + 1e-12
    assert lv * v >= 0
    assert lw * w >= 0
    if v != 0 and w != 0:
        # every moving command is raised to at least both minimums (or cut at a maximum)
        assert abs(lv) >= V_MIN - 1e-12 or abs(lw) >= W_MAX - 1e-12
        assert abs(lw) >= W_MIN - 1e-12 or abs(lv) >= V_MAX - 1e-12


@given(st.floats(0.2, 0.5), st.floats(math.radians(2), math.radians(50)))
def test_thesis_limits_leave_a_command_between_the_bounds_alone(v: float, w: float) -> None:
    assert thesis_limit_velocity(v, -w, V_MAX, W_MAX, V_MIN, W_MIN) == (v, -w)


def test_a_straight_command_keeps_its_speed_and_is_raised_only_when_under_the_minimum() -> None:
    assert thesis_limit_velocity(0.5, 0.0, V_MAX, W_MAX, V_MIN, W_MIN) == (0.5, 0.0)
    assert thesis_limit_velocity(-0.1, 0.0, V_MAX, W_MAX, V_MIN, W_MIN) == (-V_MIN, 0.0)
    assert thesis_limit_velocity(0.0, 0.3, V_MAX, W_MAX, V_MIN, W_MIN) == (0.0, 0.3)


def test_a_tiny_turn_throws_the_speed_up_to_its_maximum() -> None:
    # the ratio rule of eqs. 5.3–5.4: ω at a tenth of its minimum scales v by ten, then v is
    # cut to its maximum on its own (the ratio is broken, as the thesis's code breaks it)
    v, w = thesis_limit_velocity(0.22, W_MIN / 10, V_MAX, W_MAX, V_MIN, W_MIN)
    assert v == pytest.approx(V_MAX)
    assert w == pytest.approx(W_MIN)
    # a slow straight command goes at the minimum speed; a zero command stays zero
    assert thesis_limit_velocity(0.05, 0.0, V_MAX, W_MAX, V_MIN, W_MIN) == (V_MIN, 0.0)
    assert thesis_limit_velocity(-0.05, 0.0, V_MAX, W_MAX, V_MIN, W_MIN) == (-V_MIN, 0.0)
    assert thesis_limit_velocity(0.0, 0.0, V_MAX, W_MAX, V_MIN, W_MIN) == (0.0, 0.0)


def _ellipse_targets(reach: float = 0.05) -> ReachThenAdvance:
    _, x, y = ellipse_points(101)
    return ReachThenAdvance(np.arange(101), x, y, periodic=True, reach=reach)


def test_the_target_holds_until_the_robot_reaches_it() -> None:
    gen = _ellipse_targets()
    first = gen.target
    assert (first.x, first.y) == pytest.approx((1.8, 0.0))
    assert first.theta == pytest.approx(math.pi / 2, abs=1e-3)
    # eq. 6.1's t runs over the points: v_r is metres per point (π/50 at the first)
    assert first.v == pytest.approx(math.pi / 50, rel=1e-2)
    # far away, however long: the same target
    for _ in range(100):
        assert gen.update(0.0, 0.0, 0.0) == first
    # within reach: the next point
    nxt = gen.update(1.8 - 0.03, 0.0, math.pi / 2)
    assert nxt is not None
    assert gen.index == 1
    assert math.hypot(nxt.x - first.x, nxt.y - first.y) == pytest.approx(math.pi / 50, abs=1e-3)


def test_a_passed_target_counts_but_one_behind_far_away_does_not() -> None:
    gen = _ellipse_targets()
    # 0.1 m sideways of the first point, facing past it: passed, within reach_behind
    gen.update(1.9, 0.05, math.pi / 2)
    assert gen.index == 1
    gen = _ellipse_targets()
    gen.update(1.8, 1.0, math.pi / 2)  # 1 m on, facing away: not reached
    assert gen.index == 0


def test_a_lap_driven_point_by_point_ends_the_generator() -> None:
    gen = _ellipse_targets()
    _, x, y = ellipse_points(101)
    for k in range(101):
        assert not gen.done
        gen.update(float(x[k]), float(y[k]), 0.0)
    assert gen.done
    assert gen.update(float(x[-1]), float(y[-1]), 0.0) is None


def test_gain_scale_zero_leaves_only_the_feed_forward() -> None:
    ref = Reference(1.0, 0.5, 0.3, 0.2, 0.1)
    opened = TrackingController(gain_form="thesis", gain_scale=0.0)
    v, w = opened.command(ref, 0.0, 0.0, 0.0)
    assert v == pytest.approx(0.2 * math.cos(0.3))
    assert w == pytest.approx(0.1)
    closed = TrackingController(gain_form="thesis").command(ref, 0.0, 0.0, 0.0)
    assert closed[0] > v
    assert closed[1] > w
    with pytest.raises(ValueError, match="gain scale"):
        TrackingController(gain_scale=-1.0)
    with pytest.raises(ValueError, match="reach"):
        ReachThenAdvance([0, 1], [0, 1], [0, 1], reach=0.0)
