"""The effective track width learnt from the gyro: it converges from a wrong start, stays put
on a still robot, refuses a stall, ignores non-finite samples and stays within its bounds."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.estimation import TrackWidthLearner

LOW, HIGH = TrackWidthLearner.RATIO_BOUNDS


def turn_in_place(
    learner: TrackWidthLearner,
    true_ratio: float,
    rng: np.random.Generator,
    turns: int = 12,
    odometry_hz: float = 24.0,
    rate: float = 1.0,  # rad/s the base's odometry reports
) -> None:
    """Point turns of 90° of the body, alternately left and right, with random slip on the
    body's turn and noise on the gyro's, each followed by a pause."""
    dt = 1.0 / odometry_hz
    for i in range(turns):
        sign = 1.0 if i % 2 == 0 else -1.0
        body = 0.0
        while body < math.pi / 2:
            reported = sign * rate * dt
            true = reported / true_ratio * (1.0 + 0.05 * rng.standard_normal())
            body += abs(true)
            learner.observe(reported, true + 2e-4 * rng.standard_normal(), dt)
        for _ in range(12):  # a pause: nothing turns, the gyro reads its noise
            learner.observe(0.0, 2e-4 * rng.standard_normal(), dt)


@settings(max_examples=60, deadline=None)
@given(
    true_ratio=st.floats(1.0, 3.0),
    start=st.floats(LOW, HIGH),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_width_converges_from_a_wrong_start(true_ratio: float, start: float, seed: int) -> None:
    learner = TrackWidthLearner(start)
    turn_in_place(learner, true_ratio, np.random.default_rng(seed))
    assert learner.ratio == pytest.approx(true_ratio, rel=0.03)
    assert learner.windows >= 12
    assert learner.ratio_std < 0.05 * true_ratio


def test_a_husky_that_over_reports_its_turns_by_70_percent_is_learnt_in_a_few_turns() -> None:
    learner = TrackWidthLearner()  # the base's odometry taken as it says
    rng = np.random.default_rng(3)
    turn_in_place(learner, 1.7, rng, turns=2)
    assert learner.ratio == pytest.approx(1.7, rel=0.05)
    # its corrected turn is the body's
    assert learner.corrected(1.7 * math.pi / 2) == pytest.approx(math.pi / 2, rel=0.05)


def test_a_still_robot_teaches_nothing() -> None:
    learner = TrackWidthLearner(1.4)
    rng = np.random.default_rng(1)
    for _ in range(10_000):  # a gyro's bias and noise, the wheels still
        learner.observe(0.0, 1e-3 + 1e-3 * rng.standard_normal(), 0.02)
    assert learner.ratio == 1.4
    assert learner.windows == 0
    assert learner.refused == 0


def test_creeping_turns_below_the_rate_floor_teach_nothing() -> None:
    learner = TrackWidthLearner()
    for _ in range(5_000):  # 0.05 rad/s: below min_rate, the odometry's turn is its noise
        learner.observe(0.05 * 0.02, 0.02 * 0.02, 0.02)
    assert learner.ratio == 1.0


def test_a_stall_or_a_spin_is_refused() -> None:
    learner = TrackWidthLearner(1.5)
    turn_in_place(learner, 1.5, np.random.default_rng(2), turns=4)
    settled = learner.ratio
    refused = learner.refused
    for _ in range(24):  # the wheels spin, the body stands (a stall against a wall)
        learner.observe(0.05, 0.0, 1 / 24)
    for _ in range(24):  # the gyro turns the other way (a robot carried)
        learner.observe(0.05, -0.05, 1 / 24)
    assert learner.refused >= refused + 2
    assert learner.ratio == settled


def test_other_ground_is_learnt_afresh() -> None:
    # concrete, then grass: after a run of refused windows the estimate opens up again
    learner = TrackWidthLearner()
    rng = np.random.default_rng(4)
    turn_in_place(learner, 1.3, rng, turns=8)
    assert learner.ratio == pytest.approx(1.3, rel=0.03)
    turn_in_place(learner, 2.6, rng, turns=24)
    assert learner.ratio == pytest.approx(2.6, rel=0.03)


samples = st.tuples(
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_nan=True, allow_infinity=True),
    st.floats(allow_nan=True, allow_infinity=True),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(samples, max_size=200), st.floats(LOW, HIGH))
def test_any_samples_leave_the_ratio_finite_and_within_its_bounds(
    given_samples: list[tuple[float, float, float]], start: float
) -> None:
    learner = TrackWidthLearner(start)
    for odometry_turn, gyro_turn, dt in given_samples:
        learner.observe(odometry_turn, gyro_turn, dt)
        assert math.isfinite(learner.ratio)
        assert LOW - 1e-12 <= learner.ratio <= HIGH + 1e-12
        assert math.isfinite(learner.ratio_std)
        assert math.isfinite(learner.corrected(1.0))


@pytest.mark.parametrize(
    ("odometry_turn", "gyro_turn", "dt"),
    [(math.nan, 0.1, 0.02), (0.1, math.inf, 0.02), (0.1, 0.1, math.nan), (0.1, 0.1, 0.0)],
)
def test_a_non_finite_sample_is_ignored_and_counted(
    odometry_turn: float, gyro_turn: float, dt: float
) -> None:
    learner = TrackWidthLearner(2.0)
    assert not learner.observe(odometry_turn, gyro_turn, dt)
    assert learner.ignored == 1
    assert learner.ratio == 2.0


@pytest.mark.parametrize("ratio", [0.4, 4.5, math.nan, math.inf])
def test_a_start_outside_the_bounds_is_refused_naming_them(ratio: float) -> None:
    with pytest.raises(ValueError, match=r"ratio must lie within 0.5…4.0"):
        TrackWidthLearner(ratio)
