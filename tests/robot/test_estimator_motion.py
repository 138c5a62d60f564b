"""The estimator's pose bookkeeping, written out in floats, against the pose algebra."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.estimation import Odometry
from freelook.geometry import Pose
from freelook.robot._estimator import _moved_back, _moved_on

coordinates = st.floats(-1e3, 1e3)
angles = st.floats(-10.0, 10.0) | st.sampled_from([0.0, -0.0, math.pi, -math.pi])
poses = st.tuples(coordinates, coordinates, angles)


def _bits(pose: tuple[float, float, float]) -> tuple[str, ...]:
    return tuple(float(v).hex() for v in pose)


@settings(max_examples=300, deadline=None)
@given(poses, poses, poses)
def test_moving_on_is_compose_of_relative_to_the_bit(
    pose: tuple[float, float, float],
    then: tuple[float, float, float],
    now: tuple[float, float, float],
) -> None:
    moved = _moved_on(pose, then, now)
    assert type(moved) is Pose
    assert _bits(moved) == _bits(Pose(*pose).compose(Pose(*then).relative(now)))


@settings(max_examples=300, deadline=None)
@given(poses, poses, poses)
def test_moving_back_is_compose_of_the_inverse_to_the_bit(
    pose: tuple[float, float, float],
    then: tuple[float, float, float],
    now: tuple[float, float, float],
) -> None:
    moved = _moved_back(pose, then, now)
    assert type(moved) is Pose
    expected = Pose(*pose).compose(Pose(*then).relative(now).inverse())
    assert _bits(moved) == _bits(expected)


def test_advancing_by_counts_leaves_the_state_an_update_leaves() -> None:
    rng = np.random.default_rng(7)
    updated, advanced = (Odometry(500, 0.195, 0.38, (1.0, 2.0, 3.0)) for _ in range(2))
    left = right = 0
    for k in range(200):
        if k % 4:  # every fourth step stands still
            left += int(rng.integers(-40, 40))
            right += int(rng.integers(-40, 40))
        yaw = None if k % 3 else float(rng.normal(0.0, 0.05))
        estimate = updated.update(left, right, 0.02 * k, yaw)
        advanced.advance_counts(left, right, 0.02 * k, yaw)
        assert estimate == advanced.estimate()
        assert updated.distance == advanced.distance
