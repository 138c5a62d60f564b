"""Pydantic models of a robot description.

Lengths are metres, speeds m/s, times seconds. Angles are degrees in the files (fields end in
``_deg``) because people write and read them; the models expose radians through properties.
Unknown keys are errors: a misspelt field must never be silently ignored, and no number may be
NaN or infinite. Safety-relevant values are bounded: the watchdog fires within 0.05–2 s, every
mode and zone limit is within what the drive can do, zones grow outwards.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

__all__ = [
    "PAN_TILT_MOUNT",
    "ArmConfig",
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
    "Ros2Config",
    "Ros2Topics",
    "SafetyConfig",
    "SafetyZone",
    "SlipConfig",
    "SonarConfig",
    "StreamCameraConfig",
]


#: watchdog timeout bounds, s: long enough for a few lost packets, short enough to stop in time
WATCHDOG_MIN = 0.05
WATCHDOG_MAX = 2.0


class _Strict(BaseModel):
    model_config = ConfigDict(
        extra="forbid", frozen=True, validate_default=True, allow_inf_nan=False
    )


class DriveConfig(_Strict):
    """Drive base: geometry, limits and actuator dynamics."""

    kind: Literal["differential", "tracked", "holonomic"]
    track_width: float = Field(
        ge=0.05, le=5.0, description="true distance between track/wheel centres d, m"
    )
    controller_track_width: float | None = Field(
        default=None,
        ge=0.05,
        le=10.0,
        description="d_eff used by the controllers, m; defaults to track_width",
    )
    wheel_diameter: float = Field(ge=0.01, le=3.0, description="m")
    encoder_counts_per_rev: int = Field(gt=0, le=10_000_000)
    max_wheel_speed: float = Field(gt=0, le=10.0, description="per track/wheel, m/s")
    max_turn_rate_deg: float = Field(gt=0, le=720.0, description="chassis yaw rate limit, deg/s")
    max_acceleration: float = Field(gt=0, le=20.0, description="per track, m/s²")
    max_deceleration: float = Field(gt=0, le=20.0, description="per track when braking, m/s²")
    motor_time_constant: float = Field(ge=0, le=2.0, description="first-order motor lag, s")

    @property
    def d_eff(self) -> float:
        """Track width used by the controllers (Ögren 2013 reduces it to stop oscillation)."""
        return self.controller_track_width if self.controller_track_width else self.track_width

    @property
    def max_turn_rate(self) -> float:
        return math.radians(self.max_turn_rate_deg)


class SlipConfig(_Strict):
    """Track slip from the tracks' instantaneous centres of rotation (Martinez et al.).

    The ICRs of the left and right tracks sit at ±``icr_spread``·d/2 from the centreline, so
    the effective track width is ``icr_spread``·d; ``icr_spread`` > 1 means the chassis turns
    less than the wheel speeds suggest. ``longitudinal`` is the fraction of track speed lost to
    slip in straight driving.
    """

    enabled: bool = True
    icr_spread: float = Field(default=1.0, ge=1.0, le=4.0)
    longitudinal: float = Field(default=0.0, ge=0.0, lt=0.5)
    noise: float = Field(default=0.0, ge=0.0, le=1.0, description="relative std of random slip")


class FootprintConfig(_Strict):
    """Rectangular footprint relative to the reference point z (the drive axle centre)."""

    length: float = Field(ge=0.05, le=20.0, description="m")
    width: float = Field(ge=0.05, le=20.0, description="m")
    center_forward: float = Field(
        default=0.0, ge=-10.0, le=10.0, description="footprint centre ahead of z, m"
    )
    swing_radius: float = Field(ge=0.02, le=15.0, description="m")


class PanTiltConfig(_Strict):
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


class CameraConfig(_Strict):
    """Image sensor on the pan-tilt unit."""

    width: int = Field(default=640, gt=0, le=4096)
    height: int = Field(default=480, gt=0, le=4096)
    fov_deg: float = Field(default=60.0, gt=1, lt=179)
    rate_hz: float = Field(default=30.0, gt=0, le=120.0)
    stereo_baseline: float | None = Field(default=None, gt=0, le=1.0, description="m")
    jpeg_quality: int = Field(default=80, ge=10, le=100)


#: camera streams a robot may send: 0 is the driving camera, 1…7 the ``[[cameras]]``
MAX_CAMERA_STREAM = 7
#: the mount of a camera that turns with the pan-tilt unit
PAN_TILT_MOUNT = "pan_tilt"


class StreamCameraConfig(_Strict):
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


class LaserConfig(_Strict):
    """Planar laser scanner."""

    mount_forward: float = Field(default=0.0, ge=-5.0, le=5.0, description="m")
    mount_left: float = Field(default=0.0, ge=-5.0, le=5.0, description="m")
    beams: int = Field(default=181, ge=2, le=8192)
    fov_deg: float = Field(default=180.0, gt=0, le=360)
    rate_hz: float = Field(default=75.0, gt=0, le=200.0)
    range_max: float = Field(default=30.0, gt=0, le=300.0, description="m")
    range_min: float = Field(default=0.02, ge=0, le=10.0, description="m")
    noise_std: float = Field(default=0.01, ge=0, le=1.0, description="m")

    @model_validator(mode="after")
    def _ranges_ordered(self) -> LaserConfig:
        if not self.range_min < self.range_max:
            raise ValueError(
                f"range_min must be below range_max (got {self.range_min}, {self.range_max})"
            )
        return self


class SonarConfig(_Strict):
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


class GyroConfig(_Strict):
    """Rate gyro; defaults are a typical MEMS part."""

    rate_hz: float = Field(default=100.0, gt=0, le=2000.0)
    turn_on_bias_deg_s: float = Field(
        default=0.5, ge=0, le=100.0, description="max |bias| at power-on"
    )
    bias_instability_deg_h: float = Field(default=10.0, ge=0, le=10_000.0)
    angle_random_walk_deg_sqrt_h: float = Field(default=0.3, ge=0, le=100.0)
    scale_factor_error: float = Field(default=0.003, ge=0, le=0.5)


class SafetyZone(_Strict):
    """One zone of the thesis's zonal safety: boundary from the robot centre and its limits."""

    boundary: float = Field(gt=0, le=20.0, description="outer boundary measured from the centre, m")
    max_speed: float = Field(ge=0, le=10.0, description="m/s")
    max_turn_rate_deg: float = Field(ge=0, le=720.0, description="deg/s")


class SafetyConfig(_Strict):
    """Robot-side safety: zones, approach check and link watchdog."""

    zones: tuple[SafetyZone, ...] = Field(min_length=1, max_length=16)
    approach_horizon: float = Field(
        default=1.5, ge=0.1, le=10.0, description="s of motion the approach check looks ahead"
    )
    approach_margin: float = Field(default=0.05, ge=0, le=0.5, description="clearance kept, m")
    watchdog_timeout: float = Field(
        default=0.5,
        ge=WATCHDOG_MIN,
        le=WATCHDOG_MAX,
        description="s without a valid command before the robot stops",
    )
    zone_rule: Literal["nearest", "direction"] = Field(
        default="nearest",
        description="which readings pick the zone: 'nearest' (the thesis: the nearest reading "
        "all around) or 'direction' (only readings on the side the robot moves towards)",
    )
    obstacle_memory: float = Field(
        default=10.0,
        ge=0.0,
        le=60.0,
        description="s an obstacle seen by a range sensor is remembered where it was seen, "
        "to cover the gaps between sonar cones and behind the laser (0: off)",
    )
    approach_check: bool = Field(
        default=True,
        description="freelook's approach check (stop short of what the motion would reach); "
        "off: the zones only cap the speed, as the thesis's did",
    )
    zones_enabled: bool = Field(
        default=True,
        description="off: no zone caps and no approach check (a control run without obstacle "
        "safety; the watchdog, e-stop and bumpers stay)",
    )

    @model_validator(mode="after")
    def _zones_increasing(self) -> SafetyConfig:
        bounds = [z.boundary for z in self.zones]
        if bounds != sorted(bounds) or len(set(bounds)) != len(bounds):
            raise ValueError(f"zone boundaries must increase strictly, got {bounds}")
        for name in ("max_speed", "max_turn_rate_deg"):
            limits = [getattr(z, name) for z in self.zones]
            if limits != sorted(limits):
                raise ValueError(
                    f"zone {name} must not decrease outwards (an inner zone never allows more "
                    f"than an outer one), got {limits}"
                )
        return self


class ModeLimitsConfig(_Strict):
    """Per-mode velocity limits (the thesis §6.1)."""

    max_speed: float = Field(default=0.5, gt=0, description="m/s, ≤ drive.max_wheel_speed")
    max_turn_rate_deg: float = Field(
        default=50.0, gt=0, description="deg/s, ≤ drive.max_turn_rate_deg"
    )
    linear_max_speed: float = Field(default=0.4, gt=0, description="m/s, ≤ drive.max_wheel_speed")
    keyboard_speed_step: float = Field(default=0.02, gt=0, description="m/s, ≤ max_speed")
    keyboard_turn_step_deg: float = Field(
        default=2.0, gt=0, description="deg/s, ≤ max_turn_rate_deg"
    )


class EstimationConfig(_Strict):
    """Pose estimation settings."""

    mcl_particles: int = Field(default=2000, ge=10, le=200_000)
    mcl_beams: int = Field(default=60, ge=1, le=1000)
    mcl_update_min_d: float = Field(default=0.05, ge=0, le=10.0, description="m")
    mcl_update_min_a_deg: float = Field(default=3.0, ge=0, le=180.0)


class LocalizationConfig(_Strict):
    """How the robot fuses laser localization (MCL) with odometry."""

    initial_std_xy: float = Field(
        default=0.05, gt=0, le=10.0, description="spread of the cloud around a given start, m"
    )
    initial_std_theta: float = Field(
        default=0.02,
        gt=0,
        le=math.pi,
        description="spread of the cloud around a given start heading, rad",
    )
    gain: float = Field(
        default=0.3,
        gt=0,
        le=1,
        description="share of each correction applied at once (odometry is precise over "
        "centimetres, each estimate noisy by millimetres)",
    )
    jump_distance: float = Field(
        default=0.1,
        gt=0,
        le=100.0,
        description="an estimate this far off replaces the pose outright, m",
    )
    jump_angle_deg: float = Field(
        default=10.0,
        gt=0,
        le=180.0,
        description="an estimate this far off replaces the heading, deg",
    )
    search_update_spacing: float = Field(
        default=0.25,
        gt=0,
        le=60.0,
        description="s between updates of a global search standing still",
    )
    map_range: float = Field(
        default=2.5,
        gt=0,
        le=50.0,
        description="m of known map turned into safety points around the robot",
    )


class FreeLookConfig(_Strict):
    """The robot-side Free Look controller, closed around the camera's estimated pose."""

    gain: float = Field(
        default=2.0,
        ge=0,
        le=100.0,
        description="1/s: how fast the camera is pulled back onto its reference path",
    )
    lag_cap: float = Field(
        default=0.1,
        gt=0,
        le=10.0,
        description="m: the reference never runs further ahead of a camera that cannot follow",
    )


class TrackingConfig(_Strict):
    """Gains of the nonlinear state tracking controller (the thesis eq. 3.17)."""

    b: float = Field(default=40.0, gt=0, le=10_000.0, description="k2 = b")
    zeta: float = Field(
        default=0.8, gt=0, le=1, description="damping: k1 = k3 = 2ζ·√(ω_r² + b·v_r²)"
    )


class LinkConfig(_Strict):
    """Link and transmission defaults."""

    control_period: float = Field(default=0.02, ge=0.001, le=1.0, description="s")
    # spacings within what a peer may ask for on the link (freelook.link.SPACING_LIMITS)
    robot_tx_spacing: float = Field(default=0.031, ge=0.005, le=2.0, description="s")
    operator_tx_spacing: float = Field(default=0.047, ge=0.005, le=2.0, description="s")


class ArmConfig(_Strict):
    """A manipulator arm: its URDF and SRDF (relative paths are relative to the robot file) and
    its anti-collision check (TAROS 2018: boxes extrapolated t_ext ahead, two phases)."""

    urdf: Path
    srdf: Path
    slow_time: float = Field(default=0.12, gt=0, le=1.0, description="t_ext of the slow phase, s")
    stop_time: float = Field(default=0.03, gt=0, le=1.0, description="t_ext of the stop phase, s")
    slow_factor: float = Field(
        default=0.25, gt=0, lt=1, description="share of the command kept in the slow phase"
    )
    padding: float = Field(default=0.01, ge=0, le=0.1, description="m added to every box side")
    joint_time_constant: float = Field(
        default=0.05, ge=0, le=1.0, description="first-order lag of the joint drives, s"
    )
    encoders: bool = Field(
        default=True,
        description="whether the arm's joints report their positions; without (the M2P2 of"
        " Kievit-Kylar) the program counts them from the resting pose: each command's velocity"
        " times its time",
    )

    @field_validator("urdf", "srdf", mode="after")
    @classmethod
    def _beside_the_robot_file(cls, value: Path, info: ValidationInfo) -> Path:
        base = (info.context or {}).get("base_dir")
        return value if value.is_absolute() or base is None else Path(base) / value

    @model_validator(mode="after")
    def _stop_within_slow(self) -> ArmConfig:
        if not self.stop_time < self.slow_time:
            raise ValueError(
                f"stop_time must be shorter than slow_time (got {self.stop_time}, {self.slow_time})"
            )
        return self


class JausConfig(_Strict):
    """How freelook drives the robot over JAUS (``--hardware judp://HOST:PORT``): its own
    JAUS id, the authority it asks control with, and what the robot's JAUS side lacks."""

    authority: int = Field(default=5, ge=0, le=255, description="RequestControl authority")
    subsystem: int = Field(default=150, ge=1, le=65534, description="freelook's own JAUS id")
    node: int = Field(default=1, ge=1, le=254)
    component: int = Field(default=1, ge=1, le=254)
    arm_position_sensing: bool = Field(
        default=True, description="false: no joint positions; the arm moves in timed chunks"
    )
    arm_chunk: float = Field(default=0.2, gt=0, le=2.0, description="s per timed arm move")
    arm_joint_speed_deg: float = Field(
        default=15.0, gt=0, le=360.0, description="presumed joint speed at full effort, deg/s"
    )


_TOPIC = r"^~?/?[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*$"
_JOINT = r"^[A-Za-z_][A-Za-z0-9_./-]{0,127}$"


class Ros2Topics(_Strict):
    """The topics of a ROS 2 robot, relative to its namespace (the usual names by default).

    An empty name means the robot has no such topic: the program goes without that device.
    """

    cmd_vel: str = Field(default="cmd_vel", pattern=_TOPIC)
    odom: str = Field(default="odom", pattern=_TOPIC)
    scan: str = Field(default="scan", pattern=r"^$|" + _TOPIC)
    imu: str = Field(default="imu/data", pattern=r"^$|" + _TOPIC)
    #: ``…/compressed`` is a ``sensor_msgs/CompressedImage`` (JPEG), anything else an ``Image``
    camera: str = Field(default="camera/image_raw/compressed", pattern=r"^$|" + _TOPIC)
    joint_states: str = Field(default="joint_states", pattern=r"^$|" + _TOPIC)
    battery: str = Field(default="battery_state", pattern=r"^$|" + _TOPIC)
    pan_tilt_command: str = Field(default="pan_tilt_controller/commands", pattern=_TOPIC)
    #: the arm's joints (an ``[arm]``), as its controller takes them
    arm_command: str = Field(default="arm_controller/commands", pattern=_TOPIC)
    #: the gripper's finger position (half the opening), as its controller takes it
    gripper_command: str = Field(default="gripper_controller/commands", pattern=_TOPIC)


class Ros2Config(_Strict):
    """How the robot speaks ROS 2 (``[ros2]``): topics, message kinds, QoS, joints, timing.

    The sensors' poses on the base are the description's own (``[laser]``, ``[pan_tilt]``):
    /tf is not always there, and the robot program's belief is its description.
    """

    topics: Ros2Topics = Ros2Topics()
    #: ``geometry_msgs/TwistStamped`` on ``cmd_vel`` (Jazzy's diff_drive_controller), else Twist
    cmd_vel_stamped: bool = False
    base_frame: str = Field(default="base_link", pattern=_JOINT)
    #: the laser's ``frame_id`` scans must carry ("": any)
    scan_frame: str = Field(default="", pattern=r"^$|" + _JOINT)
    sensor_qos: Literal["best_effort", "reliable"] = "best_effort"
    pan_joint: str = Field(default="pan_joint", pattern=_JOINT)
    tilt_joint: str = Field(default="tilt_joint", pattern=_JOINT)
    #: ``velocities``: a forward command controller's ``std_msgs/Float64MultiArray`` of joint
    #: rates (pan, then tilt); ``trajectory``: a ``trajectory_msgs/JointTrajectory`` point
    pan_tilt_command: Literal["velocities", "trajectory"] = "velocities"
    #: the arm the same way: joint rates in the URDF's order, or a trajectory point; the
    #: gripper's finger position goes as a one-value ``Float64MultiArray`` or a trajectory point
    arm_command: Literal["velocities", "trajectory"] = "velocities"
    startup_timeout: float = Field(
        default=5.0, gt=0, le=60.0, description="s to wait for odometry and the scan at start"
    )
    quiet_timeout: float = Field(
        default=0.5, gt=0, le=5.0, description="s a required topic may be silent mid-run"
    )


class RobotConfig(_Strict):
    """Everything that describes one robot; a sensor section that is absent means no such sensor."""

    name: str = Field(min_length=1)
    description: str = ""
    drive: DriveConfig
    slip: SlipConfig = SlipConfig()
    footprint: FootprintConfig
    pan_tilt: PanTiltConfig | None = None
    camera: CameraConfig = CameraConfig()
    laser: LaserConfig | None = None
    sonar: SonarConfig | None = None
    gyro: GyroConfig | None = None
    safety: SafetyConfig
    limits: ModeLimitsConfig = ModeLimitsConfig()
    estimation: EstimationConfig = EstimationConfig()
    localization: LocalizationConfig = LocalizationConfig()
    free_look: FreeLookConfig = FreeLookConfig()
    #: trajectory tracking on the robot (its 20 ms cycle with localization noise) and at the
    #: operator station (the thesis's own gains, b = 40, ξ = 0.8)
    robot_tracking: TrackingConfig = TrackingConfig()
    operator_tracking: TrackingConfig = TrackingConfig()
    link: LinkConfig = LinkConfig()
    arm: ArmConfig | None = None
    #: cameras beyond the driving camera, each its own stream (``[[cameras]]``)
    cameras: tuple[StreamCameraConfig, ...] = ()
    jaus: JausConfig = JausConfig()
    #: how a ROS 2 robot of this kind speaks (``--hardware ros2``); the usual topics by default
    ros2: Ros2Config = Ros2Config()

    @model_validator(mode="after")
    def _cameras_mounted(self) -> RobotConfig:
        """Stream ids and names are unique, and every camera has something to sit on (an
        arm link's name is checked against the URDF by ``freelook config check``)."""
        problems = []
        streams: set[int] = set()
        names: set[str] = set()
        for i, cam in enumerate(self.cameras):
            if cam.stream in streams:
                problems.append((f"cameras.{i}.stream", f"stream {cam.stream} is used twice"))
            if cam.name in names:
                problems.append((f"cameras.{i}.name", f"camera {cam.name!r} is named twice"))
            streams.add(cam.stream)
            names.add(cam.name)
            if cam.mount == PAN_TILT_MOUNT and self.pan_tilt is None:
                problems.append((f"cameras.{i}.mount", "pan_tilt, but the robot has no [pan_tilt]"))
            elif cam.mount != PAN_TILT_MOUNT and self.arm is None:
                problems.append(
                    (f"cameras.{i}.mount", f"link {cam.mount!r}, but the robot has no [arm]")
                )
        if problems:
            raise PydanticCustomError(
                "cameras",
                "{count} camera problem(s)",
                {
                    "count": len(problems),
                    "problems": [{"field": f, "message": m} for f, m in problems],
                },
            )
        return self

    @model_validator(mode="after")
    def _within_the_drive(self) -> RobotConfig:
        """Every speed and turn rate a mode or a zone allows is one the drive can do, and the
        watchdog outlasts a control period. All problems are reported at once, each with its
        field (see :func:`freelook.config.format_validation_error`)."""
        drive, limits = self.drive, self.limits
        speed = ("drive.max_wheel_speed", drive.max_wheel_speed, "m/s")
        turn = ("drive.max_turn_rate_deg", drive.max_turn_rate_deg, "deg/s")
        at_most = [
            ("limits.max_speed", limits.max_speed, speed),
            ("limits.linear_max_speed", limits.linear_max_speed, speed),
            ("limits.max_turn_rate_deg", limits.max_turn_rate_deg, turn),
            (
                "limits.keyboard_speed_step",
                limits.keyboard_speed_step,
                ("limits.max_speed", limits.max_speed, "m/s"),
            ),
            (
                "limits.keyboard_turn_step_deg",
                limits.keyboard_turn_step_deg,
                ("limits.max_turn_rate_deg", limits.max_turn_rate_deg, "deg/s"),
            ),
        ]
        for i, zone in enumerate(self.safety.zones):
            at_most.append((f"safety.zones.{i}.max_speed", zone.max_speed, speed))
            at_most.append((f"safety.zones.{i}.max_turn_rate_deg", zone.max_turn_rate_deg, turn))
        problems = [
            {"field": field, "message": f"at most {name} = {limit:g} {unit} (got {value!r})"}
            for field, value, (name, limit, unit) in at_most
            if value > limit
        ]
        period = self.link.control_period
        if self.safety.watchdog_timeout <= period:
            problems.append(
                {
                    "field": "safety.watchdog_timeout",
                    "message": f"longer than link.control_period = {period:g} s "
                    f"(got {self.safety.watchdog_timeout!r})",
                }
            )
        if problems:
            raise PydanticCustomError(
                "beyond_limits",
                "{count} value(s) beyond what the drive or the link allows",
                {"count": len(problems), "problems": problems},
            )
        return self
