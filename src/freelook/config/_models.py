"""Pydantic models of a robot description.

Lengths are metres, speeds m/s, times seconds. Angles are degrees in the files (fields end in
``_deg``) because people write and read them; the models expose radians through properties.
Unknown keys are errors: a misspelt field must never be silently ignored, and no number may be
NaN or infinite. Safety-relevant values are bounded: the watchdog fires within 0.05–2 s, every
mode and zone limit is within what the drive can do, zones grow outwards.

The sensors' sections are in :mod:`._sensors`, the link's, JAUS's and ROS 2's in
:mod:`._interfaces`; this module holds the drive, the body, safety, the controllers, the arm and
the description that gathers them all.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Literal

from pydantic import Field, ValidationInfo, field_validator, model_validator
from pydantic_core import PydanticCustomError

from freelook.config._delay_speed import DelaySpeedConfig
from freelook.config._goal import GoalConfig
from freelook.config._interfaces import JausConfig, LinkConfig, Ros2Config
from freelook.config._sensors import (
    PAN_TILT_MOUNT,
    CameraConfig,
    GyroConfig,
    LaserConfig,
    PanTiltConfig,
    SonarConfig,
    StreamCameraConfig,
)
from freelook.config._strict import Strict

__all__ = [
    "ArmConfig",
    "DelaySpeedConfig",
    "DriveConfig",
    "DriveKind",
    "EstimationConfig",
    "FootprintConfig",
    "FreeLookConfig",
    "GoalConfig",
    "LocalizationConfig",
    "ModeLimitsConfig",
    "RobotConfig",
    "SafetyConfig",
    "SafetyZone",
    "SlipConfig",
    "TrackingConfig",
]


#: watchdog timeout bounds, s: long enough for a few lost packets, short enough to stop in time
WATCHDOG_MIN = 0.05
WATCHDOG_MAX = 2.0

#: how a base moves: wheels on two sides turned by their speed difference ("differential",
#: "tracked" and "skid_steer": four or more wheels that skid sideways to turn, as a Husky's),
#: or a twist in any direction ("holonomic")
DriveKind = Literal["differential", "tracked", "skid_steer", "holonomic"]

#: a skid-steer's sideways skid per radian it turns, as a share of its footprint's length: the
#: localization's default ``mcl_lateral_noise`` for ``kind = "skid_steer"`` (a point turn
#: swings the axle round an ICR some way along the wheelbase): 0.25 gives a Husky's 0.99 m
#: body 0.25 m per radian, with which a Husky in a physics engine ended a run of point turns
#: 0.19-0.24 m off its truth against 0.42 m with none
SKID_PER_LENGTH = 0.25


class DriveConfig(Strict):
    """Drive base: geometry, limits and actuator dynamics."""

    kind: DriveKind
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


class SlipConfig(Strict):
    """Track slip from the tracks' instantaneous centres of rotation (Martinez et al.).

    The ICRs of the left and right tracks sit at ±``icr_spread``·d/2 from the centreline, so
    the effective track width is ``icr_spread``·d; ``icr_spread`` > 1 means the chassis turns
    less than the wheel speeds suggest. ``longitudinal`` is the fraction of track speed lost to
    slip in straight driving.

    The simulator's body also skids sideways in a turn when ``icr_forward`` (the ICR's place
    ahead of the axle: a point turn swings the axle centre round it, v_y = −x_ICR·ω) or
    ``lateral`` (outwards, m/s per m/s·rad/s) is set; both are 0 by default (no skid) and a
    robot with an error model is simulated by that model's skid instead.
    """

    enabled: bool = True
    icr_spread: float = Field(default=1.0, ge=1.0, le=4.0)
    longitudinal: float = Field(default=0.0, ge=0.0, lt=0.5)
    noise: float = Field(default=0.0, ge=0.0, le=1.0, description="relative std of random slip")
    icr_forward: float = Field(
        default=0.0, ge=-0.5, le=0.5, description="m the turns' ICR lies ahead of the axle"
    )
    lateral: float = Field(
        default=0.0, ge=0.0, le=1.0, description="outward skid, m/s per m/s·rad/s of a turn"
    )


class FootprintConfig(Strict):
    """Rectangular footprint relative to the reference point z (the drive axle centre)."""

    length: float = Field(ge=0.05, le=20.0, description="m")
    width: float = Field(ge=0.05, le=20.0, description="m")
    center_forward: float = Field(
        default=0.0, ge=-10.0, le=10.0, description="footprint centre ahead of z, m"
    )
    swing_radius: float = Field(ge=0.02, le=15.0, description="m")


class SafetyZone(Strict):
    """One zone of the thesis's zonal safety: boundary from the robot centre and its limits."""

    boundary: float = Field(gt=0, le=20.0, description="outer boundary measured from the centre, m")
    max_speed: float = Field(ge=0, le=10.0, description="m/s")
    max_turn_rate_deg: float = Field(ge=0, le=720.0, description="deg/s")


class SafetyConfig(Strict):
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
    watchdog_stop: Literal["ramp", "zero"] = Field(
        default="ramp",
        description="how the watchdog stops: 'ramp' brakes the last command at "
        "drive.max_deceleration (a base that executes each command at once); 'zero' commands "
        "zero at once, for a base whose own controller brakes at that limit (a ROS "
        "diff_drive_controller with acceleration limits), so its zero is not braked twice",
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
    rules: tuple[str, ...] = Field(
        default=("hardware", "estop", "watchdog", "bumper", "zone", "approach"),
        min_length=3,
        max_length=32,
        description="the safety rules, in the order they judge each command (each a rule "
        "registered by that name; hardware, estop and watchdog cannot be left out, zone and "
        "approach follow zones_enabled and approach_check; 'delay_speed' adds the speed "
        "cap that fits the link's round trip, off unless named)",
    )
    delay_speed: DelaySpeedConfig = Field(
        default_factory=DelaySpeedConfig,
        description="the delay rule's settings (it acts only when [safety] rules names it)",
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


class ModeLimitsConfig(Strict):
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


class EstimationConfig(Strict):
    """Pose estimation settings."""

    mcl_particles: int = Field(default=2000, ge=10, le=200_000)
    mcl_beams: int = Field(default=60, ge=1, le=1000)
    mcl_update_min_d: float = Field(default=0.05, ge=0, le=10.0, description="m")
    mcl_update_min_a_deg: float = Field(default=3.0, ge=0, le=180.0)
    mcl_lateral_noise: float | None = Field(
        default=None,
        ge=0,
        le=1.0,
        description="std of the body's sideways skid per radian it turns, m (tracks that skid "
        "sideways in a turn; 0: the odometry model's own noise only); unset: "
        "SKID_PER_LENGTH (0.25) of the footprint's length for a skid_steer drive, else 0",
    )
    learn_track_width: bool = Field(
        default=True,
        description="learn the effective track width of a base's own odometry from the gyro "
        "while it turns, and turn by it while the gyro is quiet (a base that reports its own "
        "odometry, with a gyro)",
    )


class LocalizationConfig(Strict):
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


class FreeLookConfig(Strict):
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


class TrackingConfig(Strict):
    """Gains of the nonlinear state tracking controller (the thesis eq. 3.17)."""

    b: float = Field(default=40.0, gt=0, le=10_000.0, description="k2 = b")
    zeta: float = Field(
        default=0.8, gt=0, le=1, description="damping: k1 = k3 = 2ζ·√(ω_r² + b·v_r²)"
    )


class ArmConfig(Strict):
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


class RobotConfig(Strict):
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
    #: click-to-go: the robot drives to a clicked goal on its own
    goal: GoalConfig = GoalConfig()
    arm: ArmConfig | None = None
    #: cameras beyond the driving camera, each its own stream (``[[cameras]]``)
    cameras: tuple[StreamCameraConfig, ...] = ()
    jaus: JausConfig = JausConfig()
    #: how a ROS 2 robot of this kind speaks (``--hardware ros2``); the usual topics by default
    ros2: Ros2Config = Ros2Config()

    @property
    def lateral_skid_noise(self) -> float:
        """The localization's sideways skid per radian turned, m: ``mcl_lateral_noise`` when
        the description gives it, else a skid-steer's default (:data:`SKID_PER_LENGTH` of its
        length), else none."""
        given = self.estimation.mcl_lateral_noise
        if given is not None:
            return given
        if self.drive.kind == "skid_steer":
            return SKID_PER_LENGTH * self.footprint.length
        return 0.0

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
