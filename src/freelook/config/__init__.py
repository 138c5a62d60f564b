"""Validated configuration: robot descriptions loaded from TOML."""

from freelook.config._load import (
    builtin_robots,
    format_validation_error,
    load_robot,
    robot_from_mapping,
)
from freelook.config._models import (
    CameraConfig,
    DriveConfig,
    EstimationConfig,
    FootprintConfig,
    GyroConfig,
    LaserConfig,
    LinkConfig,
    ModeLimitsConfig,
    PanTiltConfig,
    RobotConfig,
    SafetyConfig,
    SafetyZone,
    SlipConfig,
    SonarConfig,
)

__all__ = [
    "CameraConfig",
    "DriveConfig",
    "EstimationConfig",
    "FootprintConfig",
    "GyroConfig",
    "LaserConfig",
    "LinkConfig",
    "ModeLimitsConfig",
    "PanTiltConfig",
    "RobotConfig",
    "SafetyConfig",
    "SafetyZone",
    "SlipConfig",
    "SonarConfig",
    "builtin_robots",
    "format_validation_error",
    "load_robot",
    "robot_from_mapping",
]
