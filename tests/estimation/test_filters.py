"""Odometry and the heading filter on exact synthetic inputs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.estimation import HeadingKalmanFilter, Odometry


def test_odometry_reproduces_a_circle_from_exact_counts() -> None:
    odo = Odometry(33_500, 0.1953, 0.4)
    mpc = odo.metres_per_count
    radius, speed = 1.0, 0.3
    omega = speed / radius
    left_speed, right_speed = speed - omega * 0.2, speed + omega * 0.2
    odo.update(0, 0, 0.0)
    for k in range(1, 1001):
        t = k * 0.02
        odo.update(int(left_speed * t / mpc), int(right_speed * t / mpc), t)
    t = 20.0
    assert odo.x == pytest.approx(radius * math.sin(omega * t), abs=2e-3)
    assert odo.y == pytest.approx(radius * (1 - math.cos(omega * t)), abs=2e-3)
    assert odo.theta == pytest.approx(math.remainder(omega * t, 2 * math.pi), abs=1e-3)


def test_heading_filter_learns_the_bias_standing_still() -> None:
    rng = np.random.default_rng(0)
    kf = HeadingKalmanFilter()
    bias = math.radians(0.4)
    for _ in range(6000):  # 60 s standing
        kf.predict(bias + rng.normal(0, 0.002), 0.01)
        kf.update_encoder_rate(0.0)
    assert kf.bias == pytest.approx(bias, abs=math.radians(0.03))
    assert abs(kf.heading) < math.radians(0.5)


def test_encoders_count_with_the_effective_track_width() -> None:
    # the tracks slip when turning: the chassis turns 4 % less than the geometric width says,
    # which the robot's identified effective track width (icr_spread) accounts for
    kf = HeadingKalmanFilter(track_ratio=1.04)
    true_rate = 0.5
    for _ in range(int(2 * math.pi / true_rate / 0.01)):  # one full turn
        kf.predict(true_rate, 0.01)
        kf.update_encoder_rate(true_rate * 1.04)
    turned = math.remainder(kf.heading, 2 * math.pi)
    assert abs(turned) < math.radians(0.5)  # the geometric width alone would be 14° off
    assert kf.refused == 0


def test_a_spinning_track_is_refused_and_the_gyro_carries_the_heading() -> None:
    kf = HeadingKalmanFilter()
    for _ in range(500):  # standing still, settled
        kf.predict(0.0, 0.01)
        kf.update_encoder_rate(0.0)
    for _ in range(300):  # one track spins on ice: the encoders say 1 rad/s, the body stands
        kf.predict(0.0, 0.01)
        kf.update_encoder_rate(1.0)
    assert kf.refused == 300 // 20  # every 0.2 s window refused
    assert abs(kf.heading) < math.radians(0.05)
    assert abs(kf.bias) < math.radians(0.01)


def test_absolute_heading_correction() -> None:
    kf = HeadingKalmanFilter(heading=0.3)
    kf.P[0, 0] = 0.01
    kf.correct_heading(0.0, 1e-6)
    assert kf.heading == pytest.approx(0.0, abs=1e-3)


def test_a_relocalization_jump_leaves_the_bias_alone() -> None:
    kf = HeadingKalmanFilter(heading=0.0)
    for _ in range(500):  # standing still with a biased gyro: the filter learns the bias
        kf.predict(0.01, 0.02)
        kf.update_encoder_rate(0.0)
    bias = kf.bias
    kf.reset_heading(2.0, math.radians(1.0))
    assert kf.heading == pytest.approx(2.0)
    assert kf.bias == pytest.approx(bias)
    # a Kalman update with the same 115° innovation would have bent the bias
    other = HeadingKalmanFilter(heading=0.0)
    other.P[:] = kf.P
    other.P[0, 1] = other.P[1, 0] = 1e-5
    other.correct_heading(2.0, math.radians(1.0) ** 2)
    assert abs(other.bias) > 1e-3
