"""Command intake (sans-I/O): who may say what, and whether its numbers can be acted on.

A message is taken once (:meth:`CommandIntake.take`), by its row of the command table
(:data:`~freelook.robot._mode_table.COMMANDS`; a message without a row is refused), and
passes, in order: the station's permissions (from its key: an observer commands nothing, and
only its allowed modes run), then, for what needs control, its expiry, control arbitration (a
station speaks only for itself, with the authority it was given, and must hold control to
command anything but an e-stop) and a check that every number is finite. Drive and camera
commands are then scaled to the robot's own configured limits, direction kept. What is refused
is written down in the :class:`CoreLog`, never raised.
"""

from __future__ import annotations

import math
from collections import Counter, deque
from collections.abc import Callable
from enum import Enum
from typing import TYPE_CHECKING, NamedTuple

from freelook.config import RobotConfig
from freelook.control import limit_velocity
from freelook.hal import scale_within
from freelook.link import (
    EXPIRING_COMMANDS,
    ControlArbiter,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    FreeLookCommand,
    Message,
    PanTiltCommand,
    Permissions,
    RejectReason,
    TankCommand,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.safety import SafetyEvent
from freelook.types import Mode

if TYPE_CHECKING:
    from freelook.robot._mode_table import Row

__all__ = [
    "ANY_STATION",
    "DEFAULT_AUTHORITY",
    "CameraRates",
    "CommandIntake",
    "CommandLimits",
    "CoreLog",
    "Refusal",
    "Who",
]

#: the sender on a link without stations (the thesis profile)
ANY_STATION = 0
DEFAULT_AUTHORITY = 10


class Who(Enum):
    """Who may send a message, as the intake judges it (a station's key and control)."""

    ANYONE = "any station, an observer too; control is not needed"
    ANYONE_HEARD_FROM_HOLDER = "any station, an observer too; heard from the one in control"
    STATION = "any station but an observer; control is not needed"
    STOPPER = "the station in control; to engage the e-stop, any station but an observer"
    HOLDER = "the station in control (never an observer)"
    DRIVER = "the station in control, its key allowing the mode the message selects"

    @property
    def observers(self) -> bool:
        """Whether an observer's key may send it."""
        return self in (Who.ANYONE, Who.ANYONE_HEARD_FROM_HOLDER)


class Refusal(NamedTuple):
    """A mode refused to a station, and why (the station is told)."""

    mode: Mode
    why: str


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

    def within(self, message: Message) -> Message:
        """The drive or camera command within the limits (any other message as it is)."""
        limits = self.config.limits
        v_max, w_max = limits.max_speed, math.radians(limits.max_turn_rate_deg)
        if isinstance(message, VelocityCommand):
            return VelocityCommand(*limit_velocity(message.v, message.omega, v_max, w_max))
        if isinstance(message, TankCommand):
            v, omega = limit_velocity(message.v, message.omega, v_max, w_max)
            pan, tilt = self.camera(message.pan_rate, message.tilt_rate)
            return TankCommand(v, omega, pan, tilt)
        if isinstance(message, WheelSpeedCommand):
            peak = max(abs(message.left), abs(message.right))
            turn = (message.right - message.left) / self.config.drive.d_eff
            s = scale_within((peak, turn), (v_max, w_max))
            return WheelSpeedCommand(message.left * s, message.right * s)
        if isinstance(message, FreeLookCommand):
            # the camera's motion is the Free Look controller's to keep within the limits
            _, tilt = self.camera(0.0, message.tilt_rate)
            if tilt == message.tilt_rate:
                return message  # as it came: no second copy of the command
            return FreeLookCommand(message.v1, message.v2, message.omega, tilt)
        if isinstance(message, PanTiltCommand):
            return PanTiltCommand(*self.camera(message.pan_rate, message.tilt_rate))
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


def _not_permitted(message: Message, row: Row, permissions: Permissions) -> str | None:
    """Why a station with ``permissions`` may not send ``message`` (None: it may)."""
    if row.who.observers:
        return None
    if permissions.observer:
        return f"an observer may not send {type(message).__name__}"
    mode = row.asks(message)
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

    def __init__(self, config: RobotConfig, arbitration_timeout: float, log: CoreLog) -> None:
        self.arbiter = ControlArbiter(arbitration_timeout)
        self.log = log
        self.limits = CommandLimits(config)
        #: the authority each station is given (its key's; one shared key: all equal)
        self._authorities: dict[int, int] = {}
        self.authority_of: Callable[[int], int] = lambda station: self._authorities.get(
            station, DEFAULT_AUTHORITY
        )

    def take(
        self,
        message: Message,
        row: Row | None,
        now: float,
        station: int,
        permissions: Permissions | None,
        expires: float | None,
    ) -> Message | Refusal | None:
        """``message`` from ``station`` (its ``row`` of the command table) as the robot acts
        on it, within its limits; or None, refused and counted; or a refusal the station is
        told. ``permissions`` (the station's key; it also sets the station's authority), and
        ``expires`` (this robot's clock): see :meth:`RobotCore.handle`."""
        if permissions is not None:
            self._authorities[station] = permissions.authority
        name = type(message).__name__
        if row is None:  # a message with no row in the table: never ignored unsaid
            line = f"{name} from station {station} refused: not a message this robot takes"
            self.log.refuse(line, dropped=True)
            self.log.notice(f"refused {line}", kind=f"{station} {name}")
            return None
        if permissions is not None:
            refusal = _not_permitted(message, row, permissions)
            if refusal is not None:
                line = f"station {station}: {refusal}"
                self.log.refuse(line, dropped=True)
                self.log.notice(f"refused {line}", kind=f"{station} {name}")
                mode = row.asks(message)
                if mode is None or permissions.observer or permissions.allows_mode(mode):
                    return None
                mode_name = mode.name.replace("_", " ").capitalize()
                return Refusal(mode, f"{mode_name} refused: this station's key does not allow it")
        if not row.needs_control(message):
            return message
        if expires is not None and now > expires and type(message) in EXPIRING_COMMANDS:
            self.log.late_commands += 1
            line = f"{name} from station {station} {now - expires:.3f} s late"
            self.log.refuse(line)
            self.log.notice(f"refused {line}", kind=f"{station} late")
            return None
        if not self._admitted(message, now, station):
            return None
        return self.limits.within(message)

    def _admitted(self, message: Message, now: float, station: int) -> bool:
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
