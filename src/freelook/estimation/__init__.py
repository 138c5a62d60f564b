"""Pose estimation: encoder odometry, gyro + encoder heading filter, Monte Carlo localization,
and the effective track width of a base's own odometry, learnt from the gyro."""

from freelook.estimation._heading import HeadingKalmanFilter
from freelook.estimation._mcl import MonteCarloLocalization, PoseEstimate, SearchPhase
from freelook.estimation._odometry import Odometry, OdometryEstimate
from freelook.estimation._track_width import TrackWidthLearner

__all__ = [
    "HeadingKalmanFilter",
    "MonteCarloLocalization",
    "Odometry",
    "OdometryEstimate",
    "PoseEstimate",
    "SearchPhase",
    "TrackWidthLearner",
]
