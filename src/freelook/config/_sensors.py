"""The sensor sections of a robot description: the pan-tilt unit and its camera, further
cameras, the laser, the sonar rings and the gyro (units as in :mod:`._models`)."""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field, field_validator, model_validator

from freelook.config._strict import Strict

__all__ = [
    "LASER_PINS",
    "MAX_CAMERA_STREAM",
    "PAN_TILT_MOUNT",
    "CameraConfig",
    "GyroConfig",
    "LaserConfig",
    "LaserMountConfig",
    "PanTiltConfig",
    "SonarConfig",
    "StreamCameraConfig",
    "frame_limit",
]


class PanTiltConfig(Strict):
    """Camera pan(-tilt) unit mounted at (L1 forward, L2 left) of z."""

    mount_forward: float = Field(
        ge=-5.0, le=5.0, description="L1, m; must be non-zero for Free Look Control"
    )
    mount_left: float = Field(default=0.0, ge=-5.0, le=5.0, description="L2, m")
    mount_height: float = Field(gt=0, le=5.0, description="m")
    has_pan: bool = True
    has_tilt: bool = True
    max_pan_rate_deg: float = Field(gt=0, le=720.0, description="deg/s")
    max_tilt_rate_deg: float = Field(default=60.0, gt=0, le=720.0, description="deg/s")
    pan_limits_deg: tuple[float, float] | None = Field(
        default=None, description="mechanical pan limits; omit for an unlimited slip-ring pan"
    )
    tilt_limits_deg: tuple[float, float] = (-30.0, 30.0)

    @property
    def max_pan_rate(self) -> float:
        return math.radians(self.max_pan_rate_deg)

    @model_validator(mode="after")
    def _limits_ordered(self) -> PanTiltConfig:
        for name, lim in (
            ("pan_limits_deg", self.pan_limits_deg),
            ("tilt_limits_deg", self.tilt_limits_deg),
        ):
            if lim is not None and not lim[0] < lim[1]:
                raise ValueError(f"{name} must be [lower, upper] with lower < upper, got {lim}")
        return self


class CameraConfig(Strict):
    """Image sensor on the pan-tilt unit."""

    width: int = Field(default=640, gt=0, le=4096)
    height: int = Field(default=480, gt=0, le=4096)
    fov_deg: float = Field(default=60.0, gt=1, lt=179)
    rate_hz: float = Field(default=30.0, gt=0, le=120.0)
    stereo_baseline: float | None = Field(default=None, gt=0, le=1.0, description="m")
    jpeg_quality: int = Field(default=80, ge=10, le=100)

    @property
    def frame_limit(self) -> tuple[int, int]:
        """The largest (width, height) a frame of this camera may have: a driver set to a
        larger mode than described still streams, a frame claiming more is refused before it
        is decoded (a hostile or broken camera cannot make the robot allocate gigabytes)."""
        return frame_limit(self.width, self.height)


#: a camera's frames may be this many times its described width and height, and no more
FRAME_SLACK = 2
#: no side of a frame beyond this, whatever the description (VP9's own limit is 16384)
MAX_FRAME_SIDE = 8192


def frame_limit(width: int, height: int) -> tuple[int, int]:
    """The largest (width, height) accepted from a camera described as ``width`` × ``height``."""
    return min(FRAME_SLACK * width, MAX_FRAME_SIDE), min(FRAME_SLACK * height, MAX_FRAME_SIDE)


#: camera streams a robot may send: 0 is the driving camera, 1…7 the ``[[cameras]]``
MAX_CAMERA_STREAM = 7
#: the mount of a camera that turns with the pan-tilt unit
PAN_TILT_MOUNT = "pan_tilt"


class StreamCameraConfig(Strict):
    """A further camera, sent as its own stream: on the pan-tilt unit or fixed to a link of the
    arm's URDF (``mount``), at ``offset`` (m) and ``rpy_deg`` (roll, pitch, yaw) in that frame,
    looking along the frame's x axis. With ``stereo_baseline`` it is a stereo pair whose eyes
    sit ``stereo_baseline / 2`` to each side of that point; its frames carry both eyes side by
    side (``width`` is one eye's)."""

    name: str = Field(pattern=r"^[a-z][a-z0-9_]{0,31}$", description="names topics and panes")
    stream: int = Field(ge=1, le=MAX_CAMERA_STREAM, description="0 is the driving camera")
    mount: str = Field(min_length=1, description='"pan_tilt" or a link of the arm\'s URDF')
    offset: tuple[float, float, float] = (0.0, 0.0, 0.0)
    rpy_deg: tuple[float, float, float] = (0.0, 0.0, 0.0)
    width: int = Field(default=320, gt=0, le=2048)
    height: int = Field(default=240, gt=0, le=2048)
    fov_deg: float = Field(default=60.0, gt=1, lt=179)
    rate_hz: float = Field(default=10.0, gt=0, le=60)
    jpeg_quality: int = Field(default=75, ge=10, le=100)
    stereo_baseline: float | None = Field(default=None, gt=0, le=1.0, description="m")
    kind: Literal["visible", "thermal"] = "visible"

    @property
    def stereo(self) -> bool:
        return self.stereo_baseline is not None

    @property
    def frame_width(self) -> int:
        """Width of a sent frame: both eyes of a stereo pair side by side."""
        return 2 * self.width if self.stereo else self.width


#: the fields of a ``[laser]`` that pin a ROS scan's layout when the description gives them
LASER_PINS = ("beams", "fov_deg")
#: a ROS topic name, relative to the robot's namespace (as ``[ros2.topics]`` takes them)
_TOPIC = r"^~?/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$"
_FRAME = r"^$|^[A-Za-z_][A-Za-z0-9_./-]{0,127}$"


class LaserMountConfig(Strict):
    """A further laser of a ROS 2 robot (``[[laser.extra]]``): its scan topic and its mount.
    Its scans join the ``[laser]``'s into the robot's one scan, each beam from its own origin
    along its own bearing; the simulator draws the ``[laser]`` alone. ``beams`` and
    ``fov_deg`` pin its layout (omitted: any layout its scans come in)."""

    topic: str = Field(pattern=_TOPIC, description="relative to the robot's namespace")
    mount_forward: float = Field(default=0.0, ge=-5.0, le=5.0, description="m")
    mount_left: float = Field(default=0.0, ge=-5.0, le=5.0, description="m")
    yaw_deg: float = Field(default=0.0, ge=-360.0, le=360.0, description="deg, ccw")
    upside_down: bool = False
    #: the ``frame_id`` its scans must carry ("": any)
    frame: str = Field(default="", pattern=_FRAME)
    beams: int | None = Field(default=None, ge=2, le=8192)
    fov_deg: float | None = Field(default=None, gt=0, le=360)

    @property
    def yaw(self) -> float:
        return math.radians(self.yaw_deg)

    @property
    def pinned(self) -> tuple[str, ...]:
        return tuple(name for name in LASER_PINS if getattr(self, name) is not None)


class LaserConfig(Strict):
    """Planar laser scanner: ``beams`` evenly over ``fov_deg`` (first beam to last), centred on
    the mount's heading ``yaw_deg`` (0: ahead; counter-clockwise), at (``mount_forward``,
    ``mount_left``). ``upside_down``: mounted on its head, so its scans' angles turn clockwise
    (a scan's angle a is the bearing ``yaw − a`` on the robot).

    A ROS 2 robot's scans carry their own layout and are taken as they come; ``pinned`` names
    what they must match (``beams``, ``fov_deg``): by default those the description gives,
    so a file without them takes any layout (and the simulator draws the defaults)."""

    mount_forward: float = Field(default=0.0, ge=-5.0, le=5.0, description="m")
    mount_left: float = Field(default=0.0, ge=-5.0, le=5.0, description="m")
    yaw_deg: float = Field(default=0.0, ge=-360.0, le=360.0, description="deg, ccw")
    upside_down: bool = False
    beams: int = Field(default=181, ge=2, le=8192)
    fov_deg: float = Field(default=180.0, gt=0, le=360)
    rate_hz: float = Field(default=75.0, gt=0, le=200.0)
    range_max: float = Field(default=30.0, gt=0, le=300.0, description="m")
    range_min: float = Field(default=0.02, ge=0, le=10.0, description="m")
    noise_std: float = Field(default=0.01, ge=0, le=1.0, description="m")
    #: what a ROS scan's layout must match (a mismatch stops the start, naming the field);
    #: default: those of ``beams`` and ``fov_deg`` the description gives
    pinned: tuple[Literal["beams", "fov_deg"], ...] = Field(default=(), max_length=2)
    #: a ROS 2 robot's further lasers, merged into the scan (front and rear lasers)
    extra: tuple[LaserMountConfig, ...] = Field(default=(), max_length=7)

    @model_validator(mode="before")
    @classmethod
    def _pins_given(cls, data: object) -> object:
        """``pinned`` defaults to the geometry the description gives (a dump keeps it)."""
        if isinstance(data, dict) and "pinned" not in data:
            return {**data, "pinned": tuple(name for name in LASER_PINS if name in data)}
        return data

    @property
    def yaw(self) -> float:
        return math.radians(self.yaw_deg)

    @model_validator(mode="after")
    def _ranges_ordered(self) -> LaserConfig:
        if not self.range_min < self.range_max:
            raise ValueError(
                f"range_min must be below range_max (got {self.range_min}, {self.range_max})"
            )
        topics = [extra.topic for extra in self.extra]
        if len(set(topics)) != len(topics):
            raise ValueError(f"[[laser.extra]] topics must differ (got {topics})")
        return self


class SonarConfig(Strict):
    """Sonar rings: bearings of each transducer, degrees, 0 = forward, counter-clockwise."""

    front_deg: tuple[float, ...] = Field(
        default=(90.0, 50.0, 30.0, 10.0, -10.0, -30.0, -50.0, -90.0), max_length=32
    )
    rear_deg: tuple[float, ...] = Field(
        default=(-90.0, -130.0, -150.0, -170.0, 170.0, 150.0, 130.0, 90.0), max_length=32
    )
    ring_radius: float = Field(default=0.2, gt=0, le=2.0, description="m")
    cone_deg: float = Field(default=15.0, gt=0, lt=90)
    range_max: float = Field(default=5.0, gt=0, le=20.0, description="m")
    noise_std: float = Field(default=0.02, ge=0, le=1.0, description="m")
    rate_hz: float = Field(default=25.0, gt=0, le=200.0)

    @field_validator("front_deg", "rear_deg")
    @classmethod
    def _bearings_on_the_circle(cls, bearings: tuple[float, ...]) -> tuple[float, ...]:
        if any(not -360.0 <= b <= 360.0 for b in bearings):
            raise ValueError(f"bearings in degrees within ±360 (got {bearings})")
        return bearings


class GyroConfig(Strict):
    """Rate gyro; defaults are a typical MEMS part."""

    rate_hz: float = Field(default=100.0, gt=0, le=2000.0)
    turn_on_bias_deg_s: float = Field(
        default=0.5, ge=0, le=100.0, description="max |bias| at power-on"
    )
    bias_instability_deg_h: float = Field(default=10.0, ge=0, le=10_000.0)
    angle_random_walk_deg_sqrt_h: float = Field(default=0.3, ge=0, le=100.0)
    scale_factor_error: float = Field(default=0.003, ge=0, le=0.5)
