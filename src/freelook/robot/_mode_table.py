"""Every mode transition of the robot core in one table, and the machine that follows it.

In the manner of h11's state table: :data:`TRANSITIONS` says, for the mode in force and what
happened (a message's type, or a :class:`Happening` of the control cycle), which mode follows;
a mode's own row overrides the row for any mode, and a :class:`ModeChange` goes to the mode it
names. A mode may refuse to be entered (:meth:`DriveMode.refusal`); a refused transition
changes nothing, and the refusal is kept for the station that asked (:meth:`ModeTable.refusals`)
beside the log. :meth:`ModeTable.standing_refusals` says up front which modes this robot never
enters, and why. The handlers here only prepare what a message carries (a path, a drive, an
arm jog), follow the table, and give the command to the mode then in force.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from freelook.config import RobotConfig
from freelook.control import TrackingController
from freelook.hal import RobotHardware
from freelook.link import (
    ArmVelocityCommand,
    EStop,
    FreeLookCommand,
    GripperCommand,
    LinearDriveStart,
    LinearDriveStop,
    Message,
    ModeChange,
    PanTiltCommand,
    TankCommand,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.robot._arm import RobotArm
from freelook.robot._autonomy import RobotAutonomy
from freelook.robot._estimator import StateEstimator
from freelook.robot._free_look import FreeLookController
from freelook.robot._intake import CommandLimits, CoreLog
from freelook.robot._modes import (
    ArmJogging,
    Autonomous,
    CameraJog,
    DriveMode,
    FreeLooking,
    Intent,
    LinearDriving,
    Reference,
    Standing,
    Tracking,
    tank_mode,
    velocity_mode,
    wheels_mode,
)
from freelook.safety import SafetyFilter
from freelook.types import Mode

__all__ = ["TRANSITIONS", "Happening", "ModeParts", "ModeTable", "next_mode"]


class Happening(Enum):
    """What the control cycle finds that may change the mode (beside the messages)."""

    FINISHED = "the mode's own motion is over"
    HELD = "the actuators are held: e-stop, watchdog or a lost connection"


#: the row for any mode
ANY = None

#: (the mode in force → what happened → the mode that follows); the mode's own row first,
#: then the row for any mode; what is in neither leaves the mode as it is. A ModeChange goes
#: to the mode it names.
TRANSITIONS: dict[Mode | None, dict[type | Happening, Mode]] = {
    ANY: {
        VelocityCommand: Mode.VELOCITY,
        WheelSpeedCommand: Mode.WHEELS,
        TankCommand: Mode.TANK,
        FreeLookCommand: Mode.FREE_LOOK,
        ArmVelocityCommand: Mode.ARM,
        GripperCommand: Mode.ARM,
        LinearDriveStart: Mode.LINEAR,
        LinearDriveStop: Mode.IDLE,
        TrajectoryStart: Mode.TRAJECTORY,
        TrajectoryStop: Mode.IDLE,
    },
    # the keyboard sends velocity commands of its own
    Mode.KEYBOARD: {VelocityCommand: Mode.KEYBOARD},
    Mode.TRAJECTORY: {Happening.FINISHED: Mode.IDLE},
    # the operator looks around, or the robot is held: the task pauses, not going on blind
    Mode.AUTONOMY: {PanTiltCommand: Mode.IDLE, Happening.HELD: Mode.IDLE},
}


def next_mode(mode: Mode, event: type | Happening) -> Mode | None:
    """The mode that follows ``event`` in ``mode`` (None: the mode stays as it is)."""
    own = TRANSITIONS.get(mode)
    if own is not None and event in own:
        return own[event]
    return TRANSITIONS[ANY].get(event)


@dataclass(frozen=True, slots=True)
class ModeParts:
    """The robot's parts some modes drive (None: the robot has no such part)."""

    tracker: TrackingController
    free_look: FreeLookController | None
    #: why the camera cannot pan off the axle, or None (asked at each entry to Free Look)
    pan_refusal: Callable[[], str | None]
    arm: RobotArm | None
    autonomy: RobotAutonomy | None


class ModeTable:
    """The robot's modes, the one in force, and the messages that move between them."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        estimator: StateEstimator,
        safety: SafetyFilter,
        parts: ModeParts,
        log: CoreLog,
    ) -> None:
        self.safety = safety
        self.log = log
        self.limits = CommandLimits(config)
        self.arm = parts.arm
        self.free_look = parts.free_look
        self.linear = LinearDriving(estimator, config.limits.linear_max_speed)
        self.tracking = Tracking(estimator, parts.tracker, config)
        modes: list[DriveMode] = [
            Standing(),
            velocity_mode(Mode.VELOCITY),
            velocity_mode(Mode.KEYBOARD),
            wheels_mode(config.drive.d_eff),
            tank_mode(),
            FreeLooking(parts.free_look, estimator, parts.pan_refusal),
            self.linear,
            self.tracking,
            ArmJogging(has_arm=parts.arm is not None),
            Autonomous(parts.autonomy, hardware, estimator, safety, parts.arm),
        ]
        self._modes = {m.mode: m for m in modes}
        assert set(self._modes) == set(Mode), "a mode object for every mode"
        self.current: DriveMode = self._modes[Mode.IDLE]
        #: the modes refused since the caller last took them (:meth:`refusals`), and why
        self._refused: list[tuple[Mode, str]] = []
        #: the operator's camera jog, beside any mode but Free Look
        self.jog = CameraJog(config.safety.watchdog_timeout)
        self._handlers: dict[type, Callable[[Any, float], object]] = {
            EStop: self._on_estop,
            ModeChange: lambda m, now: self.change(m.mode, now),
            PanTiltCommand: self._on_pan_tilt,
            LinearDriveStart: self._on_linear_start,
            LinearDriveStop: self._follow,
            TrajectoryStart: self._on_trajectory_start,
            TrajectoryStop: self._follow,
            VelocityCommand: self._on_drive,
            WheelSpeedCommand: self._on_drive,
            TankCommand: self._on_drive,
            FreeLookCommand: self._on_drive,
            ArmVelocityCommand: self._on_arm,
            GripperCommand: self._on_arm,
        }

    @property
    def mode(self) -> Mode:
        return self.current.mode

    @property
    def reference(self) -> Reference | None:
        """Where a trajectory being tracked should have the robot now (None: no trajectory)."""
        return self.tracking.reference

    # -- transitions -------------------------------------------------------------------------

    def refusals(self) -> list[tuple[Mode, str]]:
        """The modes refused since the last call, each with its reason (then forgotten)."""
        refused, self._refused = self._refused, []
        return refused

    def standing_refusals(self) -> dict[Mode, str]:
        """The modes this robot refuses whenever they are asked, for what it is, and why."""
        out = {}
        for mode, target in self._modes.items():
            why = target.standing_refusal()
            if why is not None:
                out[mode] = why
        return out

    def _refuse(self, mode: Mode, why: str, *, dropped: bool = False) -> None:
        self.log.refuse(why, dropped=dropped)
        if len(self._refused) < 16:  # a message refuses once; a caller that never takes: bounded
            self._refused.append((mode, why))

    def change(self, mode: Mode, now: float) -> bool:
        """Go to ``mode`` unless it refuses (the refusal is logged); whether it is in force."""
        target = self._modes[mode]
        refusal = target.refusal()
        if refusal is not None:
            self._refuse(mode, refusal)
            return False
        if target is self.current:
            target.again(now)
        else:
            self.current.exit(now)
            target.enter(now)
            self.current = target
        return True

    def happen(self, happening: Happening, now: float) -> None:
        """Something the control cycle found: follow the table."""
        target = next_mode(self.current.mode, happening)
        if target is not None:
            self.change(target, now)

    def _follow(self, message: Message, now: float) -> bool:
        """Follow the table for ``message``; whether the mode that follows is in force."""
        target = next_mode(self.current.mode, type(message))
        return target is None or self.change(target, now)

    # -- messages ----------------------------------------------------------------------------

    def handle(self, message: Message, now: float) -> None:
        """Act on one admitted message."""
        handler = self._handlers.get(type(message))
        if handler is not None:
            handler(message, now)

    def feeds_watchdog(self, message: Message) -> bool:
        """Whether ``message`` feeds the watchdog in the mode now in force."""
        return self.current.feeds_watchdog(message)

    def _on_estop(self, message: EStop, now: float) -> None:
        self.safety.set_estop(message.engaged)
        if message.engaged and self.free_look is not None:
            self.free_look.hold()  # the camera is held from this moment on

    def _on_pan_tilt(self, message: PanTiltCommand, now: float) -> None:
        self._follow(message, now)
        self.jog.set(self.limits.camera(message.pan_rate, message.tilt_rate), now)

    def _on_linear_start(self, message: LinearDriveStart, now: float) -> None:
        refusal = self.linear.prepare(message)
        if refusal is not None:
            self._refuse(Mode.LINEAR, refusal)
            return
        self._follow(message, now)

    def _on_trajectory_start(self, message: TrajectoryStart, now: float) -> None:
        tracking = self.tracking
        if tracking.is_repeat(message, in_force=self.current is tracking):
            return
        refusal = tracking.prepare(message, now)
        if refusal is not None:
            self._refuse(Mode.TRAJECTORY, refusal)
            return
        self._follow(message, now)

    def _on_drive(self, message: Message, now: float) -> None:
        message = self.limits.drive(message)
        if self._follow(message, now):
            self.current.take(message, now)

    def _on_arm(self, message: ArmVelocityCommand | GripperCommand, now: float) -> None:
        if self.arm is None:
            refusal: str | None = "arm command refused: this robot has no arm"
        elif isinstance(message, ArmVelocityCommand):
            refusal = self.arm.command(message)
        else:
            refusal = self.arm.grip(message)
        if refusal is not None:
            self._refuse(Mode.ARM, refusal, dropped=True)
            return
        self._follow(message, now)

    # -- the cycle ---------------------------------------------------------------------------

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        """What the mode in force asks for this cycle, the operator's camera jog added (but
        to Free Look's, which steers the camera itself)."""
        if self.current.finished(now):
            self.happen(Happening.FINISHED, now)
        intent = self.current.command(now, yaw_rate, pan)
        return intent if intent.wheels is not None else self.jog.add_to(intent, now)
