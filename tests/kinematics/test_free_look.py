"""Free Look Control, Tank Control and saturation: the camera moves exactly as commanded."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.errors import ModeError
from freelook.kinematics import (
    WheelCommand,
    drive_derivative,
    free_look_control,
    free_look_control_batch,
    saturation_factor,
    saturation_factor_batch,
    tank_control,
    tank_control_batch,
)

angles = st.floats(-4 * math.pi, 4 * math.pi, allow_nan=False)
speeds = st.floats(-2.0, 2.0, allow_nan=False)
offsets = st.floats(0.01, 1.0).flatmap(lambda m: st.sampled_from([m, -m]))
lateral = st.floats(-0.5, 0.5, allow_nan=False)
widths = st.floats(0.1, 2.0)


def camera_velocity(
    theta: float, pan: float, cmd: WheelCommand, L1: float, L2: float, d: float
) -> tuple[float, float, float]:
    """ẋ and ψ̇ by the chain rule on x = z + R(θ)(L1, L2), ψ = θ + φ, from the drive model."""
    zx, zy, theta_dot, pan_dot = drive_derivative(theta, cmd.v_left, cmd.v_right, cmd.pan_rate, d)
    c, s = math.cos(theta), math.sin(theta)
    # d/dt R(θ)·(L1, L2) = θ̇·R(θ)·(−L2, L1)
    xdot = zx + theta_dot * (c * -L2 - s * L1)
    ydot = zy + theta_dot * (s * -L2 + c * L1)
    return xdot, ydot, theta_dot + pan_dot


@settings(max_examples=500)
@given(angles, angles, offsets, lateral, widths, speeds, speeds, speeds)
def test_camera_moves_as_commanded(
    theta: float, pan: float, L1: float, L2: float, d: float, v1: float, v2: float, omega: float
) -> None:
    cmd = free_look_control(v1, v2, omega, pan, L1, L2, d)
    xdot, ydot, psidot = camera_velocity(theta, pan, cmd, L1, L2, d)
    psi = theta + pan
    assert xdot == pytest.approx(math.cos(psi) * v1 - math.sin(psi) * v2, abs=1e-9)
    assert ydot == pytest.approx(math.sin(psi) * v1 + math.cos(psi) * v2, abs=1e-9)
    assert psidot == pytest.approx(omega, abs=1e-9)


@settings(max_examples=300)
@given(angles, offsets, widths, speeds, speeds, speeds)
def test_centred_camera_equals_seed_000_eq_6(
    pan: float, L: float, d: float, v1: float, v2: float, omega: float
) -> None:
    """With L2 = 0: (v_l, v_r) = [[1, −d/(2L)], [1, d/(2L)]]·R(φ)·(v1, v2), k = ω − (v_r−v_l)/d."""
    a = math.cos(pan) * v1 - math.sin(pan) * v2
    b = math.sin(pan) * v1 + math.cos(pan) * v2
    v_left = a - d / (2 * L) * b
    v_right = a + d / (2 * L) * b
    cmd = free_look_control(v1, v2, omega, pan, L, 0.0, d)
    assert cmd.v_left == pytest.approx(v_left, abs=1e-9)
    assert cmd.v_right == pytest.approx(v_right, abs=1e-9)
    assert cmd.pan_rate == pytest.approx(omega - (v_right - v_left) / d, abs=1e-9)


@given(speeds, speeds, widths, speeds)
def test_tank_control_is_lemma_1(v: float, omega: float, d: float, pan_rate: float) -> None:
    cmd = tank_control(v, omega, d, pan_rate)
    assert cmd.v_left == pytest.approx(v - omega * d / 2)
    assert cmd.v_right == pytest.approx(v + omega * d / 2)
    assert cmd.pan_rate == pan_rate
    # and it produces the commanded chassis motion
    assert (cmd.v_left + cmd.v_right) / 2 == pytest.approx(v, abs=1e-12)
    assert (cmd.v_right - cmd.v_left) / d == pytest.approx(omega, abs=1e-9)


def test_flc_refuses_a_camera_on_the_axle() -> None:
    with pytest.raises(ModeError, match="L1 = 0"):
        free_look_control(1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.5)


@settings(max_examples=300)
@given(
    angles,
    offsets,
    lateral,
    widths,
    speeds,
    speeds,
    speeds,
    st.floats(0.1, 2.0),
    st.floats(0.1, 5.0),
)
def test_saturation_keeps_limits_and_direction(
    pan: float,
    L1: float,
    L2: float,
    d: float,
    v1: float,
    v2: float,
    omega: float,
    v_max: float,
    k_max: float,
) -> None:
    cmd = free_look_control(v1, v2, omega, pan, L1, L2, d)
    s = saturation_factor(cmd, v_max, k_max)
    assert 0.0 <= s <= 1.0
    scaled = free_look_control(s * v1, s * v2, s * omega, pan, L1, L2, d)
    assert abs(scaled.v_left) <= v_max * (1 + 1e-9)
    assert abs(scaled.v_right) <= v_max * (1 + 1e-9)
    assert abs(scaled.pan_rate) <= k_max * (1 + 1e-9)
    # direction kept: the scaled outputs are s times the original ones
    assert scaled.v_left == pytest.approx(s * cmd.v_left, abs=1e-9)
    assert scaled.pan_rate == pytest.approx(s * cmd.pan_rate, abs=1e-9)
    within = max(abs(cmd.v_left), abs(cmd.v_right)) <= v_max and abs(cmd.pan_rate) <= k_max
    if within:
        assert s == 1.0
    else:
        assert s < 1.0
        # and the scale is as large as possible: some limit is active
        assert max(
            abs(scaled.v_left) / v_max, abs(scaled.v_right) / v_max, abs(scaled.pan_rate) / k_max
        ) == pytest.approx(1.0, rel=1e-9)


def test_turn_rate_limit() -> None:
    cmd = tank_control(0.0, 2.0, 0.5)
    s = saturation_factor(cmd, 10.0, None, max_turn_rate=1.0, d=0.5)
    assert s == pytest.approx(0.5)


@settings(max_examples=50)
@given(st.integers(0, 2**32 - 1), offsets, lateral, widths)
def test_vectorised_equals_scalar(seed: int, L1: float, L2: float, d: float) -> None:
    rng = np.random.default_rng(seed)
    v1, v2, omega, pan = rng.uniform(-2, 2, (4, 64))
    left, right, k = free_look_control_batch(v1, v2, omega, pan, L1, L2, d)
    s = saturation_factor_batch(left, right, k, 1.0, 2.0)
    for i in range(64):
        cmd = free_look_control(v1[i], v2[i], omega[i], pan[i], L1, L2, d)
        assert (left[i], right[i], k[i]) == pytest.approx(
            (cmd.v_left, cmd.v_right, cmd.pan_rate), abs=1e-12
        )
        assert s[i] == pytest.approx(saturation_factor(cmd, 1.0, 2.0), abs=1e-12)
    tl, tr, tk = tank_control_batch(v1, omega, d, 0.3)
    assert np.allclose(tl, v1 - omega * d / 2)
    assert np.allclose(tr, v1 + omega * d / 2)
    assert np.all(tk == 0.3)
