"""Velocity limits, linear drive and the thesis keyboard."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freelook.control import KeyboardDrive, LinearDrive, limit_velocity
from freelook.kinematics import DriveState, integrate_drive

vel = st.floats(-5, 5, allow_nan=False)


@given(vel, vel, st.floats(0.05, 2), st.floats(0.05, 2))
def test_limits_keep_the_ratio(v: float, w: float, v_max: float, w_max: float) -> None:
    lv, lw = limit_velocity(v, w, v_max, w_max)
    assert abs(lv) <= v_max + 1e-12
    assert abs(lw) <= w_max + 1e-12
    if abs(v) <= v_max and abs(w) <= w_max:
        assert (lv, lw) == (v, w)
    if v != 0 and w != 0:
        assert lv / lw == pytest.approx(v / w, rel=1e-9)


def test_minimums_raise_small_commands_keeping_the_ratio() -> None:
    assert limit_velocity(0.01, 0.005, 0.5, 1.0, v_min=0.05) == pytest.approx((0.05, 0.025))
    assert limit_velocity(0.0, 0.0, 0.5, 1.0, v_min=0.05, omega_min=0.1) == (0.0, 0.0)


def test_keyboard_increments_as_in_the_thesis() -> None:
    kb = KeyboardDrive()
    for _ in range(3):
        kb.press("up")
    assert kb.v == pytest.approx(0.06)
    kb.press("down")
    assert kb.v == pytest.approx(0.04)
    kb.press("left")
    assert kb.omega == pytest.approx(math.radians(2))
    kb.press("right")
    kb.press("right")
    assert kb.omega == pytest.approx(math.radians(-2))
    for _ in range(100):
        kb.press("up")
    assert kb.v == pytest.approx(0.5)  # clamped to the mode limit
    assert kb.press("space") == (0.0, 0.0)
    with pytest.raises(ValueError, match="unknown key"):
        kb.press("jump")  # type: ignore[arg-type]


def test_linear_drive_shuttles_and_reverses_at_each_end() -> None:
    drive = LinearDrive(0.0, 3.0)
    state = DriveState(0.0, 0.0, 0.0)
    dt = 0.02
    xs, targets = [], []
    peak = 0.0
    for _ in range(round(120 / dt)):
        out = drive.update(state.x, state.y, state.theta)
        peak = max(peak, abs(out.v))
        state = integrate_drive(state, out.v, out.v, 0.0, 0.4, dt)
        xs.append(state.x)
        targets.append(out.target)
    assert drive.legs_done >= 3
    assert min(xs) > -0.05
    assert max(xs) < 3.05
    assert max(xs) > 2.95
    assert peak == pytest.approx(math.sqrt(3.0 * 0.05), abs=1e-9)  # at the start of a 3 m leg
    assert LinearDrive(0.0, 10.0).update(0.0, 0.0, 0.0).v == pytest.approx(0.4)  # 400 mm/s cap
    # v = sqrt(|Δx|·0.05): 1 m from the target the speed is √0.05 ≈ 0.224 m/s
    probe = LinearDrive(0.0, 3.0)
    assert probe.update(2.0, 0.0, 0.0).v == pytest.approx(math.sqrt(0.05))
    with pytest.raises(ValueError, match="two different points"):
        LinearDrive(1.0, 1.0)


def test_linear_drive_aligns_with_x_before_driving() -> None:
    drive = LinearDrive(0.0, 2.0)
    state = DriveState(0.0, 0.0, 1.2)  # facing mostly along +y
    first = drive.update(state.x, state.y, state.theta)
    assert first.v == 0.0
    assert first.omega < 0.0  # turns toward heading 0
    dt = 0.02
    for _ in range(round(30 / dt)):
        out = drive.update(state.x, state.y, state.theta)
        d = 0.4
        state = integrate_drive(
            state, out.v - out.omega * d / 2, out.v + out.omega * d / 2, 0.0, d, dt
        )
    assert abs(math.remainder(state.theta, 2 * math.pi)) < math.radians(2)
    assert drive.legs_done >= 1
