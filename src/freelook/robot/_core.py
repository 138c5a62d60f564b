"""The robot program's core (sans-I/O): commands in, actuator commands and telemetry out.

Every control cycle: estimation (odometry, heading filter) → the mode layer (velocity, wheels,
Tank, Free Look, linear drive, trajectory tracking) → safety → actuators, in that order. The
newest command of each kind received during a cycle wins. Free Look Control runs here, at the
cycle rate, with the measured pan angle and the filtered heading rate, so link latency does not
bend the camera's path; the camera heading is held on the integral of the commanded turn rate.
Localization (MCL) runs on each new laser scan and corrects the heading filter: inline
(``on_scan``), or as a job (``localization_job`` → ``localize`` → ``apply_localization``) that
a runtime may hand to another thread so the control cycle never waits for it.
"""

from __future__ import annotations

import itertools
import math
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from freelook.config import RobotConfig
from freelook.control import (
    LinearDrive,
    SampledPath,
    TrackingController,
    TrajectoryReference,
    limit_velocity,
)
from freelook.errors import ModeError
from freelook.estimation import (
    HeadingKalmanFilter,
    MonteCarloLocalization,
    Odometry,
    PoseEstimate,
)
from freelook.geometry import wrap_angle
from freelook.kinematics import free_look_control, saturation_factor, tank_control
from freelook.link._arbitration import ControlArbiter
from freelook.link._messages import (
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    EStop,
    FreeLookCommand,
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    Message,
    Mode,
    ModeChange,
    PanTiltCommand,
    RejectReason,
    Relocalize,
    SafetyFlags,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.link._stats_report import LinkStatsReport
from freelook.maps import World, cast_rays
from freelook.robot.hal import RobotHardware
from freelook.safety import SafetyEvent, SafetyFilter

__all__ = ["CycleOutput", "LocalizationJob", "LocalizationResult", "RobotCore"]

_ANY_STATION = 0
LOCALIZATION_GAIN = 0.3  # share of each localization correction applied at once
SEARCH_UPDATE_SPACING = 0.25  # s between updates of a global search standing still
JUMP_DISTANCE = 0.1  # m; a localization estimate this far from the pose replaces it outright
JUMP_ANGLE = math.radians(10.0)
_MAP_RANGE = 2.5  # m of known map turned into safety points around the robot

Pose = tuple[float, float, float]


def _relative(a: Pose, b: Pose) -> Pose:
    """Pose ``b`` in the frame of pose ``a``."""
    c, s = math.cos(a[2]), math.sin(a[2])
    dx, dy = b[0] - a[0], b[1] - a[1]
    return (c * dx + s * dy, -s * dx + c * dy, wrap_angle(b[2] - a[2]))


def _compose(a: Pose, d: Pose) -> Pose:
    """Pose ``a`` moved by ``d`` (given in ``a``'s frame)."""
    c, s = math.cos(a[2]), math.sin(a[2])
    return (a[0] + c * d[0] - s * d[1], a[1] + s * d[0] + c * d[1], wrap_angle(a[2] + d[2]))


def _inverse(d: Pose) -> Pose:
    """The motion that undoes ``d``."""
    c, s = math.cos(d[2]), math.sin(d[2])
    return (-c * d[0] - s * d[1], s * d[0] - c * d[1], wrap_angle(-d[2]))


@dataclass(frozen=True, slots=True)
class LocalizationJob:
    """One scan's work for the particle filter, taken on the control path."""

    ranges: npt.NDArray[np.float64]
    increment: Pose  # odometry since the last job: forward, left, turn
    force: bool  # update even without enough motion (a search standing still)
    search: bool  # start a global search first
    pose: Pose  # the robot's pose when the scan was taken
    stamp: float
    scan_stamp: float = math.nan


@dataclass(frozen=True, slots=True)
class LocalizationResult:
    """What the particle filter made of one job."""

    job: LocalizationJob
    estimate: PoseEstimate
    searching: bool


@dataclass(frozen=True, slots=True)
class CycleOutput:
    """What one control cycle decided."""

    v: float
    omega: float
    v_left: float
    v_right: float
    pan_rate: float
    tilt_rate: float
    flags: SafetyFlags
    zone: int = -1
    scale: float = 1.0
    events: tuple[SafetyEvent, ...] = field(default=())


class RobotCore:
    """The robot program for one robot: sans-I/O, driven by ``step(now)`` and ``on_scan(now)``."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        world: World | None = None,
        *,
        start_pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
        use_gyro: bool = True,
        use_localization: bool = True,
        seed: int = 0,
        arbitration_timeout: float = 5.0,
    ) -> None:
        self.config = config
        self.hw = hardware
        self.world = world
        self._map_grid = world.obstacles() if world is not None else None
        self._map_angles = np.linspace(-math.pi, math.pi, 120, endpoint=False)
        self.period = config.link.control_period
        drive = config.drive
        self.safety = SafetyFilter(config.safety, config.footprint, drive)
        self.arbiter = ControlArbiter(arbitration_timeout)
        self.require_control = False  # off: any authenticated station may drive
        self.odometry = Odometry(
            drive.encoder_counts_per_rev, drive.wheel_diameter, drive.track_width, start_pose
        )
        self.heading = HeadingKalmanFilter(start_pose[2]) if (use_gyro and hardware.gyro) else None
        self.mcl: MonteCarloLocalization | None = None
        if (
            use_localization
            and world is not None
            and hardware.laser is not None
            and config.laser is not None
        ):
            self.mcl = MonteCarloLocalization.for_robot(world, config, seed=seed)
            self.mcl.initialize(*start_pose, std_xy=0.05, std_theta=0.02)
        self.pose = start_pose  # localized pose (map frame)
        self.pose_trusted = True  # False while a global search runs
        self._last_search_update = -math.inf
        self._search_requested = False
        self._searching = False
        self._mcl_odom: Pose = start_pose
        self._last_job_scan = -math.inf
        # (stamp, x, y, θ) of recent odometry, to pair each scan with the odometry of its time
        self._odometry_history: deque[tuple[float, float, float, float]] = deque(maxlen=64)
        self._last_encoders: tuple[float, int, int] | None = None
        self._last_gyro_stamp: float | None = None
        self._last_gyro_angle: float | None = None
        self.mode = Mode.IDLE
        self.estop = False
        self._command: Message | None = None
        self._pan_command: PanTiltCommand | None = None
        self._linear: LinearDrive | None = None
        self._trajectory: TrajectoryReference | None = None
        self._trajectory_t0 = 0.0
        self._trajectory_message: TrajectoryStart | None = None
        # tuned for the 20 ms robot-side cycle with localization noise (thesis: b = 40, ξ = 0.8)
        self.tracker = TrackingController(b=100.0, zeta=0.5)
        self.reference: tuple[float, float, float, float, float] | None = None
        self._psi_ref: float | None = None
        self._cam_ref: tuple[float, float] | None = None
        self._last_scale = 1.0
        self._ref_time = 0.0
        self.last_output = CycleOutput(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, SafetyFlags.NONE)
        self.events: list[SafetyEvent] = []
        self.rejections: list[str] = []
        self.dropped_commands = 0
        self.link_stats = LinkStatsReport()
        self.now = 0.0

    # -- commands ----------------------------------------------------------------------------

    def _may_command(self, station: int, now: float) -> bool:
        if not self.require_control:
            return True
        if self.arbiter.admit(station, now):
            return True
        self.dropped_commands += 1
        return False

    def handle(self, message: Message, now: float, station: int = _ANY_STATION) -> list[Message]:
        """Take one message from the link; returns replies (control grants and rejections)."""
        if isinstance(message, ControlRequest):
            decision = self.arbiter.request(message.station, message.authority, now)
            if decision.granted:
                self.require_control = True
                return [ControlGrant(message.station, message.authority)]
            return [ControlReject(message.station, decision.reason or RejectReason.NOT_HOLDER)]
        if isinstance(message, ControlRelease):
            self.arbiter.release(message.station, now)
            return []
        if not self._may_command(station, now):
            return []
        self.safety.command_received(now)
        if isinstance(message, Heartbeat):
            return []
        if isinstance(message, EStop):
            self.estop = message.engaged
            self.safety.set_estop(message.engaged)
            if message.engaged:
                self._last_scale = 0.0  # the camera is held from this moment on
            return []
        if isinstance(message, ModeChange):
            self._set_mode(message.mode, now)
            return []
        if isinstance(message, Relocalize):
            self.global_localization()
            return []
        if isinstance(message, PanTiltCommand):
            self._pan_command = message
            return []
        if isinstance(message, LinearDriveStart):
            self._linear = LinearDrive(message.x_start, message.x_end, message.max_speed)
            self._set_mode(Mode.LINEAR, now)
            return []
        if isinstance(message, TrajectoryStart):
            if self.mode == Mode.TRAJECTORY and message == self._trajectory_message:
                return []  # a repeat of the running upload (sent again against loss)
            self._trajectory_message = message
            try:
                self._trajectory = SampledPath(
                    message.t,
                    message.x,
                    message.y,
                    reverse=message.reverse,
                    periodic=message.periodic,
                )
            except ValueError as err:
                self.rejections.append(f"trajectory refused: {err}")
                return []
            self._trajectory_t0 = now
            self._set_mode(Mode.TRAJECTORY, now)
            return []
        if isinstance(message, LinearDriveStop | TrajectoryStop):
            self._set_mode(Mode.IDLE, now)
            return []
        mode = {
            VelocityCommand: Mode.VELOCITY,
            WheelSpeedCommand: Mode.WHEELS,
            TankCommand: Mode.TANK,
            FreeLookCommand: Mode.FREE_LOOK,
        }.get(type(message))
        if mode is None:
            return []
        if mode == Mode.FREE_LOOK and not self._can_free_look():
            self.rejections.append("Free Look Control refused: the camera cannot pan")
            return []
        if not (mode == Mode.VELOCITY and self.mode == Mode.KEYBOARD):
            self._set_mode(mode, now)
        if self.mode == Mode.FREE_LOOK:
            self._advance_reference(now)  # the previous command held until this one arrived
        self._command = message  # newest wins within a cycle
        return []

    def _can_free_look(self) -> bool:
        pt = self.config.pan_tilt
        return bool(
            self.hw.pan_tilt is not None
            and self.hw.pan_tilt.has_pan
            and pt is not None
            and pt.mount_forward != 0.0
        )

    def _set_mode(self, mode: Mode, now: float) -> None:
        if mode == Mode.FREE_LOOK and not self._can_free_look():
            raise ModeError("Free Look Control needs a pan unit mounted off the axle")
        if mode != self.mode:
            self._psi_ref = None
            self._cam_ref = None
            if mode != Mode.LINEAR:
                self._linear = None
            if mode != Mode.TRAJECTORY:
                self._trajectory = None
                self.reference = None
            self._command = None
        self.mode = mode

    # -- estimation --------------------------------------------------------------------------

    def _estimate(self, now: float) -> float:
        """Update odometry and heading; returns the yaw rate estimate."""
        yaw_rate = self.heading.rate if self.heading is not None else self.odometry.omega
        enc = self.hw.encoders.latest() if self.hw.encoders else None
        gyro = self.hw.gyro.latest() if self.hw.gyro else None
        encoder_rate = None
        if enc is not None and (self._last_encoders is None or enc.stamp > self._last_encoders[0]):
            previous = self._last_encoders
            self._last_encoders = (enc.stamp, enc.left, enc.right)
            if previous is not None:
                dt = enc.stamp - previous[0]
                mpc = self.odometry.metres_per_count
                encoder_rate = (
                    ((enc.right - previous[2]) - (enc.left - previous[1]))
                    * mpc
                    / self.config.drive.track_width
                    / dt
                )
        heading_increment = None
        if (
            self.heading is not None
            and gyro is not None
            and (self._last_gyro_stamp is None or gyro.stamp > self._last_gyro_stamp)
        ):
            dt = gyro.stamp - self._last_gyro_stamp if self._last_gyro_stamp is not None else 0.0
            self._last_gyro_stamp = gyro.stamp
            rate = gyro.rate
            if gyro.angle is not None:
                # the mean rate since the last read, not the newest sample held over the gap
                if self._last_gyro_angle is not None and dt > 0:
                    rate = (gyro.angle - self._last_gyro_angle) / dt
                self._last_gyro_angle = gyro.angle
            before = self.heading.heading
            if dt > 0:
                self.heading.predict(rate, dt)
                if encoder_rate is not None:
                    self.heading.update_encoder_rate(encoder_rate)
            heading_increment = wrap_angle(self.heading.heading - before)
            yaw_rate = self.heading.rate
        elif encoder_rate is not None:
            yaw_rate = encoder_rate
        if enc is not None:
            odometry_before = self.odometry.pose
            self.odometry.update(enc.left, enc.right, enc.stamp, heading_increment)
            self._odometry_history.append((enc.stamp, *self.odometry.pose))
            # carry the localized pose forward by the odometry increment
            self.pose = _compose(self.pose, _relative(odometry_before, self.odometry.pose))
        return yaw_rate

    def on_scan(self, now: float) -> bool:
        """A new laser scan: run localization now; returns whether the filter updated."""
        job = self.localization_job(now)
        if job is None:
            return False
        result = self.localize(job)
        if result is None:
            return False
        self.apply_localization(result)
        return True

    def localization_job(self, now: float) -> LocalizationJob | None:
        """Take the newest scan and the odometry since the last job (on the control path).

        Each job carries the motion since the previous one, so scans skipped while a job runs
        elsewhere lose nothing but their own evidence.
        """
        if self.mcl is None or self.hw.laser is None:
            return None
        scan = self.hw.laser.latest()
        if scan is None:
            return None
        if scan.stamp <= self._last_job_scan:
            return None  # already used
        self._last_job_scan = scan.stamp
        # odometry when the scan was taken (a scan newer than the last control cycle takes
        # that cycle's odometry); the pose then is the pose now moved back by the odometry since
        at_scan = self._odometry_at(scan.stamp)
        since = _relative(at_scan, self.odometry.pose)
        pose_at_scan = _compose(self.pose, _inverse(since))
        increment = _relative(self._mcl_odom, at_scan)
        self._mcl_odom = at_scan
        search = self._search_requested
        self._search_requested = False
        # a search goes on with the robot standing still, a few scans a second
        force = self._searching and now - self._last_search_update >= SEARCH_UPDATE_SPACING
        return LocalizationJob(scan.ranges, increment, force, search, pose_at_scan, now, scan.stamp)

    def _odometry_at(self, stamp: float) -> Pose:
        """Odometry at ``stamp``, interpolated between control cycles (held at the newest)."""
        history = self._odometry_history
        if not history or stamp >= history[-1][0]:
            return self.odometry.pose
        for (t0, x0, y0, th0), (t1, x1, y1, th1) in itertools.pairwise(reversed(history)):
            # newest first: (t0, …) is the later of the two
            if t1 <= stamp:
                share = (stamp - t1) / (t0 - t1) if t0 > t1 else 1.0
                return (
                    x1 + share * (x0 - x1),
                    y1 + share * (y0 - y1),
                    wrap_angle(th1 + share * wrap_angle(th0 - th1)),
                )
        _, x, y, th = history[0]
        return (x, y, th)

    def localize(self, job: LocalizationJob) -> LocalizationResult | None:
        """Run the particle filter on one job; None if it did not update.

        Touches nothing but the filter, so it may run on another thread while control cycles
        go on, one job at a time.
        """
        assert self.mcl is not None
        if job.search:
            self.mcl.global_init()
        self.mcl.predict(*job.increment)
        if not self.mcl.update(job.ranges, force=job.force):
            return None
        return LocalizationResult(job, self.mcl.estimate(), self.mcl.searching)

    def apply_localization(self, result: LocalizationResult) -> None:
        """Fuse a localization result into the pose (and the heading filter).

        The estimate is for the moment of its scan; the motion since then (by odometry) is
        carried onto it, so a result that took a while to compute still corrects the pose of
        now.
        """
        self._last_search_update = result.job.stamp
        self._searching = result.searching or self._search_requested
        estimate = result.estimate
        if self._searching:  # the filter may also start a search itself, on a lasting misfit
            self.pose_trusted = False
            return
        if estimate.std_xy >= 0.3:
            return
        x, y, theta = self.pose
        since = _relative(result.job.pose, self.pose)
        ex, ey, etheta = _compose((estimate.x, estimate.y, estimate.theta), since)
        # odometry is precise over centimetres and each estimate is noisy by millimetres:
        # move part of the way, unless the two disagree badly (then jump)
        jump = (
            math.hypot(ex - x, ey - y) >= JUMP_DISTANCE
            or abs(wrap_angle(etheta - theta)) >= JUMP_ANGLE
        )
        if self.heading is not None:
            std_theta = max(estimate.std_theta, math.radians(0.5))
            if jump:
                self.heading.reset_heading(etheta, std_theta)
            else:
                self.heading.correct_heading(etheta, std_theta**2)
        gain = 1.0 if jump else LOCALIZATION_GAIN
        self.pose_trusted = True
        self.pose = (x + gain * (ex - x), y + gain * (ey - y), etheta)

    def global_localization(self) -> None:
        """Forget the pose and search the whole map (recovery from a wrong start).

        The search starts with the next localization job. Until it settles the pose is not
        trusted: the map stops serving as a safety layer, since a wrong pose would put phantom
        walls around the robot.
        """
        if self.mcl is not None:
            self._search_requested = True
            self._searching = True
            self.pose_trusted = False

    def range_points(self) -> npt.NDArray[np.float64]:
        """Obstacle points (robot frame) from every range sensor.

        A sonar echo may come from anywhere across its cone, so each reading becomes points
        spread over the cone at the measured range: safety must assume the worst bearing.
        """
        clouds = []
        laser = self.hw.laser.latest() if self.hw.laser is not None else None
        if laser is not None:
            clouds.append(laser.points())
        sonar = self.hw.sonar.latest() if self.hw.sonar is not None else None
        if sonar is not None:
            hit = sonar.ranges < sonar.range_max
            half = math.radians(self.config.sonar.cone_deg) / 2 if self.config.sonar else 0.0
            for offset in (-half, -half / 2, 0.0, half / 2, half):
                bearing = sonar.bearings[hit] + offset
                r = sonar.ranges[hit]
                clouds.append(
                    np.column_stack(
                        (
                            sonar.origin_x[hit] + r * np.cos(bearing),
                            sonar.origin_y[hit] + r * np.sin(bearing),
                        )
                    )
                )
        if self._map_grid is not None and self.world is not None and self.pose_trusted:
            clouds.append(self._map_points())
        return np.vstack(clouds) if clouds else np.zeros((0, 2))

    def _map_points(self) -> npt.NDArray[np.float64]:
        """The known map around the estimated pose, as range points (a static costmap layer):
        it covers what the sonar cones miss behind and beside the robot."""
        assert self._map_grid is not None
        assert self.world is not None
        x, y, theta = self.pose
        angles = theta + self._map_angles
        ranges = cast_rays(
            self._map_grid, self.world.origin, self.world.resolution, x, y, angles, _MAP_RANGE
        )
        hit = ranges < _MAP_RANGE
        local = self._map_angles[hit]
        return np.column_stack((ranges[hit] * np.cos(local), ranges[hit] * np.sin(local)))

    # -- the control cycle -------------------------------------------------------------------

    def step(self, now: float) -> CycleOutput:
        """One control cycle."""
        dt = now - self.now if self.now else self.period
        self.now = now
        yaw_rate = self._estimate(now)
        drive = self.config.drive
        d = drive.d_eff
        pt_state = self.hw.pan_tilt.state() if self.hw.pan_tilt else None
        pan = pt_state.pan if pt_state is not None else 0.0
        limits = self.config.limits
        pan_rate = tilt_rate = 0.0
        camera_command: tuple[float, float, float] | None = None
        command = self._command
        v = omega = 0.0
        if self.mode in (Mode.VELOCITY, Mode.KEYBOARD) and isinstance(command, VelocityCommand):
            v, omega = command.v, command.omega
        elif self.mode == Mode.WHEELS and isinstance(command, WheelSpeedCommand):
            v, omega = (command.left + command.right) / 2, (command.right - command.left) / d
        elif self.mode == Mode.TANK and isinstance(command, TankCommand):
            v, omega = command.v, command.omega
            pan_rate, tilt_rate = command.pan_rate, command.tilt_rate
        elif self.mode == Mode.FREE_LOOK and isinstance(command, FreeLookCommand):
            camera_command = (command.v1, command.v2, command.omega)
            tilt_rate = command.tilt_rate
        elif self.mode == Mode.LINEAR and self._linear is not None:
            out = self._linear.update(*self.pose)
            v, omega = out.v, out.omega
        elif self.mode == Mode.TRAJECTORY and self._trajectory is not None:
            t = now - self._trajectory_t0
            if t > self._trajectory.duration:
                self._set_mode(Mode.IDLE, now)
            else:
                ref = self._trajectory.at(t)
                self.reference = (ref.x, ref.y, ref.theta, ref.v, ref.omega)
                v, omega = self.tracker.command(ref, *self.pose)
                v, omega = limit_velocity(
                    v, omega, limits.max_speed, math.radians(limits.max_turn_rate_deg)
                )
        if self._pan_command is not None and camera_command is None:
            pan_rate += self._pan_command.pan_rate
            tilt_rate += self._pan_command.tilt_rate

        if camera_command is not None:
            v_left, v_right, pan_rate, v, omega = self._free_look(camera_command, pan, yaw_rate, dt)
        else:
            self._psi_ref = None
            self._cam_ref = None
            wheels = tank_control(v, omega, d)
            s = saturation_factor(wheels, drive.max_wheel_speed, None, drive.max_turn_rate, d)
            v, omega = v * s, omega * s
        bumpers = self.hw.bumpers.latest() if self.hw.bumpers else None
        decision = self.safety.filter(
            v,
            omega,
            self.range_points(),
            now,
            bool(bumpers and bumpers.front),
            bool(bumpers and bumpers.rear),
            measured=(self.odometry.v, yaw_rate),
        )
        scale = decision.scale
        # e-stop and watchdog hold the camera as well as the chassis
        held = bool(decision.flags & (SafetyFlags.ESTOP | SafetyFlags.WATCHDOG))
        # the share of the camera command carried out: the reference integrates only that, so
        # a camera held still has no commanded motion to catch up when it is released
        self._last_scale = (0.0 if held else scale) if camera_command is not None else 1.0
        if camera_command is not None:
            # the whole camera command scales together: the camera keeps its path, slower
            v_left, v_right = v_left * scale, v_right * scale
            pan_rate *= scale
            v, omega = decision.v, decision.omega
            if decision.flags & (SafetyFlags.WATCHDOG | SafetyFlags.BUMPER):
                stop = tank_control(decision.v, decision.omega, d)
                v_left, v_right = stop.v_left, stop.v_right
        else:
            v, omega = decision.v, decision.omega
            wheels = tank_control(v, omega, d)
            v_left, v_right = wheels.v_left, wheels.v_right
        if held:
            pan_rate = tilt_rate = 0.0
        self.hw.drive.command_wheels(v_left, v_right)
        if self.hw.pan_tilt is not None:
            self.hw.pan_tilt.command_rates(pan_rate, tilt_rate)
        self.events.extend(decision.events)
        del self.events[:-200]
        self.last_output = CycleOutput(
            v,
            omega,
            v_left,
            v_right,
            pan_rate,
            tilt_rate,
            decision.flags,
            decision.zone,
            decision.scale,
            decision.events,
        )
        return self.last_output

    def _free_look(
        self, command: tuple[float, float, float], pan: float, yaw_rate: float, dt: float
    ) -> tuple[float, float, float, float, float]:
        """Free Look Control closed around the camera's estimated pose.

        The commanded camera motion is integrated into a reference camera pose; the feedback
        law (DESIGN §3) then runs on the reference velocity plus a correction toward that pose,
        so motor lag, slip and the controller's d_eff do not bend the camera's path or turn its
        heading. The pan rate uses the measured chassis rate (gyro filter), not the wheel model.
        """
        pt = self.config.pan_tilt
        assert pt is not None
        drive = self.config.drive
        d = drive.d_eff
        L1, L2 = pt.mount_forward, pt.mount_left
        x, y, theta = self.pose
        if self.heading is not None:
            theta = self.heading.heading
        c, s = math.cos(theta), math.sin(theta)
        cam_x, cam_y = x + c * L1 - s * L2, y + s * L1 + c * L2
        psi = theta + pan
        v1, v2, omega_cmd = command
        if self._psi_ref is None or self._cam_ref is None:
            self._psi_ref, self._cam_ref = psi, (cam_x, cam_y)
            self._ref_time = self.now
        self._advance_reference(self.now)
        if v1 == 0.0 and v2 == 0.0:
            # every input released: stop where the camera is now, do not catch up
            self._cam_ref = (cam_x, cam_y)
        assert self._cam_ref is not None
        assert self._psi_ref is not None
        # the feed-forward is the command itself: safety scales this cycle's whole output after
        cr, sr = math.cos(self._psi_ref), math.sin(self._psi_ref)
        ref_vx, ref_vy = cr * v1 - sr * v2, sr * v1 + cr * v2
        rx, ry = self._cam_ref
        # never let the reference run away from a camera that cannot follow (blocked, e-stop)
        ex, ey = rx - cam_x, ry - cam_y
        lag = math.hypot(ex, ey)
        if lag > 0.1:
            rx, ry = cam_x + ex * 0.1 / lag, cam_y + ey * 0.1 / lag
            ex, ey = rx - cam_x, ry - cam_y
            self._cam_ref = (rx, ry)
        gain = 2.0
        wx, wy = ref_vx + gain * ex, ref_vy + gain * ey
        cp, sp = math.cos(psi), math.sin(psi)
        u1, u2 = cp * wx + sp * wy, -sp * wx + cp * wy  # into the camera frame
        turn = omega_cmd + gain * wrap_angle(self._psi_ref - psi)
        wheels = free_look_control(u1, u2, turn, pan, L1, L2, d)
        sat = saturation_factor(
            wheels, drive.max_wheel_speed, pt.max_pan_rate, drive.max_turn_rate, d
        )
        if sat < 1.0:
            wheels = free_look_control(u1 * sat, u2 * sat, turn * sat, pan, L1, L2, d)
            turn *= sat
        chassis_rate = (
            yaw_rate if self.heading is not None else (wheels.v_right - wheels.v_left) / d
        )
        pan_rate = turn - chassis_rate
        pan_rate = max(-pt.max_pan_rate, min(pt.max_pan_rate, pan_rate))
        v = (wheels.v_left + wheels.v_right) / 2
        omega = (wheels.v_right - wheels.v_left) / d
        return wheels.v_left, wheels.v_right, pan_rate, v, omega

    def _advance_reference(self, until: float) -> None:
        """Integrate the held Free Look command into the camera reference up to ``until``.

        Commands are integrated over the time each was in force (arrival to arrival), not in
        whole control cycles, so a commanded 90° turn is 90°.
        """
        command = self._command
        if (
            self._psi_ref is None
            or self._cam_ref is None
            or not isinstance(command, FreeLookCommand)
        ):
            self._ref_time = until
            return
        dt = until - self._ref_time
        self._ref_time = until
        if dt <= 0:
            return
        scale = self._last_scale
        omega = command.omega * scale
        c, s = (
            math.cos(self._psi_ref + 0.5 * omega * dt),
            math.sin(self._psi_ref + 0.5 * omega * dt),
        )
        vx = (c * command.v1 - s * command.v2) * scale
        vy = (s * command.v1 + c * command.v2) * scale
        self._cam_ref = (self._cam_ref[0] + vx * dt, self._cam_ref[1] + vy * dt)
        self._psi_ref = wrap_angle(self._psi_ref + omega * dt)

    # -- telemetry ---------------------------------------------------------------------------

    def telemetry(self, now: float) -> Telemetry:
        laser = self.hw.laser.latest() if self.hw.laser else None
        sonar = self.hw.sonar.latest() if self.hw.sonar else None
        bumpers = self.hw.bumpers.latest() if self.hw.bumpers else None
        pt_state = self.hw.pan_tilt.state() if self.hw.pan_tilt else None
        out = self.last_output
        return Telemetry(
            stamp=now,
            odom=self.odometry.pose,
            pose=self.pose,
            v=self.odometry.v,
            omega=self.heading.rate if self.heading is not None else self.odometry.omega,
            cmd_v=out.v,
            cmd_omega=out.omega,
            pan=pt_state.pan if pt_state else 0.0,
            tilt=pt_state.tilt if pt_state else 0.0,
            laser_angle_min=float(laser.bearings[0]) if laser is not None else 0.0,
            laser_angle_increment=float(laser.bearings[1] - laser.bearings[0])
            if laser is not None
            else 0.0,
            laser_range_max=laser.range_max if laser is not None else 0.0,
            laser=tuple(laser.ranges.tolist()) if laser is not None else (),
            sonar=tuple(sonar.ranges.tolist()) if sonar is not None else (),
            bumper_front=bool(bumpers and bumpers.front),
            bumper_rear=bool(bumpers and bumpers.rear),
            safety_zone=out.zone,
            safety_scale=out.scale,
            safety_flags=out.flags,
            mode=self.mode,
            estop=self.estop,
            localizing=not self.pose_trusted,
            controller=self.arbiter.holder(now) or 0,
            link=self.link_stats,
        )
