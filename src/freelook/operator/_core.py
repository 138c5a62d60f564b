"""The operator station's core (sans-I/O): browser inputs in, link messages out.

It keeps what the operator asked for (the newest drive command, the e-stop, a trajectory
(:mod:`._trajectories`), the transmission settings) and what the robot last said (telemetry, control
grants, the modes it refused and why). It offers the page only the modes the wire profile
carries and the robot enters (:meth:`StationCore.unoffered`), and holds this station's e-stop
itself too: while it is engaged no input that moves is sent, on either profile (the thesis
profile carries no e-stop at all). :meth:`StationCore.handle` returns the messages to send at
once; :meth:`periodic` gives the link session what it re-sends at the operator's spacing (the
robot's watchdog wants a steady stream). Time is always an argument: the same core runs in
tests on a fake clock.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable

from freelook.config import RobotConfig
from freelook.control import KeyboardDrive
from freelook.link import (
    MAX_AGE,
    ArmVelocityCommand,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    FreeLookCommand,
    GripperCommand,
    Heartbeat,
    LinkSession,
    MapChunk,
    MapInfo,
    MapReceiver,
    Message,
    ModeRefusal,
    PositionReport,
    ReceptionReport,
    SetTransmission,
    TankCommand,
    Telemetry,
    VelocityCommand,
)
from freelook.maps import World
from freelook.operator._arm import ArmJog
from freelook.operator._browser import BrowserInput, StickScales
from freelook.operator._goal import StationGoal
from freelook.operator._inputs import _Inputs
from freelook.operator._planning import Clearance
from freelook.operator._prediction import MotionPredictor
from freelook.operator._trajectories import RunningPath, Trajectories
from freelook.types import Mode

__all__ = ["OPERATOR_STATION", "PAGE_MODES", "REFUSAL_SHOWN", "STANDING_HOLD", "StationCore"]

OPERATOR_STATION = 1
CONTROL_RENEWAL = 20  # transmissions between control requests (about 1 s at 47 ms)
WATCH_BEAT = 100  # transmissions between a watching station's heartbeats (about 5 s)
REPORT_BEATS = 4  # transmissions between a driving station's reception reports (about 0.2 s)
#: s a held input (keys, a stick, an arm jog) stays in force without the page sending it again;
#: the page repeats a held input every 50 ms, so a page that stalls (a slow renderer, a hung
#: tab) stops the robot within this instead of driving on until its key-up is handled
HELD_INPUT_TIMEOUT = 0.3
#: the page's drive modes, each with the robot mode it runs in
PAGE_MODES: dict[str, Mode] = {
    "keyboard": Mode.KEYBOARD,
    "tank": Mode.TANK,
    "free_look": Mode.FREE_LOOK,
    "linear": Mode.LINEAR,
    "trajectory": Mode.TRAJECTORY,
    "arm": Mode.ARM,
    "autonomy": Mode.AUTONOMY,
}
_PAGE_MODE = {mode: name for name, mode in PAGE_MODES.items()}
#: the page's modes the thesis profile cannot carry (it carries velocity and wheel speeds), and why
THESIS_LACKS: dict[str, str] = {
    "tank": "Tank refused: the thesis profile carries no Tank commands",
    "free_look": "Free Look refused: the thesis profile carries no Free Look commands",
    "linear": "Linear refused: the thesis profile carries no linear drive",
    "arm": "Arm refused: the thesis profile carries no arm commands",
    "autonomy": "Dispose refused: the thesis profile carries no mode changes",
    "goal": "click-to-go refused: the thesis profile carries no goals",
}
#: s a robot's standing refusal holds without being said again (it says it every 2 s)
STANDING_HOLD = 5.0
#: s the page shows the newest refusal of what the operator asked for
REFUSAL_SHOWN = 10.0


class RecentRate:
    """Events per second over the last ``window`` s; the caller gives each event's time."""

    def __init__(self, window: float = 2.0, most: int = 4096) -> None:
        self.window = window
        self._times: deque[float] = deque(maxlen=most)

    def add(self, now: float) -> None:
        self._times.append(now)

    def rate(self, now: float) -> float:
        while self._times and now - self._times[0] > self.window:
            self._times.popleft()
        return len(self._times) / self.window


class StationCore(_Inputs):
    """One operator station for one robot, without I/O."""

    def __init__(
        self,
        config: RobotConfig,
        world: World | None,
        session: LinkSession,
        *,
        station: int = OPERATOR_STATION,
        authority: int = 10,
        native: bool = True,
        known_maps: Callable[[str], World | None] | None = None,
    ) -> None:
        """``known_maps(name)``: a built-in world by name (the robot may announce one)."""
        self.config = config
        self.session = session
        self.station = station
        self.authority = authority
        self.native = native  # the native profile carries control requests and mode changes
        limits = config.limits
        #: what a full deflection of each drive axis asks of this robot (the page's message
        #: is read into the link's command with them: :func:`parse_browser_message`)
        self.scales = StickScales.of(config)
        self.keyboard = KeyboardDrive(
            limits.keyboard_speed_step,
            math.radians(limits.keyboard_turn_step_deg),
            limits.max_speed,
            math.radians(limits.max_turn_rate_deg),
        )
        #: the trajectories started from the page (:mod:`._trajectories`)
        self.paths = Trajectories(config)
        self.clearance = Clearance(world)
        #: the robot's map: announced by digest, kept when this end has it, else fetched
        self.maps = MapReceiver(world, known_maps)
        self.drive_command: Message | None = None
        self._held_since: float | None = None  # when the page last sent a held, non-zero input
        #: after the session re-opened: moving inputs wait until the operator lets go
        self.needs_release = False
        self.reopened_at: float | None = None
        self.inputs_held_back = 0
        self.held_inputs_expired = 0  # held inputs the page stopped repeating (stopped here)
        #: the arm's jogs and the 3-D view's boxes (a robot with an arm)
        self.arm = ArmJog.from_config(config.arm) if config.arm is not None else None
        self.gripper_command: GripperCommand | None = None  # repeated with the arm's jogs
        self.estop = False
        self.telemetry: Telemetry | None = None
        self.position: PositionReport | None = None
        self.last_rx: float | None = None
        self.report_rx: float | None = None  # when the robot's newest report came in
        self.video_rx: float | None = None  # when the newest driving-camera frame came in
        #: telemetry reports and driving-camera frames per second: what the robot sends, each
        #: counted whole (a frame is many packets on the wire)
        self.telemetry_rate = RecentRate()
        self.video_rate = RecentRate()
        self.in_control = False
        self.robot_tx_enabled = True
        self.robot_tx_spacing = config.link.robot_tx_spacing
        self.painted: list[tuple[float, float]] = []  # (render stamp, paint report time)
        self.browsers = 0
        self._beats = 0
        #: whether this station drives (asks for control) or only watches (a fleet's other
        #: robots: telemetry in, a heartbeat now and then to keep its session)
        self.driving = True
        self.refused_control = False  # the robot said no to this station's last request
        #: the modes the robot said it never enters: its mode → (why, when it last said so)
        self.standing: dict[Mode, tuple[str, float]] = {}
        #: the newest refusal of what this station asked for: (page mode, why, when)
        self.refusal: tuple[str, str, float] | None = None
        self.inputs_held_by_estop = 0  # moving inputs not sent while this station's stop held
        #: where the robot is now, from its last report and the drive commands sent since
        self.predictor = MotionPredictor(config)
        #: click-to-go: the goal this station sent, and what became of it
        self.goal = StationGoal(config)

    # -- what the robot says -----------------------------------------------------------------

    @property
    def robot_mode(self) -> Mode | None:
        """The robot's drive mode, as its telemetry reports it (None before any)."""
        return self.telemetry.mode if self.telemetry is not None else None

    def unoffered(self, now: float) -> dict[str, str]:
        """The page's modes this station does not offer, each with why: what the wire profile
        cannot carry, and what the robot said it never enters (while it keeps saying so)."""
        out = {} if self.native else dict(THESIS_LACKS)
        if self.arm is None:
            out["arm"] = "Arm refused: this robot's description has no arm"
        for mode, (why, said) in list(self.standing.items()):
            if now - said > STANDING_HOLD:
                del self.standing[mode]  # no longer said: the robot enters it again
            elif mode in _PAGE_MODE:
                out.setdefault(_PAGE_MODE[mode], why)
        return out

    def refusal_shown(self, now: float) -> dict[str, object] | None:
        """The newest refusal for the page while it is recent (mode, reason, age in s)."""
        if self.refusal is None or now - self.refusal[2] > REFUSAL_SHOWN:
            return None
        mode, why, at = self.refusal
        return {"mode": mode, "reason": why, "age": round(max(0.0, now - at), 2)}

    @property
    def robot_map(self) -> World | None:
        """The map the robot announced, once this end holds it."""
        return self.maps.world

    def on_link_message(self, message: Message, now: float) -> World | None:
        """Take what the robot said; returns the robot's map when this message completed it."""
        self.last_rx = now
        if isinstance(message, Telemetry | PositionReport):
            self.report_rx = now
            self.telemetry_rate.add(now)
        if isinstance(message, Telemetry):
            self.telemetry = message
            self.predictor.observe(message, now, self.robot_offset)
            if self.arm is not None and message.arm is not None:
                self.arm.observe(message.arm)
            self.paths.follow_robot(message, now)
            self.goal.follow(message, now, self.session.clock.round_trip)
        elif isinstance(message, PositionReport):
            self.position = message
        elif isinstance(message, ControlGrant):
            # on a shared bus the robot's grants to other stations reach this one too: they
            # say who holds it, and leave this station's refusal standing
            self.in_control = message.station == self.station
            if self.in_control:
                self.refused_control = False
        elif isinstance(message, ControlReject) and message.station == self.station:
            self.in_control = False
            self.refused_control = True
        elif isinstance(message, ModeRefusal) and message.station in (0, self.station):
            if message.standing:
                self.standing[message.mode] = (message.reason, now)
            else:
                mode = _PAGE_MODE.get(message.mode, message.mode.name.lower())
                self.refusal = (mode, message.reason, now)
                if message.mode == Mode.GOAL:
                    self.goal.refused(message.reason, now)
        elif isinstance(message, MapInfo | MapChunk):
            robot_map = (
                self.maps.on_info(message)
                if isinstance(message, MapInfo)
                else self.maps.on_chunk(message)
            )
            if robot_map is not None:
                self.clearance = Clearance(robot_map)  # plan in the map the robot drives by
            return robot_map
        return None

    @property
    def robot_offset(self) -> float | None:
        """The robot's clock minus this core's (s; None before the link's first exchange)."""
        offset = self.session.clock.offset
        return None if offset is None else offset + self.session.wire_offset

    def handle(self, request: BrowserInput, now: float, wall_time: float) -> list[Message]:
        """One browser input; returns the messages to send at once (the predictor hears of
        each drive command among them)."""
        out = super().handle(request, now, wall_time)
        self.goal.took_over(out, now)  # a stick, a key, the e-stop: the goal ends
        for message in out:
            self.predictor.sent(message, now)
        return out

    def start(self) -> list[Message]:
        """What a station sends first: a control request (native), or "set Tx start"."""
        if self.native and not self.driving:
            return [Heartbeat()]
        return [
            ControlRequest(self.station, self.authority) if self.native else SetTransmission(True)
        ]

    def drive(self) -> list[Message]:
        """Take this robot to drive: ask for control (the robot may refuse: someone holds it)."""
        self.driving = True
        self.refused_control = False
        return [ControlRequest(self.station, self.authority)] if self.native else []

    def watch(self) -> list[Message]:
        """Only watch this robot from now on: stop, and let go of control."""
        was = self.driving
        self.driving = False
        self.drive_command = None
        self.gripper_command = None
        self.paths.operator = None
        self.in_control = False
        if not was or not self.native:
            return []
        return [VelocityCommand(0.0, 0.0), ControlRelease(self.station)]

    # -- browsers ----------------------------------------------------------------------------

    def attach(self) -> None:
        self.browsers += 1
        self.session.transmitting = True

    def detach(self) -> None:
        self.browsers = max(0, self.browsers - 1)
        if self.browsers == 0:
            # the last browser went away: stop sending, and the robot's watchdog stops it
            self.drive_command = None
            self.gripper_command = None
            self.paths.operator = None
            self.session.transmitting = False

    def session_reopened(self, now: float) -> None:
        """The session with the robot opened again (the robot restarted, or the link came
        back): nothing held from before is sent again, and a moving input counts only once the
        operator has let go of it (a stick or keys at rest, or a new key press)."""
        self.drive_command = None
        self.gripper_command = None
        self.paths.operator = None
        self._held_since = None
        self.keyboard.v = self.keyboard.omega = 0.0
        self.needs_release = True
        self.reopened_at = now

    # -- each transmission -------------------------------------------------------------------

    def reference_now(self, now: float) -> tuple[float, float, float, float, float] | None:
        """The reference of the trajectory running at ``now`` (None when none runs)."""
        return self.paths.reference_now(now)

    @property
    def reference_path(self) -> list[list[float]]:
        """The points of the newest trajectory, for the page."""
        return self.paths.reference_path

    @property
    def robot_path(self) -> RunningPath | None:
        """The trajectory sent to the robot, while it runs or may yet start."""
        return self.paths.robot

    def periodic(self, now: float) -> list[Message]:
        """What the station re-sends at its spacing: the newest command (or a heartbeat), and
        a control request now and then (native)."""
        self._beats += 1
        if not self.driving:
            beat = self._beats % WATCH_BEAT == 1
            return [*([Heartbeat()] if beat else []), *self.maps.requests(now)]
        self._track(now)
        self._expire_held_input(now)
        out: list[Message] = [self.drive_command or Heartbeat()]
        if isinstance(self.drive_command, ArmVelocityCommand) and self.gripper_command:
            out.append(self.gripper_command)  # the robot's watchdog holds the fingers otherwise
        if self.native and self._beats % CONTROL_RENEWAL == 0:
            out.append(ControlRequest(self.station, self.authority))
        if self.native and self.robot_tx_enabled and self._beats % REPORT_BEATS == 0:
            out.append(self.reception(now))  # (with the robot's transmission off: blind by choice)
        out.extend(self.maps.requests(now))  # the robot's map, while this end lacks it
        for message in out:
            self.predictor.sent(message, now)
        return out

    def frame_received(self, now: float) -> None:
        """A complete frame of the driving camera came in."""
        self.video_rx = now
        self.video_rate.add(now)

    def reception(self, now: float) -> ReceptionReport:
        """What this station sees of the robot, for the robot to judge whether its driver is
        blind (never heard: the longest the wire carries)."""
        if self.report_rx is None:
            overdue = MAX_AGE
        else:
            overdue = min(MAX_AGE, max(0.0, now - self.report_rx - self.robot_tx_spacing))
        video_age = (
            MAX_AGE if self.video_rx is None else min(MAX_AGE, max(0.0, now - self.video_rx))
        )
        loss = min(100.0, self.session.stats.report(now).drop_percent)
        return ReceptionReport(overdue, video_age, loss)

    def _expire_held_input(self, now: float) -> None:
        """A held input the page stopped repeating becomes a stop of the same kind."""
        since = self._held_since
        if since is None or now - since <= HELD_INPUT_TIMEOUT:
            return
        self._held_since = None
        command = self.drive_command
        if isinstance(command, TankCommand):
            self.drive_command = TankCommand(0.0, 0.0)
        elif isinstance(command, FreeLookCommand):
            self.drive_command = FreeLookCommand(0.0, 0.0, 0.0)
        elif isinstance(command, ArmVelocityCommand):
            self.drive_command = ArmVelocityCommand((0.0,) * len(command.velocities))
        else:
            return
        self.held_inputs_expired += 1

    def _track(self, now: float) -> None:
        """One step of operator-side trajectory tracking on the newest telemetry."""
        if self.telemetry is None:
            return
        command = self.paths.track(now, self.telemetry.pose)
        if command is not None:
            self.drive_command = command
