"""Pose estimation: encoder odometry, gyro + encoder heading filter, Monte Carlo localization."""

from freelook.estimation._heading import HeadingKalmanFilter
from freelook.estimation._mcl import MonteCarloLocalization, PoseEstimate, SearchPhase
from freelook.estimation._odometry import Odometry, OdometryEstimate

__all__ = [
    "HeadingKalmanFilter",
    "MonteCarloLocalization",
    "Odometry",
    "OdometryEstimate",
    "PoseEstimate",
    "SearchPhase",
]
