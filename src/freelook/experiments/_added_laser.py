"""The laser freelook adds to a robot whose paper drove it without one, for the rows named
"freelook extra with an added laser".

Ögren 2013's FOI UGV had a rate gyro and the motor encoders feeding its Kalman filter (Fig. 8)
and no laser: its description (``config/robots/foi-ugv.toml``) has none, and every paper row
and every plain "freelook extra" row runs with the sensors the paper's robot had. The laser
below is freelook's addition, named as such wherever a row uses it.
"""

from __future__ import annotations

from freelook.config import LaserConfig, RobotConfig

__all__ = ["ADDED_LASERS", "with_added_laser"]

#: robot -> (the laser freelook adds, the localization's sideways skid per radian turned, m)
ADDED_LASERS: dict[str, tuple[LaserConfig, float]] = {
    # a SICK LMS-class scanner (181 beams over 180°, 75 Hz, 30 m: LaserConfig's defaults) on
    # the hull's front, 40 cm ahead of the axle; the tracks skid sideways in a turn (Ögren
    # 2013 refs 17, 18), which the odometry's rotate-translate-rotate noise cannot express:
    # 15 cm per radian of sideways blur of the particles; without it the laser lost the robot
    # in the Free Look turns of the square laps (3 of 10 runs on seeds 301-310)
    "foi-ugv": (LaserConfig(mount_forward=0.40, range_max=30.0), 0.15),
}


def with_added_laser(config: RobotConfig) -> RobotConfig:
    """``config`` with a laser: its own where its description has one, else the one freelook
    adds to it (:data:`ADDED_LASERS`); a robot with neither is refused."""
    if config.laser is not None:
        return config
    if config.name not in ADDED_LASERS:
        raise ValueError(f"{config.name}: no laser of its own and none freelook adds")
    laser, lateral = ADDED_LASERS[config.name]
    estimation = config.estimation.model_copy(update={"mcl_lateral_noise": lateral})
    return config.model_copy(update={"laser": laser, "estimation": estimation})
