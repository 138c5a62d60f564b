"""The robot's drive modes as objects (sans-I/O), one per :class:`~freelook.types.Mode`.

Each mode keeps its own state and owns its controller, and answers: ``refusal`` (why it
cannot be entered now, or None), ``standing_refusal`` (why it can never be entered on this
robot, for what the robot is: the part of ``refusal`` the operator's page is told up front),
``enter`` (it takes over), ``take`` (a command for it arrived, after the transition),
``command`` (what it asks of the actuators this cycle, an :class:`Intent`), ``settled`` (what
safety made of it), ``hold`` (the actuators are held from now on: the e-stop), ``finished``
(its own motion is over) and ``exit`` (it gives way). Which message leads from which mode to
which, and which feeds the watchdog, is not here but in :mod:`freelook.robot._mode_table`, in
one table.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np

from freelook.config import RobotConfig
from freelook.control import (
    CameraCommand,
    FreeLookController,
    LinearDrive,
    SampledPath,
    TrackingController,
    TrajectoryReference,
    limit_velocity,
)
from freelook.geometry import Pose
from freelook.hal import DriveCommand, RobotHardware
from freelook.link import (
    ArmVelocityCommand,
    FreeLookCommand,
    GripperCommand,
    LinearDriveStart,
    Message,
    TrajectoryStart,
)
from freelook.robot._arm import RobotArm
from freelook.robot._autonomy import RobotAutonomy
from freelook.robot._estimator import StateEstimator
from freelook.robot._intake import CameraRates
from freelook.safety import SafetyDecision, SafetyFilter
from freelook.types import Mode, SafetyFlags

__all__ = [
    "HOLDING",
    "STAND",
    "ArmJogging",
    "Autonomous",
    "CameraJog",
    "DriveMode",
    "Driven",
    "FreeLooking",
    "Intent",
    "LinearDriving",
    "Reference",
    "Standing",
    "Tracking",
    "tank_mode",
    "velocity_mode",
    "wheels_mode",
]


class Intent(NamedTuple):
    """What the mode in force asks of the actuators this cycle, before safety (a named tuple:
    one is made every cycle)."""

    v: float = 0.0
    omega: float = 0.0
    pan_rate: float = 0.0
    tilt_rate: float = 0.0
    #: sideways speed (a holonomic base; only the task asks for one)
    vy: float = 0.0
    #: the mode's own drive command (Free Look: the controller's, tracks and all, for the
    #: camera's path), scaled as a whole by safety; None: the tracks follow (v, ω)
    drive: DriveCommand | None = None


#: standing still
STAND = Intent()

#: the safety flags that hold the camera as well as the chassis: e-stop, watchdog and a lost
#: connection (a plain int: each operation on an enum flag builds an enum member)
HOLDING = int(SafetyFlags.ESTOP | SafetyFlags.WATCHDOG | SafetyFlags.HARDWARE)


class Reference(NamedTuple):
    """Where a trajectory should have the robot now: pose and velocities."""

    x: float
    y: float
    theta: float
    v: float
    omega: float


class DriveMode:
    """A mode that stands still, takes no commands and refuses nobody (the default)."""

    def __init__(self, mode: Mode) -> None:
        self.mode = mode

    def refusal(self) -> str | None:
        """Why this mode cannot be entered now, or None."""
        return self.standing_refusal()

    def standing_refusal(self) -> str | None:
        """Why this mode is refused whenever it is asked, for what the robot is (a missing
        part, not a passing state such as the e-stop), or None."""
        return None

    def enter(self, now: float) -> None:
        """This mode takes over (from another)."""

    def again(self, now: float) -> None:
        """This mode, in force, is asked for again."""

    def exit(self, now: float) -> None:
        """This mode gives way to another."""

    def take(self, message: Message, now: float) -> None:
        """A command for this mode arrived (it is in force)."""

    def finished(self, now: float) -> bool:
        """Whether this mode's own motion is over."""
        return False

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        """What this mode asks for this cycle (the filtered yaw rate and the measured pan
        angle given)."""
        return STAND

    def settled(self, decision: SafetyDecision) -> None:
        """What safety decided on this cycle's :meth:`command` (its scale, its flags)."""

    def hold(self) -> None:
        """The actuators are held from now on (the e-stop), until a cycle says otherwise."""


class Driven(DriveMode):
    """A mode the operator drives command by command; the newest command holds."""

    def __init__(self, mode: Mode, intent: Callable[[Any], Intent]) -> None:
        super().__init__(mode)
        self._intent = intent
        self.latest: Message | None = None

    def exit(self, now: float) -> None:
        self.latest = None

    def take(self, message: Message, now: float) -> None:
        self.latest = message  # newest wins within a cycle

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        return STAND if self.latest is None else self._intent(self.latest)


def velocity_mode(mode: Mode) -> Driven:
    """Velocity commands (v, ω): the velocity mode, and the keyboard's."""
    return Driven(mode, lambda c: Intent(c.v, c.omega))


def wheels_mode(d: float) -> Driven:
    """Track speeds, for a base of effective track width ``d``."""
    return Driven(Mode.WHEELS, lambda c: Intent((c.left + c.right) / 2, (c.right - c.left) / d))


def tank_mode() -> Driven:
    """Tank control: (v, ω) and the camera's rates together."""
    return Driven(Mode.TANK, lambda c: Intent(c.v, c.omega, c.pan_rate, c.tilt_rate))


class FreeLooking(Driven):
    """Free Look Control: the operator drives the camera; the controller works out the
    tracks and the pan, at the cycle rate, with the measured pan, the localized pose and the
    filtered yaw rate. The mode owns the controller (none without a pan-tilt unit): it alone
    resets it, gives it commands and tells it what the actuators carried out."""

    def __init__(
        self,
        config: RobotConfig,
        estimator: StateEstimator,
        pan_refusal: Callable[[], str | None],
    ) -> None:
        super().__init__(Mode.FREE_LOOK, lambda c: STAND)
        self.controller = (
            FreeLookController(config.free_look, config.drive, config.pan_tilt, config.limits)
            if config.pan_tilt is not None
            else None
        )
        self.estimator = estimator
        #: whether this cycle's command steered the tracks itself (the controller's output)
        self._steered = False
        #: why the camera cannot pan off the axle, or None (asked each time: a ROS robot
        #: learns its joints from its first joint states)
        self.pan_refusal = pan_refusal

    def standing_refusal(self) -> str | None:
        why = self.pan_refusal()
        return None if why is None else f"Free Look refused: the camera cannot pan ({why})"

    def enter(self, now: float) -> None:
        if self.controller is not None:
            self.controller.reset()

    def exit(self, now: float) -> None:
        super().exit(now)
        if self.controller is not None:
            self.controller.reset()

    def take(self, message: Message, now: float) -> None:
        if isinstance(message, FreeLookCommand) and self.controller is not None:
            # the previous one held until now
            self.controller.command(CameraCommand(message.v1, message.v2, message.omega), now)
        super().take(message, now)

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        command, controller = self.latest, self.controller
        if not isinstance(command, FreeLookCommand) or controller is None:
            self._steered = False
            return STAND
        self._steered = True
        # the pose the estimator keeps: the heading filter's increments on the localization's
        # latest fix (with no map, on the given start). The filter alone learns the
        # gyro's scale against the tracks, whose slip it knows only roughly, and sat tenths of
        # a degree off the map's heading after turns; the camera is held in the map's frame
        has_gyro = self.estimator.heading is not None
        drive, pan_rate = controller.step(self.estimator.pose, pan, yaw_rate, has_gyro, now)
        return Intent(drive.v, drive.omega, pan_rate, command.tilt_rate, drive=drive)

    def settled(self, decision: SafetyDecision) -> None:
        controller = self.controller
        if controller is None:
            return
        if not self._steered:  # nothing to follow: the next command starts from here
            controller.reset()
            controller.carried_out = 1.0
        elif int(decision.flags) & HOLDING:
            controller.carried_out = 0.0  # held: nothing to catch up when released
        else:
            # the share of the camera command carried out: the reference integrates only that
            controller.carried_out = decision.scale

    def hold(self) -> None:
        if self.controller is not None:
            self.controller.hold()  # the camera is held from this moment on


class LinearDriving(DriveMode):
    """Linear drive: the robot drives itself along its x axis, from one point to another."""

    def __init__(self, estimator: StateEstimator, max_speed: float) -> None:
        super().__init__(Mode.LINEAR)
        self.estimator = estimator
        self.max_speed = max_speed
        self.drive: LinearDrive | None = None

    def prepare(self, message: LinearDriveStart) -> str | None:
        """Set up the drive a start message asks for; why it cannot be, or None."""
        speed = min(message.max_speed, self.max_speed)
        try:
            self.drive = LinearDrive(message.x_start, message.x_end, speed)
        except ValueError as err:
            return f"linear drive refused: {err}"
        return None

    def exit(self, now: float) -> None:
        self.drive = None

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        if self.drive is None:
            return STAND
        out = self.drive.update(*self.estimator.pose)
        return Intent(out.v, out.omega)


class Tracking(DriveMode):
    """Trajectory tracking: the robot follows an uploaded path on its own clock."""

    def __init__(self, estimator: StateEstimator, config: RobotConfig) -> None:
        super().__init__(Mode.TRAJECTORY)
        self.estimator = estimator
        tracking = config.robot_tracking
        self.tracker = TrackingController(b=tracking.b, zeta=tracking.zeta)
        self.config = config
        self.path: TrajectoryReference | None = None
        self.t0 = 0.0
        self.message: TrajectoryStart | None = None  # the last upload, kept across modes
        self.reference: Reference | None = None  # where the robot should be now

    def is_repeat(self, message: TrajectoryStart, in_force: bool) -> bool:
        """Whether ``message`` repeats the upload running (sent again against loss)."""
        return in_force and message == self.message

    def prepare(self, message: TrajectoryStart, now: float) -> str | None:
        """Set up the path an upload carries, from ``now``; why it cannot be, or None."""
        self.message = message
        try:
            self.path = SampledPath(
                message.t, message.x, message.y, reverse=message.reverse, periodic=message.periodic
            )
        except ValueError as err:
            return f"trajectory refused: {err}"
        self.t0 = now
        return None

    def exit(self, now: float) -> None:
        self.path = None
        self.reference = None

    def finished(self, now: float) -> bool:
        return self.path is not None and now - self.t0 > self.path.duration

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        if self.path is None:
            return STAND
        ref = self.path.at(now - self.t0)
        self.reference = Reference(ref.x, ref.y, ref.theta, ref.v, ref.omega)
        v, omega = self.tracker.command(ref, *self.estimator.pose)
        limits = self.config.limits
        v, omega = limit_velocity(
            v, omega, limits.max_speed, math.radians(limits.max_turn_rate_deg)
        )
        return Intent(v, omega)


class ArmJogging(DriveMode):
    """The tracks stand still; the operator jogs the arm and its gripper (the arm's own
    commands are checked and kept by :class:`RobotArm`)."""

    def __init__(self, has_arm: bool = True) -> None:
        super().__init__(Mode.ARM)
        self.has_arm = has_arm

    def standing_refusal(self) -> str | None:
        return None if self.has_arm else "Arm refused: this robot has no arm"


class Standing(DriveMode):
    """Idle: the robot stands; a camera command is the one in force."""

    def __init__(self) -> None:
        super().__init__(Mode.IDLE)


class Autonomous(DriveMode):
    """The robot runs its disposal task; leaving the mode pauses it, entering it again goes
    on from the phase it was in."""

    def __init__(
        self,
        autonomy: RobotAutonomy | None,
        hardware: RobotHardware,
        estimator: StateEstimator,
        safety: SafetyFilter,
        arm: RobotArm | None,
    ) -> None:
        super().__init__(Mode.AUTONOMY)
        self.autonomy = autonomy
        self.hw = hardware
        self.estimator = estimator
        self.safety = safety
        self.arm = arm

    def standing_refusal(self) -> str | None:
        if self.autonomy is None:
            return "autonomy refused: it needs an arm and a driving camera"
        return None

    def refusal(self) -> str | None:
        standing = self.standing_refusal()
        if standing is not None:
            return standing
        if self.safety.estop:
            return "autonomy refused: the e-stop is engaged"
        return None

    def enter(self, now: float) -> None:
        assert self.autonomy is not None
        self.autonomy.start(now)  # a new task, or the paused one from its phase
        self.safety.command_received(now)

    def again(self, now: float) -> None:
        self.enter(now)

    def exit(self, now: float) -> None:
        if self.autonomy is not None:
            self.autonomy.pause(now)  # the operator takes over; the phase is kept

    def command(self, now: float, yaw_rate: float, pan: float) -> Intent:
        if self.autonomy is None:
            return STAND
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
        return Intent(task.vx, task.omega, task.pan_rate, task.tilt_rate, task.vy)


class CameraJog:
    """The operator's camera rates, added to any mode's but Free Look's; a jog expires on its
    own after ``timeout``, as the watchdog's."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.rates: CameraRates | None = None
        self.since = 0.0  # when it arrived

    def set(self, rates: CameraRates, now: float) -> None:
        self.rates = rates
        self.since = now

    def add_to(self, intent: Intent, now: float) -> Intent:
        """``intent`` with the jog in force added (it expires here)."""
        if self.rates is not None and now - self.since > self.timeout:
            self.rates = None
        if self.rates is None:
            return intent
        return intent._replace(
            pan_rate=intent.pan_rate + self.rates.pan, tilt_rate=intent.tilt_rate + self.rates.tilt
        )
