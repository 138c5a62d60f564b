"""The native profile's payload codecs and its type table: for each type code, the message
class, the stream it travels on, and how its payload is written and read (every length checked;
numbers are range-checked by the codec after decoding, see ``_values.py``)."""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

from freelook.link import _messages as msg
from freelook.link._errors import MalformedError
from freelook.link._native_telemetry import decode_telemetry, encode_telemetry
from freelook.link._values import ARM_JOINTS, DIGEST_SIZE, MAX_REASON_BYTES, NONCE_SIZE

__all__ = [
    "CODE",
    "FRAGMENT",
    "FRAME_HEAD",
    "TYPES",
    "TYPE_SESSION_CHALLENGE",
    "TYPE_SESSION_CONFIRM",
    "TYPE_SESSION_OPEN",
    "TYPE_VIDEO_FEEDBACK",
    "TYPE_VIDEO_FRAGMENT",
    "Decoder",
    "Encoder",
    "Stream",
    "pack_frame_head",
    "read_frame_head",
]

TYPE_VIDEO_FRAGMENT = 20
TYPE_SESSION_OPEN = 22
TYPE_SESSION_CHALLENGE = 23
TYPE_SESSION_CONFIRM = 24
TYPE_VIDEO_FEEDBACK = 31
MAX_TRAJECTORY_POINTS = 300


class Stream:
    """Stream ids: each has its own sequence numbers and replay window."""

    CONTROL = 0
    TELEMETRY = 1
    VIDEO = 2
    SESSION = 3


_F2 = struct.Struct("<ff")
_F3 = struct.Struct("<fff")
_F4 = struct.Struct("<ffff")
_B = struct.Struct("<B")
_F = struct.Struct("<f")
_D2 = struct.Struct("<dd")
_HB = struct.Struct("<HB")
_H = struct.Struct("<H")
_TRAJ_HEAD = struct.Struct("<HBB")
FRAGMENT = struct.Struct("<IHHB")  # frame id, index, count, camera stream
#: capture stamp, width, height, layout, codec, flags (bit 0: a keyframe; the rest zero)
FRAME_HEAD = struct.Struct("<dHHBBB")
_KEYFRAME = 0x01
_VIDEO_FEEDBACK = struct.Struct("<BfB")  # stream, loss, keyframe
_NONCE = struct.Struct(f"<{NONCE_SIZE}s")
_NONCE2 = struct.Struct(f"<{NONCE_SIZE}s{NONCE_SIZE}s")
_MAP_INFO = struct.Struct(f"<{DIGEST_SIZE}sIB")
_MAP_REQUEST = struct.Struct(f"<{DIGEST_SIZE}sHH")
_MAP_CHUNK = struct.Struct(f"<{DIGEST_SIZE}sHH")
_MODE_REFUSAL = struct.Struct("<HBBB")  # station, mode, flags (bit 0: standing), reason bytes
_STANDING = 0x01

Encoder = Callable[[Any], bytes]
Decoder = Callable[[bytes], msg.Message]


def _enc_trajectory(m: msg.TrajectoryStart) -> bytes:
    n = len(m.t)
    if not (len(m.x) == len(m.y) == n) or n > MAX_TRAJECTORY_POINTS:
        raise MalformedError(f"trajectory needs equal t/x/y of at most {MAX_TRAJECTORY_POINTS}")
    points = [v for i in range(n) for v in (m.t[i], m.x[i], m.y[i])]
    return _TRAJ_HEAD.pack(n, int(m.reverse), int(m.periodic)) + struct.pack(f"<{3 * n}f", *points)


def _dec_trajectory(p: bytes) -> msg.TrajectoryStart:
    n, reverse, periodic = _TRAJ_HEAD.unpack_from(p)
    if n > MAX_TRAJECTORY_POINTS or len(p) != _TRAJ_HEAD.size + 12 * n:
        raise MalformedError(f"trajectory of {n} points in {len(p)} bytes")
    v = struct.unpack_from(f"<{3 * n}f", p, _TRAJ_HEAD.size)
    return msg.TrajectoryStart(
        tuple(v[0::3]), tuple(v[1::3]), tuple(v[2::3]), bool(reverse), bool(periodic)
    )


def _exact(struct_: struct.Struct, build: Callable[..., msg.Message]) -> Decoder:
    def decode(p: bytes) -> msg.Message:
        if len(p) != struct_.size:
            raise MalformedError(f"payload of {len(p)} bytes, expected {struct_.size}")
        return build(*struct_.unpack(p))

    return decode


def _empty(build: Callable[[], msg.Message]) -> Decoder:
    def decode(p: bytes) -> msg.Message:
        if p:
            raise MalformedError(f"payload of {len(p)} bytes, expected none")
        return build()

    return decode


def _mode(value: int) -> msg.ModeChange:
    try:
        return msg.ModeChange(msg.Mode(value))
    except ValueError:
        raise MalformedError(f"unknown mode {value}") from None


def _bool(value: int) -> bool:
    if value > 1:
        raise MalformedError(f"boolean byte {value}")
    return bool(value)


def _reject(station: int, reason: int) -> msg.ControlReject:
    try:
        return msg.ControlReject(station, msg.RejectReason(reason))
    except ValueError:
        raise MalformedError(f"unknown reject reason {reason}") from None


def _dec_fragment(p: bytes) -> msg.VideoFragment:
    if len(p) < FRAGMENT.size:
        raise MalformedError("video fragment shorter than its header")
    frame_id, index, count, stream = FRAGMENT.unpack_from(p)
    if count == 0 or index >= count:
        raise MalformedError(f"fragment {index} of {count}")
    return msg.VideoFragment(frame_id, index, count, p[FRAGMENT.size :], stream)


def pack_frame_head(frame: msg.VideoFrame) -> bytes:
    """The head that starts a video frame's reassembled bytes (its fragments carry the rest)."""
    flags = _KEYFRAME if frame.keyframe else 0
    return FRAME_HEAD.pack(frame.stamp, frame.width, frame.height, frame.layout, frame.codec, flags)


def read_frame_head(blob: bytes, frame_id: int, stream: int) -> msg.VideoFrame:
    """The frame a reassembled blob carries. A blob shorter than its head, an unknown codec
    or a flag bit this end does not know raises :class:`MalformedError` (numbers are then
    range-checked by the caller)."""
    if len(blob) < FRAME_HEAD.size:
        raise MalformedError(f"video frame of {len(blob)} bytes, shorter than its head")
    stamp, width, height, layout, codec, flags = FRAME_HEAD.unpack_from(blob)
    if codec not in msg.VideoCodec._value2member_map_:
        raise MalformedError(f"unknown video codec {codec}")
    if flags & ~_KEYFRAME:
        raise MalformedError(f"unknown video frame flags {flags:#04x}")
    return msg.VideoFrame(
        frame_id,
        stamp,
        width,
        height,
        blob[FRAME_HEAD.size :],
        stream,
        layout,
        msg.VideoCodec(codec),
        bool(flags & _KEYFRAME),
    )


def _enc_map_info(m: msg.MapInfo) -> bytes:
    name = m.name.encode("ascii")
    return _MAP_INFO.pack(m.digest, m.size, len(name)) + name


def _dec_map_info(p: bytes) -> msg.MapInfo:
    if len(p) < _MAP_INFO.size:
        raise MalformedError(f"map info of {len(p)} bytes is shorter than its head")
    digest, size, n = _MAP_INFO.unpack_from(p)
    if len(p) != _MAP_INFO.size + n:
        raise MalformedError(f"map info declares a name of {n} bytes, payload disagrees")
    try:
        name = p[_MAP_INFO.size :].decode("ascii")
    except UnicodeDecodeError:
        raise MalformedError("map name is not ASCII") from None
    return msg.MapInfo(digest, size, name)


def _enc_mode_refusal(m: msg.ModeRefusal) -> bytes:
    reason = m.reason.encode("utf-8")
    if len(reason) > MAX_REASON_BYTES:
        raise MalformedError(f"refusal reason of {len(reason)} bytes, at most {MAX_REASON_BYTES}")
    flags = _STANDING if m.standing else 0
    return _MODE_REFUSAL.pack(m.station, int(m.mode), flags, len(reason)) + reason


def _dec_mode_refusal(p: bytes) -> msg.ModeRefusal:
    if len(p) < _MODE_REFUSAL.size:
        raise MalformedError(f"mode refusal of {len(p)} bytes is shorter than its head")
    station, mode, flags, n = _MODE_REFUSAL.unpack_from(p)
    if n > MAX_REASON_BYTES or len(p) != _MODE_REFUSAL.size + n:
        raise MalformedError(f"mode refusal declares a reason of {n} bytes in {len(p)}")
    if flags & ~_STANDING:
        raise MalformedError(f"unknown mode refusal flags {flags:#04x}")
    try:
        reason = p[_MODE_REFUSAL.size :].decode("utf-8")
    except UnicodeDecodeError:
        raise MalformedError("mode refusal reason is not UTF-8") from None
    return msg.ModeRefusal(station, _mode(mode).mode, reason, bool(flags & _STANDING))


def _enc_arm_command(m: msg.ArmVelocityCommand) -> bytes:
    n = len(m.velocities)
    if n > ARM_JOINTS:
        raise MalformedError(f"arm command of {n} joints, at most {ARM_JOINTS}")
    return _B.pack(n) + struct.pack(f"<{n}f", *m.velocities)


def _dec_arm_command(p: bytes) -> msg.ArmVelocityCommand:
    if not p:
        raise MalformedError("arm command without its joint count")
    n = p[0]
    if n > ARM_JOINTS or len(p) != 1 + 4 * n:
        raise MalformedError(f"arm command of {n} joints in {len(p)} bytes (at most {ARM_JOINTS})")
    return msg.ArmVelocityCommand(struct.unpack_from(f"<{n}f", p, 1))


def _dec_map_chunk(p: bytes) -> msg.MapChunk:
    if len(p) < _MAP_CHUNK.size:
        raise MalformedError("map chunk shorter than its header")
    digest, index, count = _MAP_CHUNK.unpack_from(p)
    return msg.MapChunk(digest, index, count, p[_MAP_CHUNK.size :])


#: type code → (class, stream, encoder, decoder): the native profile's type table
TYPES: dict[int, tuple[type, int, Encoder, Decoder]] = {
    1: (
        msg.VelocityCommand,
        Stream.CONTROL,
        lambda m: _F2.pack(m.v, m.omega),
        _exact(_F2, msg.VelocityCommand),
    ),
    2: (
        msg.WheelSpeedCommand,
        Stream.CONTROL,
        lambda m: _F2.pack(m.left, m.right),
        _exact(_F2, msg.WheelSpeedCommand),
    ),
    3: (
        msg.TankCommand,
        Stream.CONTROL,
        lambda m: _F4.pack(m.v, m.omega, m.pan_rate, m.tilt_rate),
        _exact(_F4, msg.TankCommand),
    ),
    4: (
        msg.FreeLookCommand,
        Stream.CONTROL,
        lambda m: _F4.pack(m.v1, m.v2, m.omega, m.tilt_rate),
        _exact(_F4, msg.FreeLookCommand),
    ),
    5: (
        msg.PanTiltCommand,
        Stream.CONTROL,
        lambda m: _F2.pack(m.pan_rate, m.tilt_rate),
        _exact(_F2, msg.PanTiltCommand),
    ),
    6: (msg.ModeChange, Stream.CONTROL, lambda m: _B.pack(int(m.mode)), _exact(_B, _mode)),
    7: (
        msg.LinearDriveStart,
        Stream.CONTROL,
        lambda m: _F3.pack(m.x_start, m.x_end, m.max_speed),
        _exact(_F3, msg.LinearDriveStart),
    ),
    8: (msg.LinearDriveStop, Stream.CONTROL, lambda m: b"", _empty(msg.LinearDriveStop)),
    9: (msg.TrajectoryStart, Stream.CONTROL, _enc_trajectory, _dec_trajectory),
    10: (msg.TrajectoryStop, Stream.CONTROL, lambda m: b"", _empty(msg.TrajectoryStop)),
    11: (
        msg.EStop,
        Stream.CONTROL,
        lambda m: _B.pack(int(m.engaged)),
        _exact(_B, lambda b: msg.EStop(_bool(b))),
    ),
    12: (
        msg.SetTransmission,
        Stream.SESSION,
        lambda m: _B.pack(int(m.enabled)),
        _exact(_B, lambda b: msg.SetTransmission(_bool(b))),
    ),
    13: (
        msg.SetTransmissionSpacing,
        Stream.SESSION,
        lambda m: _F.pack(m.spacing),
        _exact(_F, msg.SetTransmissionSpacing),
    ),
    14: (msg.Heartbeat, Stream.SESSION, lambda m: b"", _empty(msg.Heartbeat)),
    15: (
        msg.ControlRequest,
        Stream.SESSION,
        lambda m: _HB.pack(m.station, m.authority),
        _exact(_HB, msg.ControlRequest),
    ),
    16: (
        msg.ControlRelease,
        Stream.SESSION,
        lambda m: _H.pack(m.station),
        _exact(_H, msg.ControlRelease),
    ),
    17: (
        msg.ControlGrant,
        Stream.SESSION,
        lambda m: _HB.pack(m.station, m.authority),
        _exact(_HB, msg.ControlGrant),
    ),
    18: (
        msg.ControlReject,
        Stream.SESSION,
        lambda m: _HB.pack(m.station, int(m.reason)),
        _exact(_HB, _reject),
    ),
    19: (msg.Telemetry, Stream.TELEMETRY, encode_telemetry, decode_telemetry),
    TYPE_VIDEO_FRAGMENT: (
        msg.VideoFragment,
        Stream.VIDEO,
        lambda m: FRAGMENT.pack(m.frame_id, m.index, m.count, m.stream) + m.data,
        _dec_fragment,
    ),
    21: (msg.Relocalize, Stream.CONTROL, lambda m: b"", _empty(msg.Relocalize)),
    TYPE_SESSION_OPEN: (
        msg.SessionOpen,
        Stream.SESSION,
        lambda m: _NONCE.pack(m.nonce),
        _exact(_NONCE, msg.SessionOpen),
    ),
    TYPE_SESSION_CHALLENGE: (
        msg.SessionChallenge,
        Stream.SESSION,
        lambda m: _NONCE2.pack(m.client_nonce, m.server_nonce),
        _exact(_NONCE2, msg.SessionChallenge),
    ),
    TYPE_SESSION_CONFIRM: (
        msg.SessionConfirm,
        Stream.SESSION,
        lambda m: b"",
        _empty(msg.SessionConfirm),
    ),
    25: (msg.MapInfo, Stream.SESSION, _enc_map_info, _dec_map_info),
    26: (
        msg.MapRequest,
        Stream.SESSION,
        lambda m: _MAP_REQUEST.pack(m.digest, m.first, m.count),
        _exact(_MAP_REQUEST, msg.MapRequest),
    ),
    27: (
        msg.MapChunk,
        Stream.SESSION,
        lambda m: _MAP_CHUNK.pack(m.digest, m.index, m.count) + m.data,
        _dec_map_chunk,
    ),
    28: (msg.ArmVelocityCommand, Stream.CONTROL, _enc_arm_command, _dec_arm_command),
    29: (
        msg.GripperCommand,
        Stream.CONTROL,
        lambda m: _F.pack(m.opening),
        _exact(_F, msg.GripperCommand),
    ),
    30: (
        msg.ReceptionReport,
        Stream.SESSION,
        lambda m: _F3.pack(m.telemetry_overdue, m.video_age, m.loss_percent),
        _exact(_F3, msg.ReceptionReport),
    ),
    TYPE_VIDEO_FEEDBACK: (
        msg.VideoFeedback,
        Stream.SESSION,
        lambda m: _VIDEO_FEEDBACK.pack(m.stream, m.loss, int(m.keyframe)),
        _exact(_VIDEO_FEEDBACK, lambda s, loss, k: msg.VideoFeedback(s, loss, _bool(k))),
    ),
    32: (msg.ModeRefusal, Stream.SESSION, _enc_mode_refusal, _dec_mode_refusal),
    33: (
        msg.ClockEcho,
        Stream.SESSION,
        lambda m: _D2.pack(m.sent, m.received),
        _exact(_D2, msg.ClockEcho),
    ),
    34: (msg.GoalStart, Stream.CONTROL, lambda m: _F2.pack(m.x, m.y), _exact(_F2, msg.GoalStart)),
    35: (msg.GoalStop, Stream.CONTROL, lambda m: b"", _empty(msg.GoalStop)),
}
#: message class → its type code
CODE = {cls: code for code, (cls, _, _, _) in TYPES.items()}
