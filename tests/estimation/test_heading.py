"""The heading filter's state [θ, b, s] on synthetic gyro and encoder data, and its algebra."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.estimation import HeadingKalmanFilter
from freelook.geometry import wrap_angle

ARW = math.radians(0.3) / 60.0  # rad/√s, the MEMS gyro of the robot configs


def test_for_robot_takes_the_gyro_datasheet_and_the_effective_track_width() -> None:
    config = load_robot("foi-ugv")
    kf = HeadingKalmanFilter.for_robot(config, 1.0)
    assert config.gyro is not None
    assert kf.heading == 1.0
    assert kf.gyro_noise == pytest.approx(
        math.radians(config.gyro.angle_random_walk_deg_sqrt_h) / 60
    )
    assert math.sqrt(kf.P[2, 2]) == pytest.approx(config.gyro.scale_factor_error)
    assert kf.track_ratio == config.slip.icr_spread
    assert kf.slip_noise == config.slip.noise


def test_a_constant_bias_is_learnt_standing_still_to_the_angle_random_walk_limit() -> None:
    """5 s standing (the encoders show no motion, a zero-velocity update): the bias to within
    0.01 °/s, three times what the gyro's own noise allows (ARW/√T = 0.0022 °/s)."""
    rng = np.random.default_rng(3)
    kf = HeadingKalmanFilter.for_robot(load_robot("foi-ugv"))
    bias, dt = math.radians(0.45), 0.02
    for _ in range(250):
        kf.predict(bias + ARW / math.sqrt(dt) * rng.standard_normal(), dt)
        kf.update_encoder_rate(0.0, dt)
    assert kf.bias == pytest.approx(bias, abs=math.radians(0.01))
    assert abs(kf.heading) < math.radians(0.05)
    assert math.sqrt(kf.P[1, 1]) < math.radians(0.005)  # and it knows it


def _turns_in_place(kf: HeadingKalmanFilter | None, seed: int, sign: float) -> float:
    """20 turns of 90° at 0.5 rad/s with 3 s standing between them, a gyro with 0.3 % scale
    error and 0.4 °/s bias, tracks slipping 1.5 % at random every sample and 1 % on average
    (the effective track width is 1.01 × the geometric one). Returns the heading error (rad)
    of the filter, or of the gyro integrated with its standstill bias removed if None."""
    rng = np.random.default_rng(seed)
    scale, bias, dt, ratio = 1.003, math.radians(0.4), 0.01, 1.01
    true = estimate = 0.0
    for _ in range(20):
        profile = [sign * 0.5] * round(math.pi / 2 / 0.5 / dt) + [0.0] * 300
        for tracks in profile:
            rate = tracks * (1.0 + 0.015 * rng.standard_normal())
            true += rate * dt
            gyro = scale * rate + bias + ARW / math.sqrt(dt) * rng.standard_normal()
            if kf is None:
                estimate += (gyro - bias) * dt
            else:
                kf.predict(gyro, dt)
                kf.update_encoder_rate(tracks * ratio, dt)
    if kf is not None:
        estimate = kf.heading
    return math.remainder(estimate - true, 2 * math.pi)


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_turns_in_place_calibrate_the_gyro_scale_against_the_tracks(sign: float) -> None:
    kf = HeadingKalmanFilter.for_robot(load_robot("foi-ugv"))
    error = _turns_in_place(kf, seed=11, sign=sign)
    # the tracks' random slip over 20 turns leaves about 0.35° (1σ) that nothing can remove
    assert abs(error) < math.radians(1.0)
    assert kf.scale_error == pytest.approx(0.003, abs=0.0006)
    assert kf.refused == 0
    # the gyro alone, even with its bias known, is 0.3 % of 1800° off
    assert abs(_turns_in_place(None, seed=11, sign=sign)) > math.radians(5.0)


# -- the filter's algebra ------------------------------------------------------------------

angles = st.floats(-50.0, 50.0)
rates = st.floats(-3.0, 3.0)
steps = st.floats(0.001, 0.1)


@st.composite
def filters(draw: st.DrawFn) -> HeadingKalmanFilter:
    """A filter in an arbitrary state with an arbitrary valid covariance."""
    kf = HeadingKalmanFilter(
        draw(angles), window=0.0, slip_noise=draw(st.floats(0.0, 0.1)), gate=math.inf
    )
    kf.x[1] = draw(st.floats(-0.05, 0.05))
    kf.x[2] = draw(st.floats(-0.01, 0.01))
    root = np.array(draw(st.lists(st.floats(-0.1, 0.1), min_size=9, max_size=9))).reshape(3, 3)
    kf.P = root @ root.T + np.diag([1e-8, 1e-10, 1e-10])
    return kf


def _valid_covariance(P: np.ndarray) -> bool:
    return bool(np.allclose(P, P.T, atol=1e-15) and np.linalg.eigvalsh(P).min() > -1e-12)


@settings(max_examples=200, deadline=None)
@given(filters(), rates, steps, rates)
def test_an_encoder_update_never_increases_a_variance(
    kf: HeadingKalmanFilter, gyro: float, dt: float, encoder: float
) -> None:
    kf.predict(gyro, dt)
    before = np.diag(kf.P).copy()
    assert kf.update_encoder_rate(encoder, dt)
    assert np.all(np.diag(kf.P) <= before * (1 + 1e-9) + 1e-18)
    assert _valid_covariance(kf.P)


@settings(max_examples=200, deadline=None)
@given(filters(), angles, st.floats(1e-8, 1.0))
def test_an_absolute_heading_never_increases_a_variance(
    kf: HeadingKalmanFilter, measured: float, variance: float
) -> None:
    before = np.diag(kf.P).copy()
    kf.correct_heading(measured, variance)
    assert np.all(np.diag(kf.P) <= before * (1 + 1e-9) + 1e-18)
    assert _valid_covariance(kf.P)
    assert -math.pi < kf.heading <= math.pi


@settings(max_examples=200, deadline=None)
@given(
    filters(),
    st.lists(
        st.one_of(
            st.tuples(st.just("predict"), rates, steps),
            st.tuples(st.just("encoder"), rates, steps),
            st.tuples(st.just("absolute"), angles, st.floats(1e-6, 1.0)),
            st.tuples(st.just("reset"), angles, st.floats(1e-3, 1.0)),
        ),
        max_size=30,
    ),
)
def test_the_heading_stays_wrapped_and_the_covariance_valid(
    kf: HeadingKalmanFilter, events: list[tuple[str, float, float]]
) -> None:
    for kind, value, other in events:
        if kind == "predict":
            kf.predict(value, other)
        elif kind == "encoder":
            kf.update_encoder_rate(value, other)
        elif kind == "absolute":
            kf.correct_heading(value, other)
        else:
            kf.reset_heading(value, other)
        assert -math.pi < kf.heading <= math.pi
        assert _valid_covariance(kf.P)


def test_predict_refuses_a_step_that_is_not_forward() -> None:
    with pytest.raises(ValueError, match=r"prediction step must be > 0 s, got 0\.0"):
        HeadingKalmanFilter().predict(0.1, 0.0)


def test_the_rate_is_zero_while_the_tracks_stand_still() -> None:
    kf = HeadingKalmanFilter()
    kf.predict(0.003, 0.02)  # the gyro's bias and noise
    kf.update_encoder_rate(0.0, 0.02, standing=True)
    assert kf.rate == 0.0
    kf.predict(0.2, 0.02)
    assert kf.rate == pytest.approx(0.2)  # moving again: the gyro's rate
    kf.update_encoder_rate(0.2, 0.02)
    assert kf.rate == pytest.approx(0.2)


def test_an_encoder_interval_that_does_not_match_the_gyros_is_not_used() -> None:
    kf = HeadingKalmanFilter(window=0.0)
    kf.predict(0.1, 0.02)
    assert not kf.update_encoder_rate(0.0, 0.04)
    assert not kf.update_encoder_rate(0.0, 0.02)  # nothing left to pair with
    kf.predict(0.1, 0.02)
    assert kf.update_encoder_rate(0.1, 0.02)


class _PlainFilter(HeadingKalmanFilter):
    """The filter's steps in their plain form, in numpy (a fresh F each step, np.outer): the
    reference the compiled steps are held to, within rounding."""

    @property
    def rate(self) -> float:
        if self._standing:
            return 0.0
        return (self._last_gyro - float(self.x[1])) / (1.0 + float(self.x[2]))

    def predict(self, gyro_rate: float, dt: float) -> None:
        if self._pending is not None:
            self._clear_window()
        self._last_gyro = gyro_rate
        self._standing = False
        self._pending = (gyro_rate, dt)
        gain = 1.0 / (1.0 + float(self.x[2]))
        rate = (gyro_rate - float(self.x[1])) * gain
        self.x[0] = wrap_angle(float(self.x[0]) + rate * dt)
        F = np.array([[1.0, -dt * gain, -rate * dt * gain], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        P = F @ self.P @ F.T
        P[0, 0] += self.gyro_noise**2 * dt
        P[1, 1] += self.bias_walk**2 * dt
        P[2, 2] += self.scale_walk**2 * dt
        self.P = P

    def _update_window(self) -> bool:
        T = self._window_time
        gyro, tracks = self._window_gyro / T, self._window_tracks / T
        _, bias, scale = self.x.tolist()
        gyro_scale = 1.0 + scale
        H = np.array([0.0, 1.0, tracks])
        variance = (
            gyro_scale**2 * (self.encoder_resolution**2 / 3.0 + self._window_slip) / T**2
            + self.gyro_noise**2 / T
        )
        self._clear_window()
        PH = self.P @ H
        s = float(H @ PH) + variance
        innovation = gyro - bias - gyro_scale * tracks
        if innovation * innovation > self.gate**2 * s:
            self.refused += 1
            return False
        self._apply(H, PH, s, variance, innovation)
        return True

    def correct_heading(self, measured: float, variance: float) -> None:
        H = np.array([1.0, 0.0, 0.0])
        PH = self.P @ H
        s = float(PH[0]) + variance
        self._apply(H, PH, s, variance, wrap_angle(measured - float(self.x[0])))

    def _apply(
        self,
        H: npt.NDArray[np.float64],
        PH: npt.NDArray[np.float64],
        s: float,
        variance: float,
        innovation: float,
    ) -> None:
        K = PH / s
        self.x = self.x + K * innovation
        self.x[0] = wrap_angle(float(self.x[0]))
        A = np.eye(3) - np.outer(K, H)
        P = A @ self.P @ A.T + variance * np.outer(K, K)
        self.P = 0.5 * (P + P.T)


#: the compiled steps and numpy's sum their products in other orders (numpy's may fuse them)
_ROUNDING = {"rtol": 1e-9, "atol": 1e-12}


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-math.pi, math.pi))
def test_the_filters_steps_match_their_plain_form(seed: int, heading: float) -> None:
    rng = np.random.default_rng(seed)
    window = float(rng.choice([0.0, 0.06, 0.2]))
    fast, plain = HeadingKalmanFilter(heading, window=window), _PlainFilter(heading, window=window)
    for _ in range(60):
        rate, dt = float(rng.normal(0.0, 1.0)), float(rng.uniform(0.002, 0.1))
        fast.predict(rate, dt)
        plain.predict(rate, dt)
        if rng.random() < 0.8:
            encoder = rate * float(rng.normal(1.0, 0.05))
            standing = bool(rng.random() < 0.2)
            assert fast.update_encoder_rate(encoder, dt, standing=standing) == (
                plain.update_encoder_rate(encoder, dt, standing=standing)
            )
        if rng.random() < 0.1:
            measured, variance = float(rng.uniform(-4.0, 4.0)), float(rng.uniform(1e-6, 0.1))
            fast.correct_heading(measured, variance)
            plain.correct_heading(measured, variance)
        # a heading near ±π may wrap on one side and not the other
        assert abs(wrap_angle(fast.heading - plain.heading)) < 1e-9
        np.testing.assert_allclose(fast.x[1:], plain.x[1:], **_ROUNDING)
        np.testing.assert_allclose(fast.P, plain.P, **_ROUNDING)
        assert fast.rate == pytest.approx(plain.rate, rel=1e-9, abs=1e-12)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(-1e3, 1e3), min_size=6, max_size=6),
    st.floats(-3.0, 3.0),
    st.floats(-3.0, 3.0),
    st.floats(-0.5, 0.5),
    st.floats(0.01, 0.5),
)
def test_a_window_update_matches_its_plain_form_for_any_covariance(
    entries: list[float], gyro: float, tracks: float, scale: float, window: float
) -> None:
    """A covariance L·Lᵀ of any lower-triangular L: the compiled products within rounding of
    numpy's (relative to the size of the covariance's entries)."""
    lower = np.zeros((3, 3))
    lower[np.tril_indices(3)] = entries
    covariance = lower @ lower.T
    fast, plain = HeadingKalmanFilter(0.3), _PlainFilter(0.3)
    for kf in (fast, plain):
        kf.P = covariance.copy()
        kf.x = np.array([0.3, 0.01, scale])
        kf._window_gyro, kf._window_tracks = gyro * window, tracks * window
        kf._window_slip, kf._window_time = 1e-6, window
    before = fast.P.copy()
    accepted = fast._update_window()
    assert accepted == plain._update_window()
    size = 1.0 + float(np.abs(covariance).max())
    np.testing.assert_allclose(fast.P, plain.P, rtol=1e-9, atol=1e-9 * size)
    np.testing.assert_allclose(fast.x[1:], plain.x[1:], rtol=1e-9, atol=1e-9 * size)
    assert abs(wrap_angle(fast.heading - plain.heading)) < 1e-9 * size
    assert fast.refused == plain.refused
    assert accepted or np.array_equal(fast.P, before)
