"""The operator station's browser inputs (sans-I/O): each one turned into what it asks the robot.

:class:`_Inputs` is :class:`~._core.StationCore`'s :meth:`handle` and the handlers it hands each
input to (drive axes, the arm, a mode, a trajectory, the transmission settings); what they read
and set is the core's.
"""

from __future__ import annotations

from collections.abc import Callable

from freelook.config import RobotConfig
from freelook.control import KeyboardDrive
from freelook.link import (
    SPACING_LIMITS,
    ArmVelocityCommand,
    EStop,
    FreeLookCommand,
    GoalStart,
    GoalStop,
    GripperCommand,
    LinearDriveStart,
    LinearDriveStop,
    LinkSession,
    Message,
    ModeChange,
    Relocalize,
    SetTransmission,
    SetTransmissionSpacing,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
)
from freelook.operator._arm import ArmJog
from freelook.operator._browser import (
    ArmJogRequest,
    BrowserInput,
    DriveAxes,
    EStopRequest,
    GoalRequest,
    GripperRequest,
    KeyPress,
    LinearRequest,
    Painted,
    RelocalizeRequest,
    SelectMode,
    TrajectoryRequest,
    TransmissionRequest,
)
from freelook.operator._goal import StationGoal
from freelook.operator._planning import Clearance
from freelook.operator._trajectories import Trajectories
from freelook.types import Mode

__all__: list[str] = []

THESIS_ROBOT_SIDE = (
    "robot-side tracking refused: the thesis profile carries no trajectories "
    "(operator-side tracking drives with velocity commands)"
)


class _Inputs:
    """Browser inputs in, messages out (a mixin of :class:`~._core.StationCore`)."""

    config: RobotConfig
    session: LinkSession
    native: bool
    keyboard: KeyboardDrive
    paths: Trajectories
    goal: StationGoal
    clearance: Clearance
    arm: ArmJog | None
    telemetry: Telemetry | None
    drive_command: Message | None
    gripper_command: GripperCommand | None
    estop: bool
    needs_release: bool
    inputs_held_back: int
    inputs_held_by_estop: int
    painted: list[tuple[float, float]]
    robot_tx_enabled: bool
    robot_tx_spacing: float
    refusal: tuple[str, str, float] | None
    _held_since: float | None
    unoffered: Callable[[float], dict[str, str]]

    def _refuse(self, mode: str, why: str, now: float) -> list[Message]:
        """Refuse what the page asked for here, and say why; nothing is sent."""
        self.refusal = (mode, why, now)
        return []

    def _released(self, request: BrowserInput) -> bool:
        """Whether ``request`` may act after a re-open: a moving input only after a rest."""
        if isinstance(request, FreeLookCommand | TankCommand):
            moving = _axes_held(request)
        elif isinstance(request, ArmJogRequest):
            moving = any(request.cartesian or request.joints)
        else:
            moving = False  # a key press, a mode, the e-stop: a new act of the operator's
        if not moving:
            self.needs_release = False
        return not moving

    def handle(self, request: BrowserInput, now: float, wall_time: float) -> list[Message]:
        """One browser input; returns the messages to send at once."""
        if self.needs_release and not self._released(request):
            self.inputs_held_back += 1
            return []
        if isinstance(request, FreeLookCommand | TankCommand):
            self._held_since = now if _axes_held(request) else None
        elif isinstance(request, ArmJogRequest):
            self._held_since = now if any(request.cartesian or request.joints) else None
        if self.estop and _moves(request):
            self.inputs_held_by_estop += 1  # the stop holds until its button releases it
            return []
        if isinstance(request, FreeLookCommand | TankCommand):
            if self.goal.active and not _axes_held(request):
                return []  # sticks at rest take nothing over: the goal drives on
            mode = "tank" if isinstance(request, TankCommand) else "free_look"
            why = self.unoffered(now).get(mode)
            return self._refuse(mode, why, now) if why else self._drive(request)
        if isinstance(request, KeyPress):
            # arrow keys take over from any automatic mode at once, as in the thesis
            self.paths.operator = None
            v, omega = self.keyboard.press(request.key)
            self.drive_command = VelocityCommand(v, omega)
            return [self.drive_command]
        if isinstance(request, SelectMode):
            why = self.unoffered(now).get(request.mode)
            if why is not None:
                # nothing held from before drives on: the robot's watchdog stops it
                self.paths.operator = None
                self.drive_command = None
                self.gripper_command = None
                return self._refuse(request.mode, why, now)
            return self._select_mode(request)
        if isinstance(request, EStopRequest):
            self.estop = request.engaged
            if self.estop:
                self.paths.operator = None
                self.gripper_command = None
                self.keyboard.press("space")  # the thesis keyboard's stop: released, it is at rest
                # the thesis profile carries no e-stop: this station sends the stop itself
                self.drive_command = None if self.native else VelocityCommand(0.0, 0.0)
            if not self.native:
                return [VelocityCommand(0.0, 0.0)] if self.estop else []
            return [EStop(self.estop)]
        if isinstance(request, RelocalizeRequest):
            return [Relocalize()]
        if isinstance(request, LinearRequest):
            if not request.start:
                return [LinearDriveStop()] if self.native else []
            why = self.unoffered(now).get("linear")
            if why is not None:
                return self._refuse("linear", why, now)
            self.drive_command = None
            return [LinearDriveStart(request.x0, request.x1, self.config.limits.linear_max_speed)]
        if isinstance(request, TrajectoryRequest):
            return self._trajectory(request, now)
        if isinstance(request, GoalRequest):
            return self._goal(request, now)
        if isinstance(request, TransmissionRequest):
            return self._transmission(request)
        if isinstance(request, ArmJogRequest | GripperRequest):
            return self._arm(request)
        if isinstance(request, Painted):
            self.painted.append((request.stamp, wall_time))
            del self.painted[:-1000]
        return []

    def _drive(self, command: DriveAxes) -> list[Message]:
        """The page's drive axes, read into the link's command: sent now and kept, so the
        transmissions repeat it."""
        self.paths.operator = None
        self.drive_command = command
        return [command]

    def _arm(self, request: ArmJogRequest | GripperRequest) -> list[Message]:
        """An arm jog (joint by joint, or the tool point through the Jacobian at the joints
        the robot last reported) or a gripper opening; nothing for a robot without an arm."""
        if self.arm is None:
            return []
        self.paths.operator = None
        command: Message | None
        if isinstance(request, GripperRequest):
            command = self.gripper_command = self.arm.gripper(request.fraction)
            if not isinstance(self.drive_command, ArmVelocityCommand):
                self.drive_command = self.arm.joints((0.0,) * len(self.arm.joint_names))
        elif request.cartesian is not None:
            arm = self.telemetry.arm if self.telemetry is not None else None
            command = None if arm is None else self.arm.cartesian(request.cartesian, arm.positions)
        else:
            command = self.arm.joints(request.joints)
        if command is None:
            return []
        if isinstance(command, ArmVelocityCommand):
            self.drive_command = command
        return [command]

    def _select_mode(self, request: SelectMode) -> list[Message]:
        if request.mode == "arm" and self.arm is None:
            return []  # this robot has no arm
        if request.mode == "autonomy":  # "dispose": the robot runs its task, or resumes it
            if not self.native:
                return []  # the thesis profile carries no mode changes
            self.paths.operator = None
            self.drive_command = None  # heartbeats only: any command would take over
            self.gripper_command = None
            return [ModeChange(Mode.AUTONOMY)]
        self.paths.operator = None
        self.keyboard.press("space")
        zero: Message = VelocityCommand(0.0, 0.0)
        if request.mode == "tank":
            zero = TankCommand(0.0, 0.0)
        elif request.mode == "free_look":
            zero = FreeLookCommand(0.0, 0.0, 0.0)
        self.gripper_command = None
        if request.mode == "arm" and self.arm is not None:
            zero = ArmVelocityCommand((0.0,) * len(self.arm.joint_names))
        self.drive_command = zero
        if request.mode == "arm" and self.native:
            return [ModeChange(Mode.ARM), zero]
        if request.mode == "keyboard" and self.native:
            return [ModeChange(Mode.KEYBOARD), zero]
        return [zero]

    def _trajectory(self, request: TrajectoryRequest, now: float) -> list[Message]:
        if not request.start:
            self.paths.stop()
            self.drive_command = VelocityCommand(0.0, 0.0)
            return [TrajectoryStop()] if self.native else [self.drive_command]
        if request.side == "robot" and not self.native:
            return self._refuse("trajectory", THESIS_ROBOT_SIDE, now)
        pose = self.telemetry.pose if self.telemetry is not None else (0.0, 0.0, 0.0)
        message = self.paths.start(request, pose, self.clearance, now)
        if isinstance(message, TrajectoryStart):
            self.drive_command = None
        return [message]

    def _goal(self, request: GoalRequest, now: float) -> list[Message]:
        """Click-to-go: the robot drives itself to the goal, fed by heartbeats (no held
        command would take over from it); or its stop."""
        if not request.start:
            return [GoalStop()] if self.native else []
        why = self.unoffered(now).get("goal") or self._goal_blocked(request.x, request.y)
        if why is not None:
            self.goal.sent(request.x, request.y, now)
            self.goal.refused(why, now)  # the page's chip says so
            return self._refuse("goal", why, now)
        self.paths.operator = None
        self.drive_command = None
        self.gripper_command = None
        self.keyboard.press("space")  # an arrow key after it starts from rest
        self.goal.sent(request.x, request.y, now)
        return [GoalStart(request.x, request.y)]

    def _goal_blocked(self, x: float, y: float) -> str | None:
        """Why the robot cannot stand at (x, y) on its map (in or against a wall, off the
        map), or None (no map: the robot's sensors judge)."""
        room, half = self.clearance.of_path([x], [y]), self.config.footprint.width / 2
        if room >= half:
            return None
        return (
            f"click-to-go refused: the goal is {room:.2f} m from an obstacle on the map "
            f"(the robot needs {half:.2f} m)"
        )

    def _transmission(self, request: TransmissionRequest) -> list[Message]:
        low, high = SPACING_LIMITS
        spacing = None if request.spacing is None else min(high, max(low, request.spacing))
        if request.side == "operator":
            if request.enabled is not None:
                self.session.transmitting = request.enabled
            if spacing is not None:
                self.session.spacing = spacing
            return []
        out: list[Message] = []
        if request.enabled is not None:
            self.robot_tx_enabled = request.enabled
            out.append(SetTransmission(request.enabled))
        if spacing is not None:
            self.robot_tx_spacing = spacing
            out.append(SetTransmissionSpacing(spacing))
        return out


def _moves(request: BrowserInput) -> bool:
    """Whether ``request`` would set the robot moving (held back while the e-stop is engaged:
    released, nothing asked for meanwhile drives off)."""
    if isinstance(request, FreeLookCommand | TankCommand):
        return _axes_held(request)
    if isinstance(request, ArmJogRequest):
        return any(request.cartesian or request.joints)
    if isinstance(request, KeyPress):
        return request.key != "space"
    if isinstance(request, LinearRequest | TrajectoryRequest | GoalRequest):
        return request.start
    return isinstance(request, GripperRequest)


def _axes_held(command: DriveAxes) -> bool:
    """Whether the page's drive axes ask for any motion (some key or stick held)."""
    if isinstance(command, TankCommand):
        return any((command.v, command.omega, command.pan_rate, command.tilt_rate))
    return any((command.v1, command.v2, command.omega, command.tilt_rate))
