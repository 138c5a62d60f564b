"""The robot program's core (sans-I/O): commands in, actuator commands and telemetry out.

Every control cycle: estimation (:class:`StateEstimator`) → the mode layer (velocity, wheels,
Tank, Free Look, linear drive, trajectory tracking) → safety → actuators, in that order. The
newest command of each kind received during a cycle wins. Commands are dispatched through a
table by message type. Free Look Control runs here (:class:`FreeLookController`), at the cycle
rate, with the measured pan angle and the filtered heading rate, so link latency does not bend
the camera's path. The core knows its hardware through the HAL and its surroundings through the
map it was given (:class:`MapLayer`), never through a simulator.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

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
from freelook.estimation import HeadingKalmanFilter, MonteCarloLocalization, Odometry
from freelook.geometry import Pose
from freelook.kinematics import saturation_factor, tank_control
from freelook.link import (
    ArmVelocityCommand,
    ControlArbiter,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    EStop,
    FreeLookCommand,
    GripperCommand,
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    LinkStatsReport,
    Message,
    ModeChange,
    PanTiltCommand,
    Permissions,
    RejectReason,
    Relocalize,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.maps import World
from freelook.robot._arm import RobotArm
from freelook.robot._autonomy import RobotAutonomy
from freelook.robot._estimator import LocalizationJob, LocalizationResult, StateEstimator
from freelook.robot._free_look import FreeLookController
from freelook.robot._map_layer import MapLayer
from freelook.robot._scan_points import ScanPoints
from freelook.robot.hal import RobotHardware
from freelook.safety import ObstacleMemory, SafetyEvent, SafetyFilter
from freelook.types import Mode, SafetyFlags

__all__ = ["CycleOutput", "RobotCore"]

_ANY_STATION = 0
# (as plain ints: each operation on an enum flag builds an enum member)
_STOPPING = int(
    SafetyFlags.ESTOP | SafetyFlags.WATCHDOG | SafetyFlags.BUMPER | SafetyFlags.HARDWARE
)
# e-stop, watchdog and a lost connection hold the camera as well as the chassis
_HOLDING = int(SafetyFlags.ESTOP | SafetyFlags.WATCHDOG | SafetyFlags.HARDWARE)
# under these a Free Look command's wheels give way to the filter's stopping command
_BRAKING = int(SafetyFlags.WATCHDOG | SafetyFlags.BUMPER | SafetyFlags.HARDWARE)
DEFAULT_AUTHORITY = 10


def _not_permitted(message: Message, permissions: Permissions) -> str | None:
    """Why a station with ``permissions`` may not send ``message`` (None: it may)."""
    if isinstance(message, Heartbeat | ControlRelease):
        return None
    if permissions.observer:
        return f"an observer may not send {type(message).__name__}"
    mode = _DRIVE_MODES.get(type(message))
    if isinstance(message, ModeChange):
        mode = message.mode
    elif isinstance(message, LinearDriveStart):
        mode = Mode.LINEAR
    elif isinstance(message, TrajectoryStart):
        mode = Mode.TRAJECTORY
    if mode is not None and not permissions.allows_mode(mode):
        return f"mode {mode.name.lower()} is not allowed for this station"
    return None


def _invalid(message: Message) -> str | None:
    """Why a message's numbers cannot be acted on (non-finite), or None."""
    for name in getattr(message, "__dataclass_fields__", {}):
        value = getattr(message, name)
        values = value if isinstance(value, tuple) else (value,)
        for item in values:
            if isinstance(item, float) and not math.isfinite(item):
                return f"{name} is {item}"
    return None


_DRIVE_MODES: dict[type, Mode] = {
    VelocityCommand: Mode.VELOCITY,
    WheelSpeedCommand: Mode.WHEELS,
    TankCommand: Mode.TANK,
    FreeLookCommand: Mode.FREE_LOOK,
    ArmVelocityCommand: Mode.ARM,
    GripperCommand: Mode.ARM,
}


class CycleOutput(NamedTuple):
    """What one control cycle decided (a named tuple: one is made every cycle)."""

    v: float
    omega: float
    v_left: float
    v_right: float
    pan_rate: float
    tilt_rate: float
    flags: SafetyFlags
    zone: int = -1
    scale: float = 1.0
    events: tuple[SafetyEvent, ...] = ()


class RobotCore:
    """The robot program for one robot: sans-I/O, driven by ``step(now)`` and ``handle``."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        robot_map: World | None = None,
        *,
        start_pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
        use_gyro: bool = True,
        use_localization: bool = True,
        seed: int = 0,
        arbitration_timeout: float = 5.0,
    ) -> None:
        self.config = config
        self.hw = hardware
        self.period = config.link.control_period
        self.estimator = StateEstimator(
            config,
            hardware,
            robot_map,
            start_pose=start_pose,
            use_gyro=use_gyro,
            use_localization=use_localization,
            seed=seed,
        )
        self.map_layer = (
            MapLayer(robot_map, config.localization.map_range) if robot_map is not None else None
        )
        self.safety = SafetyFilter(config.safety, config.footprint, config.drive)
        self._scan_points = ScanPoints()  # each reading's points, once
        #: range readings remembered where they were seen (None: off)
        self.memory = (
            ObstacleMemory(config.safety.obstacle_memory, config.localization.map_range)
            if config.safety.obstacle_memory > 0
            else None
        )
        self.arbiter = ControlArbiter(arbitration_timeout)
        #: the authority each station is given (its key's; one shared key: all equal)
        self._authorities: dict[int, int] = {}
        self.authority_of: Callable[[int], int] = lambda station: self._authorities.get(
            station, DEFAULT_AUTHORITY
        )
        self.free_look = (
            FreeLookController(config.free_look, config.drive, config.pan_tilt, config.limits)
            if config.pan_tilt is not None
            else None
        )
        tracking = config.robot_tracking
        self.tracker = TrackingController(b=tracking.b, zeta=tracking.zeta)
        #: the arm's commands and its anti-collision check (a robot with an arm)
        self.arm = (
            RobotArm.from_config(config.arm, hardware.arm, self.period)
            if config.arm is not None and hardware.arm is not None
            else None
        )
        #: the disposal task (a robot with an arm and a driving camera), run in Mode.AUTONOMY
        self.autonomy = (
            RobotAutonomy(config, hardware, self.arm.model)
            if self.arm is not None and hardware.camera is not None and config.pan_tilt
            else None
        )
        self._vy = 0.0  # the task's sideways speed (a holonomic base)
        self.mode = Mode.IDLE
        self.estop = False
        self._command: Message | None = None
        self._pan_command: PanTiltCommand | None = None
        self._pan_time = 0.0  # when it arrived: it expires on its own, as the watchdog's timeout
        self._linear: LinearDrive | None = None
        self._trajectory: TrajectoryReference | None = None
        self._trajectory_t0 = 0.0
        self._trajectory_message: TrajectoryStart | None = None
        self.reference: tuple[float, float, float, float, float] | None = None
        self.last_output = CycleOutput(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, SafetyFlags.NONE)
        self.events: list[SafetyEvent] = []
        self._hardware_fault = False  # the hardware did not answer at the last cycle
        self.rejections: list[str] = []
        self.dropped_commands = 0
        self.link_stats = LinkStatsReport()
        self.now = 0.0
        self._handlers: dict[type, Callable[[Any, float], list[Message]]] = {
            Heartbeat: lambda m, now: [],
            EStop: self._on_estop,
            ModeChange: lambda m, now: self._change_mode(m.mode, now),
            Relocalize: lambda m, now: self._relocalize(),
            PanTiltCommand: self._on_pan_tilt,
            LinearDriveStart: self._on_linear_start,
            LinearDriveStop: lambda m, now: self._change_mode(Mode.IDLE, now),
            TrajectoryStart: self._on_trajectory_start,
            TrajectoryStop: lambda m, now: self._change_mode(Mode.IDLE, now),
            **dict.fromkeys(_DRIVE_MODES, self._on_drive),
            ArmVelocityCommand: self._on_arm,
            GripperCommand: self._on_arm,
        }

    # -- what the estimator knows ------------------------------------------------------------

    @property
    def pose(self) -> Pose:
        """The localized pose (map frame)."""
        return self.estimator.pose

    @property
    def pose_trusted(self) -> bool:
        """False while a global search runs."""
        return self.estimator.pose_trusted

    @property
    def odometry(self) -> Odometry:
        return self.estimator.odometry

    @property
    def heading(self) -> HeadingKalmanFilter | None:
        return self.estimator.heading

    @property
    def mcl(self) -> MonteCarloLocalization | None:
        return self.estimator.mcl

    def on_scan(self, now: float) -> bool:
        """A new laser scan: run localization now; returns whether the filter updated."""
        return self.estimator.on_scan(now)

    def localization_job(self, now: float) -> LocalizationJob | None:
        return self.estimator.localization_job(now)

    def localize(self, job: LocalizationJob) -> LocalizationResult | None:
        return self.estimator.localize(job)

    def apply_localization(self, result: LocalizationResult) -> None:
        self.estimator.apply_localization(result)

    def global_localization(self) -> None:
        self.estimator.global_localization()

    def unavailable(self) -> list[str]:
        """What this robot cannot do with the hardware it has, one line each."""
        lines = []
        if not self._can_free_look():
            lines.append("Free Look refused: the camera cannot pan (no pan unit off the axle)")
        if self.estimator.mcl is None:
            why = "no laser" if self.hw.laser is None else "no map"
            lines.append(f"no localization ({why}): the pose is dead reckoning")
        if self.map_layer is None:
            lines.append("no map: safety runs on the range sensors alone")
        if self.hw.laser is None and self.hw.sonar is None:
            lines.append("no range sensor: safety has only the watchdog, e-stop and bumpers")
        if self.hw.gyro is None:
            lines.append("no gyro: heading from the wheels alone")
        if self.hw.camera is None:
            lines.append("no camera: no video")
        lines.extend(self.hw.notes)
        return lines

    # -- commands ----------------------------------------------------------------------------

    def handle(
        self,
        message: Message,
        now: float,
        station: int = _ANY_STATION,
        permissions: Permissions | None = None,
    ) -> list[Message]:
        """Take one message from ``station`` (the verified sender; 0 for a link without
        stations, the thesis profile); returns replies (control grants and rejections).

        A station speaks only for itself, with the authority it was given (not the one it
        claims). Stations must hold control to command anything but an e-stop; a link without
        stations may command while no station holds control. ``permissions`` (from the
        station's key): an observer commands nothing, and only its allowed modes run.
        """
        if permissions is not None:
            self._authorities[station] = permissions.authority
            refusal = _not_permitted(message, permissions)
            if refusal is not None:
                self.rejections.append(f"station {station}: {refusal}")
                self.dropped_commands += 1
                return []
        if isinstance(message, ControlRequest | ControlRelease):
            return self._control(message, now, station)
        if isinstance(message, EStop) and message.engaged:
            return self._on_estop(message, now)  # whoever may speak may stop the robot
        if (station != _ANY_STATION or self.arbiter.holder(now) is not None) and (
            not self.arbiter.admit(station, now)
        ):
            self.dropped_commands += 1
            return []
        problem = _invalid(message)
        if problem is not None:
            self.rejections.append(f"{type(message).__name__} refused: {problem}")
            return []
        handler = self._handlers.get(type(message))
        replies = handler(message, now) if handler is not None else []
        if self._feeds_watchdog(message):
            self.safety.command_received(now)
        return replies

    def _control(
        self, message: ControlRequest | ControlRelease, now: float, station: int
    ) -> list[Message]:
        if station != _ANY_STATION and message.station != station:
            self.rejections.append(
                f"station {station} spoke for station {message.station}: refused"
            )
            if isinstance(message, ControlRequest):
                return [ControlReject(message.station, RejectReason.NOT_HOLDER)]
            return []
        if isinstance(message, ControlRelease):
            self.arbiter.release(message.station, now)  # only the holder's own release acts
            return []
        authority = self.authority_of(message.station)
        decision = self.arbiter.request(message.station, authority, now)
        if not decision.granted:
            return [ControlReject(message.station, decision.reason or RejectReason.NOT_HOLDER)]
        if decision.previous is not None and decision.previous != message.station:
            self.events.append(
                SafetyEvent(
                    now,
                    "control",
                    f"station {message.station} (authority {authority}) took control "
                    f"from station {decision.previous}",
                )
            )
        return [ControlGrant(message.station, authority)]

    def _feeds_watchdog(self, message: Message) -> bool:
        """Only the command that drives the mode now in force feeds the watchdog, so it trips
        on the age of the newest one: a pan-tilt, arm, mode or heartbeat message never keeps
        an old drive command alive. While the robot drives itself (linear drive, a
        trajectory, the task) any valid packet shows the link is alive; while it stands
        (idle), a camera command is the one in force."""
        mode = self.mode
        if mode in (Mode.LINEAR, Mode.TRAJECTORY, Mode.AUTONOMY):
            return True
        if mode == Mode.IDLE:
            return isinstance(message, PanTiltCommand)
        if mode == Mode.KEYBOARD:
            return isinstance(message, VelocityCommand)
        return _DRIVE_MODES.get(type(message)) == mode

    def _on_estop(self, message: EStop, now: float) -> list[Message]:
        self.estop = message.engaged
        self.safety.set_estop(message.engaged)
        if message.engaged and self.free_look is not None:
            self.free_look.hold()  # the camera is held from this moment on
        return []

    def _relocalize(self) -> list[Message]:
        self.estimator.global_localization()
        return []

    def _on_pan_tilt(self, message: PanTiltCommand, now: float) -> list[Message]:
        if self.mode == Mode.AUTONOMY:
            self._change_mode(Mode.IDLE, now)  # the operator looks around: the task pauses
        self._pan_command = PanTiltCommand(*self._camera_rates(message.pan_rate, message.tilt_rate))
        self._pan_time = now
        return []

    def _on_linear_start(self, message: LinearDriveStart, now: float) -> list[Message]:
        speed = min(message.max_speed, self.config.limits.linear_max_speed)
        try:
            self._linear = LinearDrive(message.x_start, message.x_end, speed)
        except ValueError as err:
            self.rejections.append(f"linear drive refused: {err}")
            return []
        return self._change_mode(Mode.LINEAR, now)

    def _on_trajectory_start(self, message: TrajectoryStart, now: float) -> list[Message]:
        if self.mode == Mode.TRAJECTORY and message == self._trajectory_message:
            return []  # a repeat of the running upload (sent again against loss)
        self._trajectory_message = message
        try:
            self._trajectory = SampledPath(
                message.t, message.x, message.y, reverse=message.reverse, periodic=message.periodic
            )
        except ValueError as err:
            self.rejections.append(f"trajectory refused: {err}")
            return []
        self._trajectory_t0 = now
        return self._change_mode(Mode.TRAJECTORY, now)

    def _on_drive(self, message: Message, now: float) -> list[Message]:
        message = self._within_limits(message)
        mode = _DRIVE_MODES[type(message)]
        if mode == Mode.FREE_LOOK and not self._can_free_look():
            self.rejections.append("Free Look Control refused: the camera cannot pan")
            return []
        if not (mode == Mode.VELOCITY and self.mode == Mode.KEYBOARD):
            self._change_mode(mode, now)
        if isinstance(message, FreeLookCommand) and self.free_look is not None:
            self.free_look.command(message, now)  # the previous one held until now
        self._command = message  # newest wins within a cycle
        return []

    def _on_arm(self, message: ArmVelocityCommand | GripperCommand, now: float) -> list[Message]:
        if self.arm is None:
            refusal: str | None = "arm command refused: this robot has no arm"
        elif isinstance(message, ArmVelocityCommand):
            refusal = self.arm.command(message)
        else:
            refusal = self.arm.grip(message)
        if refusal is not None:
            self.rejections.append(refusal)
            self.dropped_commands += 1
            return []
        return self._change_mode(Mode.ARM, now)

    def _within_limits(self, message: Message) -> Message:
        """The command scaled (direction kept) to this robot's own configured limits."""
        limits = self.config.limits
        v_max, w_max = limits.max_speed, math.radians(limits.max_turn_rate_deg)
        if isinstance(message, VelocityCommand):
            return VelocityCommand(*limit_velocity(message.v, message.omega, v_max, w_max))
        if isinstance(message, TankCommand):
            v, omega = limit_velocity(message.v, message.omega, v_max, w_max)
            pan, tilt = self._camera_rates(message.pan_rate, message.tilt_rate)
            return TankCommand(v, omega, pan, tilt)
        if isinstance(message, WheelSpeedCommand):
            s = min(1.0, v_max / max(abs(message.left), abs(message.right), 1e-12))
            turn = abs(message.right - message.left) / self.config.drive.d_eff
            if turn * s > w_max:
                s = w_max / turn
            return WheelSpeedCommand(message.left * s, message.right * s)
        if isinstance(message, FreeLookCommand):
            speed = math.hypot(message.v1, message.v2)
            s = min(1.0, v_max / speed) if speed > 0 else 1.0
            if abs(message.omega) * s > w_max:
                s = w_max / abs(message.omega)
            _, tilt = self._camera_rates(0.0, message.tilt_rate)
            return FreeLookCommand(message.v1 * s, message.v2 * s, message.omega * s, tilt)
        return message

    def _camera_rates(self, pan: float, tilt: float) -> tuple[float, float]:
        pt = self.config.pan_tilt
        if pt is None:
            return 0.0, 0.0
        tilt_max = math.radians(pt.max_tilt_rate_deg)
        return (
            max(-pt.max_pan_rate, min(pt.max_pan_rate, pan)),
            max(-tilt_max, min(tilt_max, tilt)),
        )

    def _can_free_look(self) -> bool:
        pt = self.config.pan_tilt
        return bool(
            self.hw.pan_tilt is not None
            and self.hw.pan_tilt.has_pan
            and pt is not None
            and pt.mount_forward != 0.0
        )

    def _change_mode(self, mode: Mode, now: float) -> list[Message]:
        if mode == Mode.FREE_LOOK and not self._can_free_look():
            self.rejections.append("Free Look Control refused: the camera cannot pan")
            return []
        if mode == Mode.AUTONOMY:
            if self.autonomy is None:
                self.rejections.append("autonomy refused: it needs an arm and a driving camera")
                return []
            if self.estop:
                self.rejections.append("autonomy refused: the e-stop is engaged")
                return []
            self.autonomy.start(now)  # a new task, or the paused one from its phase
            self.safety.command_received(now)
        elif self.mode == Mode.AUTONOMY and self.autonomy is not None:
            self.autonomy.pause(now)  # the operator takes over; the phase is kept
        if mode != self.mode:
            if self.free_look is not None:
                self.free_look.reset()
            if mode != Mode.LINEAR:
                self._linear = None
            if mode != Mode.TRAJECTORY:
                self._trajectory = None
                self.reference = None
            self._command = None
        self.mode = mode
        return []

    # -- the control cycle -------------------------------------------------------------------

    def range_points(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Obstacle points (robot frame): (the range sensors' now, the remembered and the map's).

        A sonar echo may come from anywhere across its cone, so each reading becomes points
        spread over the cone at the measured range: safety must assume the worst bearing. The
        memory keeps only the cone's axis, since spread points seen from elsewhere would land
        where nothing is.
        """
        laser = self.hw.laser.latest() if self.hw.laser is not None else None
        laser_points = self._scan_points.laser(laser)
        sonar = self.hw.sonar.latest() if self.hw.sonar is not None else None
        half = math.radians(self.config.sonar.cone_deg) / 2 if self.config.sonar else 0.0
        sonar_points, sonar_axes = self._scan_points.sonar(sonar, half)
        live = np.concatenate((laser_points, sonar_points))  # both N×2
        cones = (
            (sonar.origin_x, sonar.origin_y, sonar.bearings, sonar.ranges)
            if sonar is not None
            else None
        )
        clouds = []
        if self.memory is not None:
            sweep = (
                (laser.bearings, laser.ranges, (float(laser.origin_x[0]), float(laser.origin_y[0])))
                if laser is not None
                else None
            )
            odometry = Pose(*self.estimator.odometry.pose)
            clouds.append(
                self.memory.update(odometry, self.now, laser_points, sonar_axes, sweep, cones, half)
            )
        if self.map_layer is not None and self.estimator.pose_trusted:
            # a wall the sensors see through is not there: the pose is off, or the map is old
            pose = self.estimator.pose
            walls = self.map_layer.unseen_walls(pose, laser, sonar, half)
            clouds += [walls, self.map_layer.keep_out_points(pose)]
        return live, np.concatenate(clouds) if clouds else np.zeros((0, 2))

    def _mode_command(self, now: float) -> tuple[float, float, float, float]:
        """(v, ω, pan rate, tilt rate) the current mode asks for (Free Look aside)."""
        command = self._command
        d = self.config.drive.d_eff
        if self.mode in (Mode.VELOCITY, Mode.KEYBOARD) and isinstance(command, VelocityCommand):
            return command.v, command.omega, 0.0, 0.0
        if self.mode == Mode.WHEELS and isinstance(command, WheelSpeedCommand):
            return (command.left + command.right) / 2, (command.right - command.left) / d, 0.0, 0.0
        if self.mode == Mode.TANK and isinstance(command, TankCommand):
            return command.v, command.omega, command.pan_rate, command.tilt_rate
        if self.mode == Mode.LINEAR and self._linear is not None:
            out = self._linear.update(*self.estimator.pose)
            return out.v, out.omega, 0.0, 0.0
        if self.mode == Mode.AUTONOMY and self.autonomy is not None:
            pt = self.hw.pan_tilt.state() if self.hw.pan_tilt else None
            task = self.autonomy.step(
                now,
                Pose(*self.estimator.odometry.pose),
                pt.pan if pt is not None else 0.0,
                pt.tilt if pt is not None else 0.0,
                self.arm.joints() if self.arm is not None else np.zeros(0),
                bool(self.hw.arm is not None and self.hw.arm.gripper_state().holding),
            )
            if self.arm is not None:  # checked by the arm's guard like an operator's jog
                if task.arm is not None:
                    self.arm.command(ArmVelocityCommand(task.arm))
                if task.gripper is not None:
                    self.arm.grip(GripperCommand(task.gripper))
            self._vy = task.vy
            return task.vx, task.omega, task.pan_rate, task.tilt_rate
        if self.mode == Mode.TRAJECTORY and self._trajectory is not None:
            t = now - self._trajectory_t0
            if t > self._trajectory.duration:
                self._change_mode(Mode.IDLE, now)
                return 0.0, 0.0, 0.0, 0.0
            ref = self._trajectory.at(t)
            self.reference = (ref.x, ref.y, ref.theta, ref.v, ref.omega)
            v, omega = self.tracker.command(ref, *self.estimator.pose)
            limits = self.config.limits
            v, omega = limit_velocity(
                v, omega, limits.max_speed, math.radians(limits.max_turn_rate_deg)
            )
            return v, omega, 0.0, 0.0
        return 0.0, 0.0, 0.0, 0.0

    def step(self, now: float) -> CycleOutput:
        """One control cycle."""
        self.now = now
        yaw_rate = self.estimator.update()
        drive = self.config.drive
        d = drive.d_eff
        pt_state = self.hw.pan_tilt.state() if self.hw.pan_tilt else None
        pan = pt_state.pan if pt_state is not None else 0.0
        command = self._command
        free_look = (
            self.free_look
            if self.mode == Mode.FREE_LOOK and isinstance(command, FreeLookCommand)
            else None
        )
        if free_look is not None:
            assert isinstance(command, FreeLookCommand)
            x, y, theta = self.estimator.pose
            if self.heading is not None:
                theta = self.heading.heading
            flc = free_look.step(Pose(x, y, theta), pan, yaw_rate, self.heading is not None, now)
            v, omega, pan_rate, tilt_rate = flc.v, flc.omega, flc.pan_rate, command.tilt_rate
        else:
            if self.free_look is not None:
                self.free_look.reset()
            v, omega, pan_rate, tilt_rate = self._mode_command(now)
            if (
                self._pan_command is not None
                and now - self._pan_time > self.config.safety.watchdog_timeout
            ):
                self._pan_command = None  # a camera command expires on its own
            if self._pan_command is not None:
                pan_rate += self._pan_command.pan_rate
                tilt_rate += self._pan_command.tilt_rate
            wheels = tank_control(v, omega, d)
            s = saturation_factor(wheels, drive.max_wheel_speed, None, drive.max_turn_rate, d)
            v, omega = v * s, omega * s
        vy, self._vy = self._vy, 0.0
        bumpers = self.hw.bumpers.latest() if self.hw.bumpers else None
        live, prior = self.range_points()
        decision = self.safety.filter(
            v,
            omega,
            live,
            now,
            bool(bumpers and bumpers.front),
            bool(bumpers and bumpers.rear),
            measured=(self.odometry.v, yaw_rate),
            prior=prior,
        )
        flags = decision.flags
        if self.hw.connection is not None and not self.hw.connection.connected:
            # commands cannot reach the robot: command nothing, so nothing old is replayed
            flags |= SafetyFlags.HARDWARE
            decision = decision._replace(v=0.0, omega=0.0, scale=0.0, flags=flags)
            if not self._hardware_fault:  # what the hardware says is wrong, once
                self._hardware_fault = True
                self.events.append(SafetyEvent(now, "hardware", self.hw.connection.status))
        elif self._hardware_fault:
            self._hardware_fault = False
            self.events.append(SafetyEvent(now, "clear", "the hardware answers again"))
        scale = decision.scale
        bits = int(flags)
        held = bool(bits & _HOLDING)
        v, omega = decision.v, decision.omega
        if free_look is not None:
            # the share of the camera command carried out: the reference integrates only that,
            # so a camera held still has no commanded motion to catch up when it is released
            free_look.carried_out = 0.0 if held else scale
            # the whole camera command scales together: the camera keeps its path, slower
            v_left, v_right = flc.v_left * scale, flc.v_right * scale
            pan_rate *= scale
            if bits & _BRAKING:
                stop = tank_control(v, omega, d)
                v_left, v_right = stop.v_left, stop.v_right
        else:
            if self.free_look is not None:
                self.free_look.carried_out = 1.0
            wheels = tank_control(v, omega, d)
            v_left, v_right = wheels.v_left, wheels.v_right
        if held:
            pan_rate = tilt_rate = 0.0
            if self.mode == Mode.AUTONOMY:  # e-stop or a lost link: paused, not going on blind
                self._change_mode(Mode.IDLE, now)
        if self.arm is not None:  # every cycle: nothing reaches the joints unchecked
            self.arm.step(now, active=self.mode in (Mode.ARM, Mode.AUTONOMY), held=held)
        # the task's sideways speed scaled as the rest of its command was (zero when stopped)
        vy = vy * min(scale, 1.0) if not bits & _STOPPING else 0.0
        if self.hw.drive.kind == "holonomic":
            self.hw.drive.command_twist(v, vy, omega)
        else:
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
            pose=self.estimator.pose,
            v=self.odometry.v,
            omega=self.estimator.yaw_rate,
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
            localizing=not self.estimator.pose_trusted,
            controller=self.arbiter.holder(now) or 0,
            link=self.link_stats,
            arm=self.arm.telemetry() if self.arm is not None else None,
            autonomy=self.autonomy.telemetry(self.mode != Mode.AUTONOMY)
            if self.autonomy is not None
            else None,
        )
