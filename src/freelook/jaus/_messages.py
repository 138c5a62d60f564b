"""The JAUS messages the gateway speaks (AS5710 core, AS6009 mobility), sans-I/O.

Bodies are little-endian. Optional fields are announced by a presence vector (bit i: the
i-th optional field, in the record's order) and only present fields are on the wire. Real
values travel as scaled integers: an n-bit unsigned integer ``k`` stands for
``lower + k · (upper − lower) / (2ⁿ − 1)``; encoding rounds to the nearest step and clamps to
the range. Frames are JAUS's (x forward, y right, z down; yaw positive clockwise seen from
above): the codec speaks the standard's numbers, the gateway turns them into freelook's
(y left, counter-clockwise positive).
"""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

from freelook.jaus._judp import JudpError

__all__ = [
    "ConfirmControl",
    "ConfirmResponse",
    "JausMessage",
    "LocalPose",
    "QueryIdentification",
    "QueryLocalPose",
    "QueryVelocityState",
    "RejectControl",
    "RejectResponse",
    "ReleaseControl",
    "ReportIdentification",
    "ReportLocalPose",
    "ReportVelocityState",
    "RequestControl",
    "Scaled",
    "SetVelocityCommand",
    "SetWrenchEffort",
    "VelocityState",
    "decode_message",
    "encode_message",
]


@dataclass(frozen=True, slots=True)
class Scaled:
    """A JAUS scaled integer: ``fmt`` (struct code), the real range it spans."""

    fmt: str
    lower: float
    upper: float

    @property
    def size(self) -> int:
        return struct.calcsize("<" + self.fmt)

    @property
    def steps(self) -> int:
        return (1 << (8 * self.size)) - 1

    def encode(self, value: float) -> int:
        if not math.isfinite(value):
            raise JudpError(f"cannot scale a non-finite value {value}")
        clamped = min(self.upper, max(self.lower, value))
        return round((clamped - self.lower) / (self.upper - self.lower) * self.steps)

    def decode(self, k: int) -> float:
        return self.lower + k * (self.upper - self.lower) / self.steps


_PI = math.pi
#: AS6009 field types (as in the JAUS Tool Set's mobility message set)
POSITION = Scaled("I", -100_000.0, 100_000.0)  # m
POSITION_RMS = Scaled("I", 0.0, 100.0)  # m
ANGLE = Scaled("H", -_PI, _PI)  # rad
ANGLE_RMS = Scaled("H", 0.0, _PI)  # rad
VELOCITY = Scaled("I", -327.68, 327.67)  # m/s
VELOCITY_RMS = Scaled("I", 0.0, 100.0)  # m/s
RATE = Scaled("H", -32.768, 32.767)  # rad/s
RATE_RMS = Scaled("H", 0.0, _PI)  # rad/s
EFFORT = Scaled("H", -100.0, 100.0)  # percent of maximum, propulsive
RESISTIVE = Scaled("B", 0.0, 100.0)  # percent of maximum, resistive
TIMESTAMP = "I"  # bit field: ms 0–9, s 10–15, min 16–21, h 22–26, day 27–31


class ConfirmResponse(IntEnum):
    CONTROL_ACCEPTED = 0
    NOT_AVAILABLE = 1
    INSUFFICIENT_AUTHORITY = 2


class RejectResponse(IntEnum):
    CONTROL_RELEASED = 0
    NOT_AVAILABLE = 1


@dataclass(frozen=True, slots=True)
class RequestControl:
    authority: int
    CODE = 0x000D


@dataclass(frozen=True, slots=True)
class ReleaseControl:
    CODE = 0x000E


@dataclass(frozen=True, slots=True)
class ConfirmControl:
    response: ConfirmResponse
    CODE = 0x000F


@dataclass(frozen=True, slots=True)
class RejectControl:
    response: RejectResponse
    CODE = 0x0010


@dataclass(frozen=True, slots=True)
class QueryIdentification:
    query_type: int  # 1 system, 2 subsystem, 3 node, 4 component
    CODE = 0x2B00


@dataclass(frozen=True, slots=True)
class ReportIdentification:
    query_type: int
    type: int  # 10001 vehicle, 20001 OCU, 40001 node, 60001 component
    identification: str
    CODE = 0x4B00


@dataclass(frozen=True, slots=True)
class SetWrenchEffort:
    """Open-loop effort in percent of maximum; None: field absent."""

    propulsive_linear: tuple[float | None, float | None, float | None] = (None, None, None)
    propulsive_rotational: tuple[float | None, float | None, float | None] = (None, None, None)
    resistive: tuple[float | None, ...] = (None,) * 6
    CODE = 0x0405


@dataclass(frozen=True, slots=True)
class SetVelocityCommand:
    """Velocity (m/s, vehicle frame) and rates (rad/s); None: field absent."""

    command_type: int = 0  # 0 current command, 1 maximum, 2 minimum, 3 default
    velocity: tuple[float | None, float | None, float | None] = (None, None, None)
    rates: tuple[float | None, float | None, float | None] = (None, None, None)
    CODE = 0x0415


@dataclass(frozen=True, slots=True)
class QueryLocalPose:
    presence: int  # the fields wanted (ReportLocalPose's presence vector)
    CODE = 0x2403


@dataclass(frozen=True, slots=True)
class QueryVelocityState:
    presence: int
    CODE = 0x2404


@dataclass(frozen=True, slots=True)
class LocalPose:
    """x, y, z (m), position RMS (m), roll, pitch, yaw (rad), attitude RMS (rad), time stamp."""

    x: float | None = None
    y: float | None = None
    z: float | None = None
    position_rms: float | None = None
    roll: float | None = None
    pitch: float | None = None
    yaw: float | None = None
    attitude_rms: float | None = None
    timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class ReportLocalPose:
    pose: LocalPose
    CODE = 0x4403


@dataclass(frozen=True, slots=True)
class VelocityState:
    """Velocity x, y, z (m/s), velocity RMS, roll/pitch/yaw rates (rad/s), rate RMS, stamp."""

    vx: float | None = None
    vy: float | None = None
    vz: float | None = None
    velocity_rms: float | None = None
    roll_rate: float | None = None
    pitch_rate: float | None = None
    yaw_rate: float | None = None
    rate_rms: float | None = None
    timestamp: int | None = None


@dataclass(frozen=True, slots=True)
class ReportVelocityState:
    state: VelocityState
    CODE = 0x4404


JausMessage = (
    RequestControl
    | ReleaseControl
    | ConfirmControl
    | RejectControl
    | QueryIdentification
    | ReportIdentification
    | SetWrenchEffort
    | SetVelocityCommand
    | QueryLocalPose
    | QueryVelocityState
    | ReportLocalPose
    | ReportVelocityState
)

_POSE_FIELDS: tuple[Scaled | str, ...] = (
    POSITION,
    POSITION,
    POSITION,
    POSITION_RMS,
    ANGLE,
    ANGLE,
    ANGLE,
    ANGLE_RMS,
    TIMESTAMP,
)
_VELOCITY_FIELDS: tuple[Scaled | str, ...] = (
    VELOCITY,
    VELOCITY,
    VELOCITY,
    VELOCITY_RMS,
    RATE,
    RATE,
    RATE,
    RATE_RMS,
    TIMESTAMP,
)
_WRENCH_FIELDS: tuple[Scaled | str, ...] = (EFFORT,) * 6 + (RESISTIVE,) * 6
_COMMAND_FIELDS: tuple[Scaled | str, ...] = (VELOCITY,) * 3 + (RATE,) * 3


class _Reader:
    """Bounded reads from a body; running short raises :class:`JudpError`."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.at = 0

    def take(self, fmt: str) -> int:
        size = struct.calcsize("<" + fmt)
        if self.at + size > len(self.body):
            raise JudpError(f"body of {len(self.body)} bytes ends inside a field at {self.at}")
        (value,) = struct.unpack_from("<" + fmt, self.body, self.at)
        self.at += size
        return int(value)

    def done(self) -> None:
        if self.at != len(self.body):
            raise JudpError(f"{len(self.body) - self.at} bytes after the last field")


def _read_optional(
    reader: _Reader, presence: int, fields: tuple[Scaled | str, ...]
) -> list[float | int | None]:
    if presence >> len(fields):
        raise JudpError(f"presence vector {presence:#x} names fields this message lacks")
    out: list[float | int | None] = []
    for bit, field in enumerate(fields):
        if not presence >> bit & 1:
            out.append(None)
        elif isinstance(field, Scaled):
            out.append(field.decode(reader.take(field.fmt)))
        else:
            out.append(reader.take(field))
    return out


def _write_optional(
    values: tuple[float | int | None, ...], fields: tuple[Scaled | str, ...], pv_fmt: str
) -> bytes:
    presence = sum(1 << i for i, v in enumerate(values) if v is not None)
    out = bytearray(struct.pack("<" + pv_fmt, presence))
    for value, field in zip(values, fields, strict=True):
        if value is None:
            continue
        if isinstance(field, Scaled):
            out += struct.pack("<" + field.fmt, field.encode(float(value)))
        else:
            out += struct.pack("<" + field, int(value))
    return bytes(out)


def _f(x: float | int | None) -> float | None:
    return None if x is None else float(x)


def _i(x: float | int | None) -> int | None:
    return None if x is None else int(x)


def decode_message(code: int, body: bytes) -> JausMessage:
    """One message body by its code; :class:`JudpError` for an unknown code or bad body."""
    r = _Reader(body)
    message: JausMessage
    if code == RequestControl.CODE:
        message = RequestControl(r.take("B"))
    elif code == ReleaseControl.CODE:
        message = ReleaseControl()
    elif code == ConfirmControl.CODE:
        message = ConfirmControl(_enum(ConfirmResponse, r.take("B")))
    elif code == RejectControl.CODE:
        message = RejectControl(_enum(RejectResponse, r.take("B")))
    elif code == QueryIdentification.CODE:
        message = QueryIdentification(r.take("B"))
    elif code == ReportIdentification.CODE:
        query_type, kind, count = r.take("B"), r.take("H"), r.take("B")
        raw = bytes(r.take("B") for _ in range(count))
        message = ReportIdentification(query_type, kind, raw.decode("utf-8", "replace"))
    elif code == SetWrenchEffort.CODE:
        v = [_f(x) for x in _read_optional(r, r.take("H"), _WRENCH_FIELDS)]
        message = SetWrenchEffort((v[0], v[1], v[2]), (v[3], v[4], v[5]), tuple(v[6:]))
    elif code == SetVelocityCommand.CODE:
        presence, command_type = r.take("B"), r.take("B")
        v = [_f(x) for x in _read_optional(r, presence, _COMMAND_FIELDS)]
        message = SetVelocityCommand(command_type, (v[0], v[1], v[2]), (v[3], v[4], v[5]))
    elif code == QueryLocalPose.CODE:
        message = QueryLocalPose(r.take("H"))
    elif code == QueryVelocityState.CODE:
        message = QueryVelocityState(r.take("H"))
    elif code == ReportLocalPose.CODE:
        v = _read_optional(r, r.take("H"), _POSE_FIELDS)
        f = [_f(x) for x in v[:8]]
        pose = LocalPose(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], _i(v[8]))
        message = ReportLocalPose(pose)
    elif code == ReportVelocityState.CODE:
        v = _read_optional(r, r.take("H"), _VELOCITY_FIELDS)
        f = [_f(x) for x in v[:8]]
        state = VelocityState(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], _i(v[8]))
        message = ReportVelocityState(state)
    else:
        raise JudpError(f"message code {code:#06x} is not supported")
    r.done()
    return message


_E = TypeVar("_E", bound=IntEnum)


def _enum(kind: type[_E], value: int) -> _E:
    try:
        return kind(value)
    except ValueError:
        raise JudpError(f"{kind.__name__} {value} is not defined") from None


def encode_message(message: JausMessage) -> bytes:
    """The payload (message code and body) of ``message``."""
    code = struct.pack("<H", message.CODE)
    if isinstance(message, RequestControl):
        return code + struct.pack("<B", message.authority)
    if isinstance(message, ReleaseControl):
        return code
    if isinstance(message, ConfirmControl | RejectControl):
        return code + struct.pack("<B", int(message.response))
    if isinstance(message, QueryIdentification):
        return code + struct.pack("<B", message.query_type)
    if isinstance(message, ReportIdentification):
        name = message.identification.encode()[:255]
        return code + struct.pack("<BHB", message.query_type, message.type, len(name)) + name
    if isinstance(message, SetWrenchEffort):
        values = message.propulsive_linear + message.propulsive_rotational + message.resistive
        return code + _write_optional(values, _WRENCH_FIELDS, "H")
    if isinstance(message, SetVelocityCommand):
        values = message.velocity + message.rates
        body = _write_optional(values, _COMMAND_FIELDS, "B")
        return code + body[:1] + struct.pack("<B", message.command_type) + body[1:]
    if isinstance(message, QueryLocalPose | QueryVelocityState):
        return code + struct.pack("<H", message.presence)
    if isinstance(message, ReportLocalPose):
        p = message.pose
        pose = (p.x, p.y, p.z, p.position_rms, p.roll, p.pitch, p.yaw, p.attitude_rms)
        return code + _write_optional((*pose, p.timestamp), _POSE_FIELDS, "H")
    s = message.state
    rates = (s.roll_rate, s.pitch_rate, s.yaw_rate, s.rate_rms)
    values = (s.vx, s.vy, s.vz, s.velocity_rms, *rates, s.timestamp)
    return code + _write_optional(values, _VELOCITY_FIELDS, "H")
