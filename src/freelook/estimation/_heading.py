"""Heading Kalman filter fusing a rate gyro with the encoders' yaw rate (seed 000 §5.1).

State [θ, b]: heading and gyro bias. Prediction integrates the gyro rate minus the bias. The
encoders' yaw rate is a measurement of the true rate whose noise grows with how hard the robot
turns (tracks slip when turning): σ² = σ0² + (α·ω_enc)². Standing or driving straight, the
filter learns the bias; turning, it trusts the gyro. An absolute heading (from localization)
can correct θ directly.
"""

from __future__ import annotations

import math

import numpy as np

from freelook.geometry import wrap_angle

__all__ = ["HeadingKalmanFilter"]


class HeadingKalmanFilter:
    def __init__(
        self,
        heading: float = 0.0,
        gyro_noise: float = math.radians(0.3) / 60.0,  # ARW, rad/√s
        bias_walk: float = math.radians(10.0) / 3600.0 / 60.0,  # rad/s/√s
        initial_bias_std: float = math.radians(0.5),
        encoder_noise: float = math.radians(0.5),  # rad/s when not turning
        slip_factor: float = 0.5,  # extra std per rad/s of encoder yaw rate (slip when turning)
    ) -> None:
        self.x = np.array([heading, 0.0])
        self.P = np.diag([1e-6, initial_bias_std**2])
        self.gyro_noise = gyro_noise
        self.bias_walk = bias_walk
        self.encoder_noise = encoder_noise
        self.slip_factor = slip_factor
        self._last_gyro = 0.0
        self.turn_gate = math.radians(3.0)  # rad/s

    @property
    def heading(self) -> float:
        return float(self.x[0])

    @property
    def bias(self) -> float:
        return float(self.x[1])

    @property
    def rate(self) -> float:
        """Bias-corrected yaw rate of the last prediction."""
        return self._last_gyro - self.bias

    def predict(self, gyro_rate: float, dt: float) -> None:
        self._last_gyro = gyro_rate
        self.x[0] = wrap_angle(self.x[0] + (gyro_rate - self.x[1]) * dt)
        F = np.array([[1.0, -dt], [0.0, 1.0]])
        Q = np.diag([self.gyro_noise**2 * dt, self.bias_walk**2 * dt])
        self.P = F @ self.P @ F.T + Q

    def update_encoder_rate(self, encoder_rate: float) -> None:
        """The encoders' yaw rate over the same interval as the last gyro sample.

        Ignored while the robot turns faster than ``turn_gate``: the tracks slip then, and a
        long turn would otherwise teach the filter the slip as if it were gyro bias.
        """
        if abs(encoder_rate) > self.turn_gate:
            return
        variance = self.encoder_noise**2 + (self.slip_factor * encoder_rate) ** 2
        H = np.array([0.0, -1.0])  # z = gyro − b
        predicted = self._last_gyro - self.x[1]
        s = float(H @ self.P @ H) + variance
        K = self.P @ H / s
        self.x = self.x + K * (encoder_rate - predicted)
        self.x[0] = wrap_angle(self.x[0])
        self.P = (np.eye(2) - np.outer(K, H)) @ self.P

    def reset_heading(self, heading: float, std: float) -> None:
        """Set the heading outright, keeping the bias (after a relocalization jump).

        A Kalman update with a large innovation would blame part of it on the gyro bias and
        leave the heading spinning; a jump says nothing about the bias.
        """
        self.x[0] = wrap_angle(heading)
        self.P[0, 1] = self.P[1, 0] = 0.0
        self.P[0, 0] = std**2

    def correct_heading(self, measured: float, variance: float) -> None:
        """An absolute heading measurement (e.g. from localization)."""
        H = np.array([1.0, 0.0])
        s = float(self.P[0, 0]) + variance
        K = self.P @ H / s
        innovation = wrap_angle(measured - self.x[0])
        self.x = self.x + K * innovation
        self.x[0] = wrap_angle(self.x[0])
        self.P = (np.eye(2) - np.outer(K, H)) @ self.P
