"""Command intake (sans-I/O): who may say what, and whether its numbers can be acted on.

A message passes, in order: the station's permissions (from its key: an observer commands
nothing, and only its allowed modes run), control arbitration (a station speaks only for
itself, with the authority it was given, and must hold control to command anything but an
e-stop), then a check that every number is finite. Drive and camera commands are scaled to the
robot's own configured limits, direction kept. What is refused is written down in the
:class:`CoreLog`, never raised.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable
from typing import NamedTuple

from freelook.config import RobotConfig
from freelook.control import limit_velocity
from freelook.link import (
    ArmVelocityCommand,
    ControlArbiter,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    FreeLookCommand,
    GripperCommand,
    Heartbeat,
    LinearDriveStart,
    Message,
    ModeChange,
    Permissions,
    ReceptionReport,
    RejectReason,
    TankCommand,
    TrajectoryStart,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.safety import SafetyEvent
from freelook.types import Mode

__all__ = [
    "ANY_STATION",
    "DEFAULT_AUTHORITY",
    "CameraRates",
    "CommandIntake",
    "CommandLimits",
    "CoreLog",
    "asked_mode",
]

#: the sender on a link without stations (the thesis profile)
ANY_STATION = 0
DEFAULT_AUTHORITY = 10

#: the mode each command asks for, as a station's permissions judge it
_ASKS_FOR: dict[type, Mode] = {
    VelocityCommand: Mode.VELOCITY,
    WheelSpeedCommand: Mode.WHEELS,
    TankCommand: Mode.TANK,
    FreeLookCommand: Mode.FREE_LOOK,
    ArmVelocityCommand: Mode.ARM,
    GripperCommand: Mode.ARM,
    LinearDriveStart: Mode.LINEAR,
    TrajectoryStart: Mode.TRAJECTORY,
}


class CoreLog:
    """What the core refused and what happened, for the operator and the tests to read, and
    the lines worth the robot's log (:attr:`notices`, for the program around the core to
    write out)."""

    def __init__(self) -> None:
        self.rejections: list[str] = []
        self.dropped_commands = 0
        #: commands that arrived after their expiry: refused, never executed
        self.late_commands = 0
        #: safety and control events, the newest 200 kept by the control cycle
        self.events: list[SafetyEvent] = []
        #: lines for the robot's log, oldest first, until the program takes them
        self.notices: deque[str] = deque(maxlen=64)
        self._said: Counter[str] = Counter()

    def refuse(self, why: str, *, dropped: bool = False) -> None:
        """A command refused, and why; ``dropped``: it also counts as a dropped command."""
        self.rejections.append(why)
        if dropped:
            self.dropped_commands += 1

    def notice(self, line: str, *, kind: str | None = None) -> None:
        """A line for the robot's log. Lines of one ``kind`` (a station's refusals of one
        message type) go out the 1st, 10th, 100th… time, with the count: a flood of them
        cannot fill the log."""
        if kind is not None:
            self._said[kind] += 1
            count = self._said[kind]
            if count != 10 ** (len(str(count)) - 1):
                return
            if count > 1:
                line = f"{line} ({count} times)"
        self.notices.append(line)


class CameraRates(NamedTuple):
    """Pan and tilt rates (rad/s)."""

    pan: float
    tilt: float


class CommandLimits:
    """Commands scaled to this robot's own configured limits, direction kept."""

    def __init__(self, config: RobotConfig) -> None:
        self.config = config

    def drive(self, message: Message) -> Message:
        """The drive command within the mode limits (any other message as it is)."""
        limits = self.config.limits
        v_max, w_max = limits.max_speed, math.radians(limits.max_turn_rate_deg)
        if isinstance(message, VelocityCommand):
            return VelocityCommand(*limit_velocity(message.v, message.omega, v_max, w_max))
        if isinstance(message, TankCommand):
            v, omega = limit_velocity(message.v, message.omega, v_max, w_max)
            pan, tilt = self.camera(message.pan_rate, message.tilt_rate)
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
            _, tilt = self.camera(0.0, message.tilt_rate)
            return FreeLookCommand(message.v1 * s, message.v2 * s, message.omega * s, tilt)
        return message

    def camera(self, pan: float, tilt: float) -> CameraRates:
        """Camera rates within the pan-tilt unit's (zero without one)."""
        pt = self.config.pan_tilt
        if pt is None:
            return CameraRates(0.0, 0.0)
        tilt_max = math.radians(pt.max_tilt_rate_deg)
        return CameraRates(
            max(-pt.max_pan_rate, min(pt.max_pan_rate, pan)),
            max(-tilt_max, min(tilt_max, tilt)),
        )


def asked_mode(message: Message) -> Mode | None:
    """The mode ``message`` asks for, as a station's permissions judge it (None: no mode)."""
    return message.mode if isinstance(message, ModeChange) else _ASKS_FOR.get(type(message))


def _not_permitted(message: Message, permissions: Permissions) -> str | None:
    """Why a station with ``permissions`` may not send ``message`` (None: it may)."""
    if isinstance(message, Heartbeat | ControlRelease | ReceptionReport):
        return None
    if permissions.observer:
        return f"an observer may not send {type(message).__name__}"
    mode = asked_mode(message)
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


class CommandIntake:
    """Permissions, control arbitration and sound numbers for every message in."""

    def __init__(self, arbitration_timeout: float, log: CoreLog) -> None:
        self.arbiter = ControlArbiter(arbitration_timeout)
        self.log = log
        #: the authority each station is given (its key's; one shared key: all equal)
        self._authorities: dict[int, int] = {}
        self.authority_of: Callable[[int], int] = lambda station: self._authorities.get(
            station, DEFAULT_AUTHORITY
        )

    def permitted(self, message: Message, station: int, permissions: Permissions) -> bool:
        """Whether the station's key allows ``message`` (it also sets the station's
        authority from the key)."""
        self._authorities[station] = permissions.authority
        refusal = _not_permitted(message, permissions)
        if refusal is not None:
            line = f"station {station}: {refusal}"
            self.log.refuse(line, dropped=True)
            self.log.notice(f"refused {line}", kind=f"{station} {type(message).__name__}")
            return False
        return True

    def admitted(self, message: Message, now: float, station: int) -> bool:
        """Whether the sender may command now (it holds control, or a link without stations
        speaks while nobody holds it) and the message's numbers are finite."""
        if (station != ANY_STATION or self.arbiter.holder(now) is not None) and (
            not self.arbiter.admit(station, now)
        ):
            self.log.dropped_commands += 1
            return False
        problem = _invalid(message)
        if problem is not None:
            self.log.refuse(f"{type(message).__name__} refused: {problem}")
            return False
        return True

    def control(
        self, message: ControlRequest | ControlRelease, now: float, station: int
    ) -> list[Message]:
        """A request for control, or its release; returns the grant or the rejection."""
        if station != ANY_STATION and message.station != station:
            self.log.refuse(f"station {station} spoke for station {message.station}: refused")
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
            self.log.events.append(
                SafetyEvent(
                    now,
                    "control",
                    f"station {message.station} (authority {authority}) took control "
                    f"from station {decision.previous}",
                )
            )
        return [ControlGrant(message.station, authority)]
