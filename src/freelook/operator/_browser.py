"""The browser protocol: JSON messages from a cockpit page, validated into typed inputs.

A page may be careless or hostile, so every field is checked here, once: unknown kinds and
malformed fields are refused (``None``) rather than guessed, numbers must be finite, axes are
clamped to [−1, 1], waypoint and joint lists are bounded. A message that is well formed but
asks for something that cannot be done raises :class:`RefusedInputError` with the reason. The
station core only ever sees these types.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

from freelook.link import MAX_STREAMS

__all__ = [
    "ArmJogRequest",
    "Axes",
    "BrowserInput",
    "EStopRequest",
    "GripperRequest",
    "KeyPress",
    "KeyframeRequest",
    "LinearRequest",
    "Painted",
    "RefusedInputError",
    "RelocalizeRequest",
    "SelectMode",
    "TrajectoryRequest",
    "TransmissionRequest",
    "VideoSupport",
    "parse_browser_message",
]

MAX_WAYPOINTS = 100
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
class Axes:
    """Stick or WASD/mouse deflections in [−1, 1], for Tank or Free Look."""

    mode: Literal["tank", "free_look"]
    forward: float = 0.0
    left: float = 0.0
    turn: float = 0.0
    pan: float = 0.0
    tilt: float = 0.0


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
    Axes
    | KeyPress
    | SelectMode
    | EStopRequest
    | RelocalizeRequest
    | LinearRequest
    | TrajectoryRequest
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


def parse_browser_message(message: Any) -> BrowserInput | None:
    """The typed input ``message`` asks for, or None when it is unknown or malformed.

    Raises :class:`RefusedInputError` when it is well formed but cannot be done.
    """
    if not isinstance(message, dict):
        return None
    kind = message.get("type")
    if kind == "axes":
        mode = message.get("mode", "free_look")
        return Axes(
            "tank" if mode == "tank" else "free_look",
            *(_axis(message, name) for name in ("forward", "left", "turn", "pan", "tilt")),
        )
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
