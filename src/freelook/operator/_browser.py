"""The browser protocol: JSON messages from a cockpit page, validated into typed inputs.

A page may be careless or hostile, so every field is checked here, once: unknown kinds and
malformed fields are refused (``None``) rather than guessed, numbers must be finite, stick
deflections are read within their range [−1, 1], waypoint and joint lists are bounded. That
is validation, not a limit: the robot applies its own limits to what it is sent. A message that
is well formed but asks for something that cannot be done raises :class:`RefusedInputError`
with the reason. The station core only ever sees these types; the drive axes of Free Look and
Tank are read straight into the link's command (:class:`~freelook.link.FreeLookCommand`,
:class:`~freelook.link.TankCommand`), each deflection times what a full one asks of this robot
(:class:`StickScales`: feel, not safety).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from freelook.config import RobotConfig
from freelook.link import MAX_STREAMS, FreeLookCommand, TankCommand

__all__ = [
    "ArmJogRequest",
    "BrowserInput",
    "DriveAxes",
    "EStopRequest",
    "GoalRequest",
    "GripperRequest",
    "KeyPress",
    "KeyframeRequest",
    "LinearRequest",
    "Painted",
    "RefusedInputError",
    "RelocalizeRequest",
    "SelectMode",
    "StickScales",
    "TrajectoryRequest",
    "TransmissionRequest",
    "VideoSupport",
    "parse_browser_message",
]

MAX_WAYPOINTS = 100
MAX_COORDINATE = 1e6  # m: the farthest map coordinate the wire carries
MAX_JOINTS = 16
DriveMode = Literal["keyboard", "tank", "free_look", "linear", "trajectory", "arm", "autonomy"]
_MODES: tuple[DriveMode, ...] = (
    "keyboard", "tank", "free_look", "linear", "trajectory", "arm", "autonomy",
)  # fmt: skip
KeyName = Literal["up", "down", "left", "right", "space"]
_KEYS: tuple[KeyName, ...] = ("up", "down", "left", "right", "space")


class RefusedInputError(ValueError):
    """A well-formed browser message that asks for what cannot be done; says why."""


@dataclass(frozen=True, slots=True)
class StickScales:
    """What a full deflection of each stick axis asks of one robot: its configured speed
    (m/s), turn rate, pan and tilt rates (rad/s). The axes are shaped for feel; the robot
    keeps every command within its limits itself."""

    speed: float
    turn: float
    pan: float
    tilt: float

    @classmethod
    def of(cls, config: RobotConfig) -> StickScales:
        """The scales of the robot ``config`` describes (no camera rates without a pan-tilt)."""
        limits, pt = config.limits, config.pan_tilt
        return cls(
            limits.max_speed,
            math.radians(limits.max_turn_rate_deg),
            pt.max_pan_rate if pt else 0.0,
            math.radians(pt.max_tilt_rate_deg) if pt else 0.0,
        )


#: the drive axes of Free Look and Tank, as the link carries them
DriveAxes = FreeLookCommand | TankCommand


@dataclass(frozen=True, slots=True)
class ArmJogRequest:
    """Jog the arm: one deflection in [−1, 1] per joint (joint by joint), or a direction of
    the tool point (x forward, y left, z up; each in [−1, 1]) when ``cartesian`` is set."""

    joints: tuple[float, ...] = ()
    cartesian: tuple[float, float, float] | None = None


@dataclass(frozen=True, slots=True)
class GripperRequest:
    """Open the fingers to ``fraction`` of their widest (0 closed, 1 open)."""

    fraction: float


@dataclass(frozen=True, slots=True)
class KeyPress:
    """One press of the thesis's keyboard mode."""

    key: KeyName


@dataclass(frozen=True, slots=True)
class SelectMode:
    mode: DriveMode


@dataclass(frozen=True, slots=True)
class EStopRequest:
    engaged: bool


@dataclass(frozen=True, slots=True)
class RelocalizeRequest:
    pass


@dataclass(frozen=True, slots=True)
class LinearRequest:
    start: bool
    x0: float = 0.0
    x1: float = 3.0


@dataclass(frozen=True, slots=True)
class TrajectoryRequest:
    start: bool
    preset: Literal["ellipse", "waypoints"] = "ellipse"
    waypoints: tuple[tuple[float, float], ...] = ()
    side: Literal["robot", "operator"] = "robot"


@dataclass(frozen=True, slots=True)
class GoalRequest:
    """Click-to-go: drive on its own to (x, y) on the map (m); ``start`` False: stop it."""

    start: bool
    x: float = 0.0
    y: float = 0.0


@dataclass(frozen=True, slots=True)
class TransmissionRequest:
    side: Literal["robot", "operator"]
    enabled: bool | None = None
    spacing: float | None = None  # s


@dataclass(frozen=True, slots=True)
class Painted:
    """The page painted the frame rendered at ``stamp`` (wall-clock s)."""

    stamp: float


@dataclass(frozen=True, slots=True)
class KeyframeRequest:
    """The page's decoder of camera ``stream`` lost its place: it needs a keyframe."""

    stream: int


@dataclass(frozen=True, slots=True)
class VideoSupport:
    """Whether the page decodes inter-frame video itself (WebCodecs); without, it gets JPEG."""

    decoder: bool


BrowserInput = (
    FreeLookCommand
    | TankCommand
    | KeyPress
    | SelectMode
    | EStopRequest
    | RelocalizeRequest
    | LinearRequest
    | TrajectoryRequest
    | GoalRequest
    | TransmissionRequest
    | Painted
    | ArmJogRequest
    | GripperRequest
    | KeyframeRequest
    | VideoSupport
)


def _number(value: Any) -> float | None:
    """A finite number, or None (bools, strings, NaN and infinities are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = float(value)
    return number if math.isfinite(number) else None


def _axis(message: dict[str, Any], name: str) -> float:
    """A stick deflection read within the stick's range [−1, 1] (none: not a finite number).
    Validation of the page's message, not a limit: the robot's limits are the robot's."""
    value = _number(message.get(name, 0.0))
    return 0.0 if value is None else max(-1.0, min(1.0, value))


def _waypoints(raw: Any) -> tuple[tuple[float, float], ...] | None:
    if not isinstance(raw, list) or len(raw) > MAX_WAYPOINTS:
        return None
    points = []
    for item in raw:
        if not isinstance(item, list | tuple) or len(item) != 2:
            return None
        x, y = _number(item[0]), _number(item[1])
        if x is None or y is None:
            return None
        points.append((x, y))
    return tuple(points)


def _drive_axes(message: dict[str, Any], scales: StickScales) -> DriveAxes:
    """The page's drive axes as the link's command for its mode (Tank, else Free Look)."""
    forward, turn, tilt = _axis(message, "forward"), _axis(message, "turn"), _axis(message, "tilt")
    if message.get("mode", "free_look") == "tank":
        pan = _axis(message, "pan")
        return TankCommand(
            forward * scales.speed, turn * scales.turn, pan * scales.pan, tilt * scales.tilt
        )
    left = _axis(message, "left")
    return FreeLookCommand(
        forward * scales.speed, left * scales.speed, turn * scales.turn, tilt * scales.tilt
    )


def parse_browser_message(message: Any, scales: StickScales) -> BrowserInput | None:
    """The typed input ``message`` asks for, or None when it is unknown or malformed; drive
    axes are read into commands with ``scales`` (the robot's: :meth:`StickScales.of`).

    Raises :class:`RefusedInputError` when it is well formed but cannot be done.
    """
    if not isinstance(message, dict):
        return None
    kind = message.get("type")
    if kind == "axes":
        return _drive_axes(message, scales)
    if kind == "key":
        key = message.get("key")
        return KeyPress(key) if key in _KEYS else None
    if kind == "mode":
        mode = message.get("mode")
        return SelectMode(mode) if mode in _MODES else None
    if kind == "estop":
        return EStopRequest(bool(message.get("engaged")))
    if kind == "relocalize":
        return RelocalizeRequest()
    if kind == "linear":
        if message.get("action") != "start":
            return LinearRequest(False)
        x0, x1 = _number(message.get("x0", 0.0)), _number(message.get("x1", 3.0))
        if x0 is None or x1 is None:
            return None
        if x0 == x1:
            raise RefusedInputError(
                f"linear drive needs two different points (both at x = {x0:g} m)"
            )
        return LinearRequest(True, x0, x1)
    if kind == "trajectory":
        return _trajectory(message)
    if kind == "goal":
        return _goal(message)
    if kind == "transmission":
        return _transmission(message)
    if kind == "arm":
        return _arm(message)
    if kind == "gripper":
        fraction = _number(message.get("open"))
        return None if fraction is None else GripperRequest(max(0.0, min(1.0, fraction)))
    if kind == "keyframe":
        stream = message.get("stream")
        if isinstance(stream, bool) or not isinstance(stream, int):
            return None
        return KeyframeRequest(stream) if 0 <= stream < MAX_STREAMS else None
    if kind == "video":
        decoder = message.get("decoder")
        return VideoSupport(decoder) if isinstance(decoder, bool) else None
    if kind == "painted":
        stamp = _number(message.get("stamp"))
        return None if stamp is None else Painted(stamp)
    return None


def _deflections(raw: Any, most: int) -> tuple[float, ...] | None:
    """At most ``most`` finite numbers, each clamped to [−1, 1]; None otherwise."""
    if not isinstance(raw, list) or len(raw) > most:
        return None
    values = [_number(item) for item in raw]
    if any(v is None for v in values):
        return None
    return tuple(max(-1.0, min(1.0, v)) for v in values if v is not None)


def _arm(message: dict[str, Any]) -> ArmJogRequest | None:
    if "cartesian" in message:
        direction = _deflections(message["cartesian"], 3)
        if direction is None or len(direction) != 3:
            return None
        return ArmJogRequest(cartesian=(direction[0], direction[1], direction[2]))
    joints = _deflections(message.get("joints"), MAX_JOINTS)
    return None if joints is None else ArmJogRequest(joints=joints)


def _trajectory(message: dict[str, Any]) -> TrajectoryRequest | None:
    if message.get("action") != "start":
        return TrajectoryRequest(False)
    side: Literal["robot", "operator"] = (
        "operator" if message.get("side") == "operator" else "robot"
    )
    if message.get("preset") != "waypoints":
        return TrajectoryRequest(True, "ellipse", (), side)
    points = _waypoints(message.get("waypoints") or [])
    return None if points is None else TrajectoryRequest(True, "waypoints", points, side)


def _goal(message: dict[str, Any]) -> GoalRequest | None:
    """A goal on the map (finite, within the wire's coordinates), or its stop."""
    if message.get("action") == "stop":
        return GoalRequest(False)
    x, y = _number(message.get("x")), _number(message.get("y"))
    if x is None or y is None or max(abs(x), abs(y)) > MAX_COORDINATE:
        return None
    return GoalRequest(True, x, y)


def _transmission(message: dict[str, Any]) -> TransmissionRequest | None:
    side = message.get("side")
    if side not in ("robot", "operator"):
        return None
    enabled = message.get("enabled")
    spacing_ms = _number(message.get("spacing_ms"))
    return TransmissionRequest(
        side,
        enabled if isinstance(enabled, bool) else None,
        spacing_ms / 1000 if spacing_ms is not None and spacing_ms > 0 else None,
    )
