"""Every message the robot core takes, in one table, and the modes it moves between.

In the manner of h11's state table: :data:`COMMANDS` has one :class:`Row` per message type,
saying the mode it selects (a mode's own exception beside it), its handler, who may send it and
in which modes it feeds the watchdog. A type with no row is refused, said and counted like any
other refusal (:meth:`~freelook.robot._intake.CommandIntake.take`), never ignored.
:data:`HAPPENINGS` says the same for what the control cycle finds. A mode may refuse to be
entered (:meth:`DriveMode.refusal`); a refused transition changes nothing, and the refusal is
kept for the station that asked (:meth:`ModeTable.refusals`) beside the log.
:meth:`ModeTable.standing_refusals` says up front which modes this robot never enters, and why.
The handlers only prepare what a message carries (a path, a drive, an arm jog), follow the
table, and give the command to the mode then in force.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from freelook.config import RobotConfig
from freelook.hal import RobotHardware
from freelook.link import (
    ArmVelocityCommand,
    ControlRelease,
    ControlRequest,
    EStop,
    FreeLookCommand,
    GoalStart,
    GoalStop,
    GripperCommand,
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    Message,
    ModeChange,
    PanTiltCommand,
    ReceptionReport,
    Relocalize,
    SetTransmission,
    SetTransmissionSpacing,
    TankCommand,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.robot._arm import RobotArm
from freelook.robot._autonomy import RobotAutonomy
from freelook.robot._estimator import StateEstimator
from freelook.robot._goal import GoalDriving
from freelook.robot._intake import CameraRates, CommandIntake, CoreLog, Who
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
from freelook.robot._sight import DriverSight
from freelook.safety import SafetyDecision, SafetyFilter
from freelook.types import Mode

__all__ = [
    "COMMANDS",
    "HAPPENINGS",
    "NAMED",
    "Happening",
    "ModeParts",
    "ModeTable",
    "Row",
    "next_mode",
]


class Happening(Enum):
    """What the control cycle finds that may change the mode (beside the messages)."""

    FINISHED = "the mode's own motion is over"
    HELD = "the actuators are held: e-stop, watchdog or a lost connection"


#: the mode a ModeChange names
NAMED: Literal["named"] = "named"

#: the modes that drive themselves: any message heard from the station in control feeds their
#: watchdog, showing the link alive
_ITSELF = frozenset({Mode.LINEAR, Mode.TRAJECTORY, Mode.AUTONOMY, Mode.GOAL})


@dataclass(frozen=True, slots=True)
class Row:
    """What the robot does with one type of message."""

    #: the mode it selects from any mode (None: the mode stays; NAMED: the mode it names)
    selects: Mode | Literal["named"] | None
    #: what acts on it: (the table, the message, now, the station) → the replies
    handler: Callable[[ModeTable, Any, float, int], list[Message]]
    who: Who
    #: the modes in which it feeds the watchdog (after the handler); a message that needs no
    #: control feeds it in none. Only the command that drives a mode feeds it there, so the
    #: watchdog trips on the age of the newest: a pan-tilt, arm or heartbeat message never
    #: keeps an old drive command alive
    feeds: frozenset[Mode] = frozenset()
    #: a mode's own exception to ``selects``: in that mode, this mode follows instead
    unless: Mapping[Mode, Mode | None] = field(default_factory=dict)

    def needs_control(self, message: Message) -> bool:
        """Whether ``message`` is heard only from the station in control (and so checked
        for its expiry and for finite numbers)."""
        who = self.who
        if who is Who.STOPPER:
            return not (isinstance(message, EStop) and message.engaged)
        return who not in (Who.ANYONE, Who.STATION)

    def asks(self, message: Message) -> Mode | None:
        """The mode ``message`` asks for, as a station's key judges it (None: no mode)."""
        if self.who is not Who.DRIVER:
            return None
        if self.selects == NAMED:
            return message.mode if isinstance(message, ModeChange) else None
        return self.selects

    def next_mode(self, mode: Mode) -> Mode | None:
        """The mode that follows this message in ``mode`` (None: the mode stays as it is)."""
        if mode in self.unless:
            return self.unless[mode]
        return None if self.selects == NAMED else self.selects


#: (what the control cycle found → the mode in force → the mode that follows); what is not
#: here leaves the mode as it is
HAPPENINGS: dict[Happening, dict[Mode, Mode]] = {
    Happening.FINISHED: {Mode.TRAJECTORY: Mode.IDLE, Mode.GOAL: Mode.IDLE},
    # the robot is held: the task pauses, not going on blind; a goal is dropped (the e-stop
    # takes over from it, and a robot the link lost does not drive off when it comes back)
    Happening.HELD: {Mode.AUTONOMY: Mode.IDLE, Mode.GOAL: Mode.IDLE},
}


def next_mode(mode: Mode, event: type | Happening) -> Mode | None:
    """The mode that follows ``event`` (a message type, or a happening) in ``mode`` (None: the
    mode stays as it is, or the message has no row)."""
    if isinstance(event, Happening):
        return HAPPENINGS[event].get(mode)
    row = COMMANDS.get(event)
    return None if row is None else row.next_mode(mode)


@dataclass(frozen=True, slots=True)
class ModeParts:
    """The robot's parts some modes drive (None: the robot has no such part)."""

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
        intake: CommandIntake,
        sight: DriverSight,
    ) -> None:
        self.safety = safety
        self.estimator = estimator
        self.intake = intake
        self.sight = sight
        self.log: CoreLog = intake.log
        self.arm = parts.arm
        self.linear = LinearDriving(estimator, config.limits.linear_max_speed)
        self.tracking = Tracking(estimator, config)
        self.free_look = FreeLooking(config, estimator, parts.pan_refusal)
        self.goal = GoalDriving(config, estimator, safety)
        modes: list[DriveMode] = [
            Standing(),
            velocity_mode(Mode.VELOCITY),
            velocity_mode(Mode.KEYBOARD),
            wheels_mode(config.drive.d_eff),
            tank_mode(),
            self.free_look,
            self.linear,
            self.tracking,
            ArmJogging(has_arm=parts.arm is not None),
            Autonomous(parts.autonomy, hardware, estimator, safety, parts.arm),
            self.goal,
        ]
        self._modes = {m.mode: m for m in modes}
        assert set(self._modes) == set(Mode), "a mode object for every mode"
        self.current: DriveMode = self._modes[Mode.IDLE]
        #: the modes refused since the caller last took them (:meth:`refusals`), and why
        self._refused: list[tuple[Mode, str]] = []
        #: the operator's camera jog, beside any mode but Free Look
        self.jog = CameraJog(config.safety.watchdog_timeout)

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
        target = HAPPENINGS[happening].get(self.current.mode)
        if target is not None:
            self.change(target, now)

    def _follow(self, message: Message) -> Mode | None:
        return COMMANDS[type(message)].next_mode(self.current.mode)

    def feeds_watchdog(self, row: Row, message: Message) -> bool:
        """Whether ``message`` (of ``row``), just handled, feeds the watchdog in the mode now
        in force."""
        return self.current.mode in row.feeds and row.needs_control(message)

    # -- the handlers ------------------------------------------------------------------------

    def _on_nothing(self, message: Message, now: float, station: int) -> list[Message]:
        """A message that only shows the link alive (it may feed the watchdog)."""
        return []

    def _on_control(
        self, message: ControlRequest | ControlRelease, now: float, station: int
    ) -> list[Message]:
        return self.intake.control(message, now, station)

    def _on_reception(self, report: ReceptionReport, now: float, station: int) -> list[Message]:
        """A station's report of what it sees: a driver gone blind stops the robot at once."""
        change = self.sight.report(station, report, now)
        if change is not None:
            self.log.notice(change.why)
        if not self.sight.sees(station) and self.intake.arbiter.holder(now) == station:
            self.safety.command_lapsed()
        return []

    def _on_estop(self, message: EStop, now: float, station: int) -> list[Message]:
        self.safety.set_estop(message.engaged)
        if message.engaged:
            self.current.hold()  # the camera is held from this moment on
        return []

    def _on_relocalize(self, message: Relocalize, now: float, station: int) -> list[Message]:
        self.estimator.global_localization()
        return []

    def _on_mode_change(self, message: ModeChange, now: float, station: int) -> list[Message]:
        self.change(message.mode, now)
        return []

    def _on_stop(self, message: Message, now: float, station: int) -> list[Message]:
        self._go(message, now)
        return []

    def _go(self, message: Message, now: float) -> bool:
        """Follow the table for ``message``; whether the mode that follows is in force."""
        target = self._follow(message)
        return target is None or self.change(target, now)

    def _on_pan_tilt(self, message: PanTiltCommand, now: float, station: int) -> list[Message]:
        self._go(message, now)
        self.jog.set(CameraRates(message.pan_rate, message.tilt_rate), now)
        return []

    def _on_linear_start(
        self, message: LinearDriveStart, now: float, station: int
    ) -> list[Message]:
        refusal = self.linear.prepare(message)
        if refusal is not None:
            self._refuse(Mode.LINEAR, refusal)
        else:
            self._go(message, now)
        return []

    def _on_trajectory_start(
        self, message: TrajectoryStart, now: float, station: int
    ) -> list[Message]:
        tracking = self.tracking
        if tracking.is_repeat(message, in_force=self.current is tracking):
            return []
        refusal = tracking.prepare(message, now)
        if refusal is not None:
            self._refuse(Mode.TRAJECTORY, refusal)
        else:
            self._go(message, now)
        return []

    def _on_goal(self, message: GoalStart, now: float, station: int) -> list[Message]:
        """A goal: it replaces the one in force (the mode is entered again, or from another)."""
        if self.goal.refusal() is not None:
            self.change(Mode.GOAL, now)  # refused as the mode is, and said
            return []
        refusal = self.goal.prepare(message, now)
        if refusal is not None:
            self._refuse(Mode.GOAL, refusal)
        else:
            self._go(message, now)
        return []

    def _on_drive(self, message: Message, now: float, station: int) -> list[Message]:
        if self._go(message, now):
            self.current.take(message, now)
        return []

    def _on_arm(
        self, message: ArmVelocityCommand | GripperCommand, now: float, station: int
    ) -> list[Message]:
        if self.arm is None:
            refusal: str | None = "arm command refused: this robot has no arm"
        elif isinstance(message, ArmVelocityCommand):
            refusal = self.arm.command(message)
        else:
            refusal = self.arm.grip(message)
        if refusal is not None:
            self._refuse(Mode.ARM, refusal, dropped=True)
        else:
            self._go(message, now)
        return []

    # -- the cycle ---------------------------------------------------------------------------

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        """What the mode in force asks for this cycle, the operator's camera jog added (but
        to Free Look's, which steers the camera itself)."""
        if self.current.finished(now):
            if self.current is self.goal:  # said once a goal: where a log reader looks
                self.log.notice(f"click-to-go: goal {self.goal.outcome}")
            self.happen(Happening.FINISHED, now)
        intent = self.current.command(now, yaw_rate, pan)
        return intent if intent.drive is not None else self.jog.add_to(intent, now)

    def settled(self, decision: SafetyDecision) -> None:
        """What safety decided on this cycle's :meth:`command`, for the mode that asked."""
        self.current.settled(decision)


_T = ModeTable  # (the rows name its handlers)

#: one row per message type the robot takes (any other is refused and counted): the mode it
#: selects, its handler, who may send it, the modes in which it feeds the watchdog, and a
#: mode's own exception
COMMANDS: dict[type, Row] = {
    # the link's own: control, what a station sees, that it is there
    ControlRequest: Row(None, _T._on_control, Who.STATION),
    ControlRelease: Row(None, _T._on_control, Who.ANYONE),
    ReceptionReport: Row(None, _T._on_reception, Who.ANYONE),
    Heartbeat: Row(None, _T._on_nothing, Who.ANYONE_HEARD_FROM_HOLDER, _ITSELF),
    SetTransmission: Row(None, _T._on_nothing, Who.HOLDER, _ITSELF),
    SetTransmissionSpacing: Row(None, _T._on_nothing, Who.HOLDER, _ITSELF),
    # whoever may speak may stop the robot; only the station in control releases it
    EStop: Row(None, _T._on_estop, Who.STOPPER, _ITSELF),
    Relocalize: Row(None, _T._on_relocalize, Who.HOLDER, _ITSELF),
    ModeChange: Row(NAMED, _T._on_mode_change, Who.DRIVER, _ITSELF),
    # the keyboard sends velocity commands of its own
    VelocityCommand: Row(
        Mode.VELOCITY,
        _T._on_drive,
        Who.DRIVER,
        _ITSELF | {Mode.VELOCITY, Mode.KEYBOARD},
        {Mode.KEYBOARD: Mode.KEYBOARD},
    ),
    WheelSpeedCommand: Row(Mode.WHEELS, _T._on_drive, Who.DRIVER, _ITSELF | {Mode.WHEELS}),
    TankCommand: Row(Mode.TANK, _T._on_drive, Who.DRIVER, _ITSELF | {Mode.TANK}),
    FreeLookCommand: Row(Mode.FREE_LOOK, _T._on_drive, Who.DRIVER, _ITSELF | {Mode.FREE_LOOK}),
    # the operator looks around: a task pauses, not going on blind
    PanTiltCommand: Row(
        None, _T._on_pan_tilt, Who.HOLDER, _ITSELF | {Mode.IDLE}, {Mode.AUTONOMY: Mode.IDLE}
    ),
    ArmVelocityCommand: Row(Mode.ARM, _T._on_arm, Who.DRIVER, _ITSELF | {Mode.ARM}),
    GripperCommand: Row(Mode.ARM, _T._on_arm, Who.DRIVER, _ITSELF | {Mode.ARM}),
    LinearDriveStart: Row(Mode.LINEAR, _T._on_linear_start, Who.DRIVER, _ITSELF),
    LinearDriveStop: Row(Mode.IDLE, _T._on_stop, Who.HOLDER, _ITSELF),
    TrajectoryStart: Row(Mode.TRAJECTORY, _T._on_trajectory_start, Who.DRIVER, _ITSELF),
    TrajectoryStop: Row(Mode.IDLE, _T._on_stop, Who.HOLDER, _ITSELF),
    # click-to-go: a goal the robot drives to itself, and its stop
    GoalStart: Row(Mode.GOAL, _T._on_goal, Who.DRIVER, _ITSELF),
    GoalStop: Row(Mode.IDLE, _T._on_stop, Who.HOLDER, _ITSELF),
}
