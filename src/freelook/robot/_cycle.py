"""The control step (sans-I/O): the mode's intent → safety → the actuators, once a cycle.

Estimation runs first (odometry, the heading filter); then the mode in force says what it
wants (:class:`~freelook.robot._modes.Intent`), scaled into what the tracks can do; the safety
filter judges it against the range sensors, the remembered obstacles and the map; what is left
goes to the drive, the pan-tilt unit and the arm. Free Look's command keeps its own track
speeds, scaled as a whole, so the camera keeps its path, slower.
"""

from __future__ import annotations

from typing import NamedTuple

from freelook.config import RobotConfig
from freelook.hal import DriveCommand, RecoverableConnection, RobotHardware
from freelook.kinematics import saturation_factor, tank_control
from freelook.maps import World
from freelook.robot._arm import RobotArm
from freelook.robot._estimator import StateEstimator
from freelook.robot._intake import CoreLog
from freelook.robot._mode_table import Happening, ModeTable
from freelook.robot._modes import HOLDING, Intent
from freelook.safety import (
    MapLayer,
    ObstacleMemory,
    PointSources,
    RangePoints,
    SafetyDecision,
    SafetyEvent,
    SafetyFilter,
)
from freelook.types import Mode, SafetyFlags

__all__ = ["ControlStep", "CycleOutput"]

# (as plain ints: each operation on an enum flag builds an enum member)
_STOPPING = int(
    SafetyFlags.ESTOP | SafetyFlags.WATCHDOG | SafetyFlags.BUMPER | SafetyFlags.HARDWARE
)
# under these a Free Look command's wheels give way to the filter's stopping command
_BRAKING = int(SafetyFlags.WATCHDOG | SafetyFlags.BUMPER | SafetyFlags.HARDWARE)
#: the modes in which the arm moves on command
_ARM_MODES = (Mode.ARM, Mode.AUTONOMY)


class CycleOutput(NamedTuple):
    """What one control cycle decided (a named tuple: one is made every cycle): the drive
    command the base was given, as it was given, and the camera's rates and safety's word."""

    drive: DriveCommand
    pan_rate: float
    tilt_rate: float
    flags: SafetyFlags
    zone: int = -1
    scale: float = 1.0
    events: tuple[SafetyEvent, ...] = ()

    @property
    def v(self) -> float:
        """The commanded forward speed (m/s)."""
        return self.drive.v

    @property
    def omega(self) -> float:
        """The commanded turn rate (rad/s)."""
        return self.drive.omega

    @property
    def v_left(self) -> float:
        """The commanded left track speed (m/s)."""
        return self.drive.v_left

    @property
    def v_right(self) -> float:
        """The commanded right track speed (m/s)."""
        return self.drive.v_right


class ControlStep:
    """One robot's control cycle over its HAL, its modes and its safety filter."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        estimator: StateEstimator,
        modes: ModeTable,
        safety: SafetyFilter,
        log: CoreLog,
        robot_map: World | None,
    ) -> None:
        self.config = config
        self.hw = hardware
        self.estimator = estimator
        self.modes = modes
        self.safety = safety
        self.log = log
        self.arm: RobotArm | None = modes.arm
        #: the range sensors, the obstacle memory and the map layer, as obstacle points
        self.point_sources = PointSources(config, robot_map)
        self.now = 0.0
        self.last_output = CycleOutput(DriveCommand(0.0, 0.0, 0.0, 0.0), 0.0, 0.0, SafetyFlags.NONE)
        self._estop_engaged = False  # as the last cycle found it

    def step(self, now: float) -> CycleOutput:
        """One control cycle."""
        self.now = now
        yaw_rate = self.estimator.update()
        pt_state = self.hw.pan_tilt.state() if self.hw.pan_tilt else None
        pan = pt_state.pan if pt_state is not None else 0.0
        points = self.range_points()  # once a cycle: the obstacle memory takes each reading
        self.modes.goal.see(points)  # click-to-go drives around what safety judges by
        intent = self.modes.command(now, yaw_rate, pan)
        if intent.drive is None:
            intent = self._within_tracks(intent)
        decision = self._judge(intent, now, yaw_rate, points)
        self.last_output = self._actuate(intent, decision, now)
        return self.last_output

    def _within_tracks(self, intent: Intent) -> Intent:
        """(v, ω) scaled, direction kept, to what the tracks can do (not Free Look's, which
        scales itself)."""
        drive = self.config.drive
        d = drive.d_eff
        wheels = tank_control(intent.v, intent.omega, d)
        s = saturation_factor(wheels, drive.max_wheel_speed, None, drive.max_turn_rate, d)
        return Intent(intent.v * s, intent.omega * s, intent.pan_rate, intent.tilt_rate, intent.vy)

    def _judge(
        self, intent: Intent, now: float, yaw_rate: float, points: RangePoints
    ) -> SafetyDecision:
        """The safety rules' decision on the intent (a lost connection among them), against
        this cycle's obstacle ``points``."""
        bumpers = self.hw.bumpers.latest() if self.hw.bumpers else None
        live, prior = points
        connection = self.hw.connection
        released = self._estop_engaged and not self.safety.estop
        self._estop_engaged = self.safety.estop
        if released and isinstance(connection, RecoverableConnection):
            connection.recover()  # the operator's deliberate act ends a held hardware fault
        return self.safety.filter(
            intent.v,
            intent.omega,
            live,
            now,
            bool(bumpers and bumpers.front),
            bool(bumpers and bumpers.rear),
            measured=(self.estimator.odometry.v, yaw_rate),
            prior=prior,
            # commands cannot reach the robot: the hardware rule commands nothing
            hardware_fault=(
                connection.status if connection is not None and not connection.connected else None
            ),
        )

    def _actuate(self, intent: Intent, decision: SafetyDecision, now: float) -> CycleOutput:
        """What safety left, to the drive, the pan-tilt unit and the arm."""
        d = self.config.drive.d_eff
        scale = decision.scale
        bits = int(decision.flags)
        held = bool(bits & HOLDING)  # the camera is held as well as the chassis
        v, omega = decision.v, decision.omega
        pan_rate, tilt_rate = intent.pan_rate, intent.tilt_rate
        own = intent.drive
        self.modes.settled(decision)  # the mode learns what was carried out of its command
        if held:
            pan_rate = tilt_rate = 0.0
            self.modes.happen(Happening.HELD, now)
        elif own is not None:
            pan_rate *= scale  # the whole camera command scales together
        if self.arm is not None:  # every cycle: nothing reaches the joints unchecked
            self.arm.step(now, active=self.modes.mode in _ARM_MODES, held=held)
        # the task's sideways speed scaled as the rest of its command was (zero when stopped)
        vy = intent.vy * min(scale, 1.0) if not bits & _STOPPING else 0.0
        # one command, in both forms: the base reads the one it takes
        if own is not None and not bits & _BRAKING:
            # the mode's own tracks, scaled as a whole: the camera keeps its path, slower
            drive = DriveCommand(v, omega, own.v_left * scale, own.v_right * scale, vy)
        else:
            drive = DriveCommand.of_twist(v, omega, d, vy)
        self.hw.drive.command(drive)
        if self.hw.pan_tilt is not None:
            self.hw.pan_tilt.command_rates(pan_rate, tilt_rate)
        events = self.log.events
        events.extend(decision.events)
        del events[:-200]
        return CycleOutput(
            drive,
            pan_rate,
            tilt_rate,
            decision.flags,
            decision.zone,
            decision.scale,
            decision.events,
        )

    @property
    def map_layer(self) -> MapLayer | None:
        """The robot's map as a safety layer (None: no map)."""
        return self.point_sources.map_layer

    @map_layer.setter
    def map_layer(self, layer: MapLayer | None) -> None:
        self.point_sources.map_layer = layer

    @property
    def memory(self) -> ObstacleMemory | None:
        """Range readings remembered where they were seen (None: off)."""
        return self.point_sources.memory

    def range_points(self) -> RangePoints:
        """Obstacle points (robot frame) of the range sensors' readings now, the remembered
        and the map's around the localized pose while it is trusted."""
        laser = self.hw.laser.latest() if self.hw.laser is not None else None
        sonar = self.hw.sonar.latest() if self.hw.sonar is not None else None
        estimator = self.estimator
        pose = estimator.pose if estimator.pose_trusted else None
        return self.point_sources.points(laser, sonar, self.now, estimator.odometry.pose, pose)
