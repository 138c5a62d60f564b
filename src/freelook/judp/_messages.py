"""The JAUS messages freelook speaks (AS5710 core, AS6009 mobility, AS6057 manipulator),
sans-I/O.

Bodies are little-endian. Optional fields are announced by a presence vector (bit i: the
i-th optional field, in the record's order) and only present fields are on the wire. Real
values travel as scaled integers: an n-bit unsigned integer ``k`` stands for
``lower + k · (upper − lower) / (2ⁿ − 1)``; encoding rounds to the nearest step and clamps to
the range. Frames are JAUS's (x forward, y right, z down; yaw positive clockwise seen from
above): the codec speaks the standard's numbers, the gateway turns them into freelook's
(y left, counter-clockwise positive).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from freelook.judp._fields import (
    ANGLE,
    ANGLE_RMS,
    EFFORT,
    POSITION,
    POSITION_RMS,
    RATE,
    RATE_RMS,
    RESISTIVE,
    TIMESTAMP,
    VELOCITY,
    VELOCITY_RMS,
    Reader,
    Scaled,
    enum_value,
    read_optional,
    write_optional,
)
from freelook.judp._framing import JudpError
from freelook.judp._services import ServiceMessage, decode_service_message, encode_service_message

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
    "SetVelocityCommand",
    "SetWrenchEffort",
    "VelocityState",
    "decode_message",
    "encode_message",
]


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
    | ServiceMessage
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


def _f(x: float | int | None) -> float | None:
    return None if x is None else float(x)


def _i(x: float | int | None) -> int | None:
    return None if x is None else int(x)


def decode_message(code: int, body: bytes) -> JausMessage:
    """One message body by its code; :class:`JudpError` for an unknown code or bad body."""
    r = Reader(body)
    message: JausMessage
    if code == RequestControl.CODE:
        message = RequestControl(r.take("B"))
    elif code == ReleaseControl.CODE:
        message = ReleaseControl()
    elif code == ConfirmControl.CODE:
        message = ConfirmControl(enum_value(ConfirmResponse, r.take("B")))
    elif code == RejectControl.CODE:
        message = RejectControl(enum_value(RejectResponse, r.take("B")))
    elif code == QueryIdentification.CODE:
        message = QueryIdentification(r.take("B"))
    elif code == ReportIdentification.CODE:
        query_type, kind, count = r.take("B"), r.take("H"), r.take("B")
        raw = bytes(r.take("B") for _ in range(count))
        message = ReportIdentification(query_type, kind, raw.decode("utf-8", "replace"))
    elif code == SetWrenchEffort.CODE:
        v = [_f(x) for x in read_optional(r, r.take("H"), _WRENCH_FIELDS)]
        message = SetWrenchEffort((v[0], v[1], v[2]), (v[3], v[4], v[5]), tuple(v[6:]))
    elif code == SetVelocityCommand.CODE:
        presence, command_type = r.take("B"), r.take("B")
        v = [_f(x) for x in read_optional(r, presence, _COMMAND_FIELDS)]
        message = SetVelocityCommand(command_type, (v[0], v[1], v[2]), (v[3], v[4], v[5]))
    elif code == QueryLocalPose.CODE:
        message = QueryLocalPose(r.take("H"))
    elif code == QueryVelocityState.CODE:
        message = QueryVelocityState(r.take("H"))
    elif code == ReportLocalPose.CODE:
        v = read_optional(r, r.take("H"), _POSE_FIELDS)
        f = [_f(x) for x in v[:8]]
        pose = LocalPose(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], _i(v[8]))
        message = ReportLocalPose(pose)
    elif code == ReportVelocityState.CODE:
        v = read_optional(r, r.take("H"), _VELOCITY_FIELDS)
        f = [_f(x) for x in v[:8]]
        state = VelocityState(f[0], f[1], f[2], f[3], f[4], f[5], f[6], f[7], _i(v[8]))
        message = ReportVelocityState(state)
    else:
        other = decode_service_message(code, r)
        if other is None:
            raise JudpError(f"message code {code:#06x} is not supported")
        message = other
    r.done()
    return message


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
        return code + write_optional(values, _WRENCH_FIELDS, "H")
    if isinstance(message, SetVelocityCommand):
        values = message.velocity + message.rates
        body = write_optional(values, _COMMAND_FIELDS, "B")
        return code + body[:1] + struct.pack("<B", message.command_type) + body[1:]
    if isinstance(message, QueryLocalPose | QueryVelocityState):
        return code + struct.pack("<H", message.presence)
    if isinstance(message, ReportVelocityState):
        s = message.state
        rates = (s.roll_rate, s.pitch_rate, s.yaw_rate, s.rate_rms)
        values = (s.vx, s.vy, s.vz, s.velocity_rms, *rates, s.timestamp)
        return code + write_optional(values, _VELOCITY_FIELDS, "H")
    if isinstance(message, ReportLocalPose):
        p = message.pose
        pose = (p.x, p.y, p.z, p.position_rms, p.roll, p.pitch, p.yaw, p.attitude_rms)
        return code + write_optional((*pose, p.timestamp), _POSE_FIELDS, "H")
    return code + encode_service_message(message)
