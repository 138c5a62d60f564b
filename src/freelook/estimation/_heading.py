"""Heading Kalman filter fusing a rate gyro with the encoders' yaw rate (Ögren 2013 §5.1).

State [θ, b, s]: heading, gyro bias (rad/s) and gyro scale-factor error; the gyro reads
g = (1 + s)·ω + b + noise. Prediction integrates the corrected rate (g − b)/(1 + s); process
noise comes from the gyro's datasheet model: angle random walk on θ, bias instability as a
random walk of b, and a slow random walk of s.

The encoders' yaw rate, with the tracks' effective width (the identified ``icr_spread``·d of
a slipping tracked vehicle) in place of the geometric one, is how fast the tracks turn the
body, give or take random slip; the gyro's reading is predicted from it, g = (1 + s)·u + b,
compared over short windows so the counters' truncation does not count once per sample. The
noise is the truncation, the random slip (relative to the turn rate: tracks slip when they
turn) and the gyro's own noise; a window far outside that (a track spinning on a kerb, a
stall) is refused. Standing still the encoders show no motion and the gyro rate is pure bias
(a zero-velocity update, and the rate reported is zero); driving straight the tracks run
alike and the bias keeps being learnt; turning, the encoders' rotation calibrates the gyro's
scale factor against the identified effective track width. The two scales cannot both be
observed without an absolute reference, so the effective track width is the robot's
calibration, and the gyro carries what the tracks lose to random slip.

An absolute heading (from localization) can correct θ directly.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
import numpy.typing as npt

from freelook.config import GyroConfig, RobotConfig
from freelook.geometry import wrap_angle, wrap_angle_compiled

__all__ = ["HeadingKalmanFilter"]


@numba.njit(cache=True, nogil=True, inline="always")
def _dot3(a0: float, a1: float, a2: float, b0: float, b1: float, b2: float) -> float:
    """a·b of two 3-vectors."""
    return a0 * b0 + a1 * b1 + a2 * b2


@numba.njit(cache=True, nogil=True, inline="always")
def _product(a: npt.NDArray[np.float64], b: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
    """The 3 × 3 product a·b."""
    out = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            out[i, j] = _dot3(a[i, 0], a[i, 1], a[i, 2], b[0, j], b[1, j], b[2, j])
    return out


@numba.njit(cache=True, nogil=True, inline="always")
def _product_transposed(
    a: npt.NDArray[np.float64], b: npt.NDArray[np.float64], out: npt.NDArray[np.float64]
) -> None:
    """``out`` = a·bᵀ (3 × 3)."""
    for i in range(3):
        for j in range(3):
            out[i, j] = _dot3(a[i, 0], a[i, 1], a[i, 2], b[j, 0], b[j, 1], b[j, 2])


@numba.njit(cache=True, nogil=True)
def _predict(
    x: npt.NDArray[np.float64],
    P: npt.NDArray[np.float64],
    gyro_rate: float,
    dt: float,
    noise: tuple[float, float, float],
) -> None:
    """One gyro sample integrated into ``x`` and ``P`` (in place): P ← F P Fᵀ + Q·dt with
    F = [[1, −dt·gain, −rate·dt·gain], [0, 1, 0], [0, 0, 1]]; ``noise``: the random walks of
    heading, bias and scale (per √s)."""
    theta, bias, scale = x[0], x[1], x[2]
    gain = 1.0 / (1.0 + scale)
    rate = (gyro_rate - bias) * gain
    x[0] = wrap_angle_compiled(theta + rate * dt)
    F = np.eye(3)
    F[0, 1] = -dt * gain
    F[0, 2] = -rate * dt * gain
    _product_transposed(_product(F, P), F, P)
    P[0, 0] += noise[0] * noise[0] * dt
    P[1, 1] += noise[1] * noise[1] * dt
    P[2, 2] += noise[2] * noise[2] * dt


@numba.njit(cache=True, nogil=True)
def _kalman_update(
    x: npt.NDArray[np.float64],
    P: npt.NDArray[np.float64],
    h: tuple[float, float, float],
    variance: float,
    innovation: float,
    gate_squared: float,
) -> bool:
    """A Kalman update of ``x`` and ``P`` (in place) by a measurement with row ``h``, its
    ``variance`` and ``innovation``, in Joseph form (keeps P symmetric and positive); False
    (nothing changed) when the innovation lies beyond the gate."""
    PH = np.empty(3)
    for i in range(3):
        PH[i] = _dot3(P[i, 0], P[i, 1], P[i, 2], h[0], h[1], h[2])
    s = _dot3(h[0], h[1], h[2], PH[0], PH[1], PH[2]) + variance
    if innovation * innovation > gate_squared * s:
        return False
    K = np.empty(3)
    for i in range(3):
        K[i] = PH[i] / s
    for i in range(3):
        x[i] = x[i] + K[i] * innovation
    x[0] = wrap_angle_compiled(x[0])
    A = np.empty((3, 3))
    for i in range(3):
        for j in range(3):
            A[i, j] = (1.0 if i == j else 0.0) - K[i] * h[j]
    Q = np.empty((3, 3))
    _product_transposed(_product(A, P), A, Q)
    for i in range(3):
        for j in range(3):
            Q[i, j] = Q[i, j] + variance * (K[i] * K[j])
    for i in range(3):
        for j in range(3):
            P[i, j] = 0.5 * (Q[i, j] + Q[j, i])
    return True


@numba.njit(cache=True, nogil=True)
def _window_update(
    x: npt.NDArray[np.float64],
    P: npt.NDArray[np.float64],
    gyro: float,
    tracks: float,
    variance: float,
    gate_squared: float,
) -> bool:
    """A window's update with H = (0, 1, ``tracks``): the gyro's mean rate ``gyro`` against
    (1 + s)·tracks + b (:func:`_kalman_update`)."""
    innovation = gyro - x[1] - (1.0 + x[2]) * tracks
    return _kalman_update(x, P, (0.0, 1.0, tracks), variance, innovation, gate_squared)


@functools.cache
def _compile_kernels() -> None:
    """Compile (or load from numba's cache) the prediction and the window's update when the
    first filter is built, not in a running robot's first control cycle."""
    _predict(np.zeros(3), np.eye(3), 0.0, 0.01, (0.0, 0.0, 0.0))
    _window_update(np.zeros(3), np.eye(3), 0.0, 0.0, 1.0, 25.0)
    _kalman_update(np.zeros(3), np.eye(3), (1.0, 0.0, 0.0), 1.0, 0.0, math.inf)


class HeadingKalmanFilter:
    """Heading, gyro bias and gyro scale-factor error from a rate gyro and wheel encoders."""

    #: rad: the spread of a start heading taken as the reference itself (nothing checks it)
    GIVEN_HEADING_STD = 1e-3

    def __init__(
        self,
        heading: float = 0.0,
        *,
        heading_std: float = GIVEN_HEADING_STD,  # rad: how well the start heading is known
        gyro_noise: float = math.radians(0.3) / 60.0,  # ARW, rad/√s
        bias_walk: float = math.radians(10.0) / 3600.0 / 60.0,  # rad/s/√s
        initial_bias_std: float = math.radians(0.5),  # rad/s
        initial_scale_std: float = 0.003,
        scale_walk: float = 1e-5,  # 1/√s
        encoder_resolution: float = 1e-4,  # rad of yaw per count of track difference
        slip_noise: float = 0.02,  # relative std of the encoders' yaw rate (random slip)
        track_ratio: float = 1.0,  # effective / geometric track width
        gate: float = 5.0,  # encoder windows beyond this many σ are refused
        window: float = 0.2,  # s of encoder samples compared with the gyro at once
    ) -> None:
        self.x: npt.NDArray[np.float64] = np.array([wrap_angle(heading), 0.0, 0.0])
        self.P: npt.NDArray[np.float64] = np.diag(
            [heading_std**2, initial_bias_std**2, initial_scale_std**2]
        )
        _compile_kernels()
        self.gyro_noise = gyro_noise
        self.bias_walk = bias_walk
        self.scale_walk = scale_walk
        self.encoder_resolution = encoder_resolution
        self.slip_noise = slip_noise
        self.track_ratio = track_ratio
        self.gate = gate
        self.refused = 0  # encoder windows refused by the gate
        self.window = window
        self._last_gyro = 0.0
        self._standing = False  # the tracks did not move over the last sample
        # the gyro sample awaiting its encoder reading, and the window gathered so far
        self._pending: tuple[float, float] | None = None
        self._window_gyro = self._window_tracks = self._window_slip = self._window_time = 0.0

    @classmethod
    def for_robot(
        cls, config: RobotConfig, heading: float = 0.0, heading_std: float = GIVEN_HEADING_STD
    ) -> HeadingKalmanFilter:
        """A filter with the noise of the robot's gyro datasheet, encoders and slip, starting
        at ``heading`` known to ``heading_std`` (rad).

        The gyro's turn-on bias and scale-factor error are datasheet bounds; the prior std is
        the bound itself, not the tighter bound/√3 of a uniform spread, so a part near its
        bound is not pulled toward nominal. Bias instability B (°/h) is taken as a bias random
        walk that moves the bias by about B in an hour. Random slip is never assumed
        below 0.5 % of the turn rate, however firm the config says the ground is.
        """
        drive, slip = config.drive, config.slip
        gyro = config.gyro if config.gyro is not None else GyroConfig()
        ratio = slip.icr_spread if slip.enabled else 1.0
        metres_per_count = math.pi * drive.wheel_diameter / drive.encoder_counts_per_rev
        return cls(
            heading,
            heading_std=heading_std,
            gyro_noise=math.radians(gyro.angle_random_walk_deg_sqrt_h) / 60.0,
            bias_walk=math.radians(gyro.bias_instability_deg_h) / 3600.0 / 60.0,
            initial_bias_std=max(math.radians(gyro.turn_on_bias_deg_s), 1e-6),
            initial_scale_std=max(gyro.scale_factor_error, 1e-6),
            encoder_resolution=metres_per_count / (ratio * drive.track_width),
            slip_noise=max(slip.noise if slip.enabled else 0.0, 0.005),
            track_ratio=ratio,
        )

    @property
    def heading(self) -> float:
        return float(self.x[0])

    @property
    def bias(self) -> float:
        return float(self.x[1])

    @property
    def scale_error(self) -> float:
        """Estimated gyro scale-factor error s (the gyro reads (1 + s) times the true rate)."""
        return float(self.x[2])

    @property
    def rate(self) -> float:
        """Bias- and scale-corrected yaw rate of the last prediction; zero while the tracks
        stand still (a chassis whose tracks do not move does not turn: the gyro's reading is
        then bias and noise, which would only make a camera that compensates for it jitter)."""
        if self._standing:
            return 0.0
        bias: float
        scale: float
        _, bias, scale = self.x.tolist()
        return (self._last_gyro - bias) / (1.0 + scale)

    def predict(self, gyro_rate: float, dt: float) -> None:
        """Integrate one gyro sample (the mean rate over ``dt`` seconds)."""
        if dt <= 0:
            raise ValueError(f"prediction step must be > 0 s, got {dt}")
        if self._pending is not None:  # the last sample had no encoder reading: start afresh
            self._clear_window()
        self._last_gyro = gyro_rate
        self._standing = False
        self._pending = (gyro_rate, dt)
        noise = (float(self.gyro_noise), float(self.bias_walk), float(self.scale_walk))
        _predict(self.x, self.P, float(gyro_rate), float(dt), noise)

    def update_encoder_rate(
        self, encoder_rate: float, dt: float | None = None, *, standing: bool = False
    ) -> bool:
        """The encoders' yaw rate (geometric track width) over the last gyro sample's interval.

        Samples are gathered into windows of ``window`` seconds and compared as angles, so
        the counters' truncation, which does not accumulate, is paid once per window rather
        than once per sample. ``dt``, the encoders' own interval if known, must match the gyro
        sample's, else the window starts afresh. Returns False if the sample had no gyro
        sample to pair with, or if its window lay beyond ``gate`` σ (slip the model does not
        explain) and was refused. ``standing`` says neither track's counter moved.
        """
        if self._pending is None:
            return False
        gyro, gyro_dt = self._pending
        if dt is not None and abs(dt - gyro_dt) > 0.25 * gyro_dt:
            self._clear_window()
            return False
        self._pending = None
        self._standing = standing
        dt = gyro_dt
        tracks = encoder_rate / self.track_ratio
        self._window_gyro += gyro * dt
        self._window_tracks += tracks * dt
        self._window_slip += (self.slip_noise * tracks * dt) ** 2
        self._window_time += dt
        if self._window_time < self.window - 1e-9:
            return True
        return self._update_window()

    def _update_window(self) -> bool:
        # the tracks move the body, which turns at their rate give or take random slip; the
        # gyro measures the body: so the encoders' rate is the regressor and the gyro's reading
        # is what it predicts (regressing the other way round would put the slip into the
        # regressor and shrink the scale-factor estimate toward zero)
        T = self._window_time
        gyro, tracks = self._window_gyro / T, self._window_tracks / T
        gyro_scale = 1.0 + float(self.x[2])
        variance = (
            gyro_scale**2
            * (
                self.encoder_resolution**2 / 3.0  # both counters' truncation, both ends
                + self._window_slip
            )
            / T**2
            + self.gyro_noise**2 / T
        )
        self._clear_window()
        if not _window_update(self.x, self.P, gyro, tracks, variance, float(self.gate**2)):
            self.refused += 1
            return False
        return True

    def _clear_window(self) -> None:
        self._pending = None
        self._window_gyro = self._window_tracks = self._window_slip = self._window_time = 0.0

    def reset_heading(self, heading: float, std: float) -> None:
        """Set the heading outright, keeping bias and scale (after a relocalization jump).

        A Kalman update with a large innovation would blame part of it on the gyro bias and
        leave the heading spinning; a jump says nothing about the bias.
        """
        self.x[0] = wrap_angle(heading)
        self.P[0, 1:] = 0.0
        self.P[1:, 0] = 0.0
        self.P[0, 0] = std**2

    def correct_heading(self, measured: float, variance: float) -> None:
        """An absolute heading measurement (e.g. from localization)."""
        innovation = wrap_angle(measured - float(self.x[0]))
        _kalman_update(self.x, self.P, (1.0, 0.0, 0.0), float(variance), innovation, math.inf)
