"""freelook's native link profile: versioned, sequenced, authenticated (docs/protocol.md).

    0  sync 0xFE 0x4C | 2 version | 3 flags | 4 type | 5 stream | 6 sender u16 | 8 sequence u32
    12 stamp u64 (µs) | 20 payload length u16 | 22 payload | tag (16 B, keyed BLAKE2s) or CRC-32

All integers little-endian. Without a key the trailer is a CRC-32, which detects corruption
but not forgery; that mode must be asked for explicitly. Flag bit 1 marks a packet tagged with
a session key (see ``_handshake.py``) rather than the station key.

Decoding runs in stages, cheapest first, so a flood costs little: :meth:`NativeCodec.parse`
(length, sync, version, flags, declared length, known type, stream: no cryptography),
:meth:`NativeCodec.verify` (the tag), :meth:`NativeCodec.payload` (the message, every number
checked against its field's range).
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from freelook.errors import ConfigError
from freelook.link._auth import TAG_SIZE, ReplayWindow, tag, tags_equal
from freelook.link._decoded import Decoded
from freelook.link._errors import (
    AuthenticationError,
    ChecksumError,
    FramingError,
    MalformedError,
    SessionError,
    UnknownTypeError,
    ValueRangeError,
)
from freelook.link._messages import (
    ArmTelemetry,
    ArmVelocityCommand,
    AutonomyTelemetry,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    EStop,
    FreeLookCommand,
    GripperCommand,
    Heartbeat,
    LinearDriveStart,
    LinearDriveStop,
    MapChunk,
    MapInfo,
    MapRequest,
    Message,
    Mode,
    ModeChange,
    PanTiltCommand,
    RejectReason,
    Relocalize,
    SafetyFlags,
    SessionChallenge,
    SessionConfirm,
    SessionOpen,
    SetTransmission,
    SetTransmissionSpacing,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    TrajectoryStop,
    VelocityCommand,
    VideoFragment,
    VideoFrame,
    WheelSpeedCommand,
)
from freelook.link._stats_report import LinkStatsReport
from freelook.link._values import ARM_JOINTS, ARM_PAIRS, DIGEST_SIZE, NONCE_SIZE, check_values
from freelook.types import TaskPhase

__all__ = ["MAX_DATAGRAM", "MAX_PACKET", "Header", "Keying", "NativeCodec", "Stream"]

SYNC = b"\xfe\x4c"
VERSION = 1
FLAG_AUTH = 0x01
FLAG_SESSION = 0x02  # tagged with a session key (implies FLAG_AUTH)
_KNOWN_FLAGS = FLAG_AUTH | FLAG_SESSION
TYPE_SESSION_OPEN = 22
TYPE_SESSION_CHALLENGE = 23
TYPE_SESSION_CONFIRM = 24
HEADER = struct.Struct("<2sBBBBHIQH")
HEADER_SIZE = HEADER.size  # 22
MAX_PACKET = 4096
MAX_DATAGRAM = 1200
MAX_TRAJECTORY_POINTS = 300
MAX_FRAME_BYTES = 4 * 1024 * 1024


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
_HB = struct.Struct("<HB")
_H = struct.Struct("<H")
_TRAJ_HEAD = struct.Struct("<HBB")
_TELEMETRY = struct.Struct("<d3f3f2f2f2ffbBBBH6I4f3fH")
_FRAGMENT = struct.Struct("<IHHB")  # frame id, index, count, camera stream
_FRAME_HEAD = struct.Struct("<dHHB")  # capture stamp, width, height, layout
_NONCE = struct.Struct(f"<{NONCE_SIZE}s")
_NONCE2 = struct.Struct(f"<{NONCE_SIZE}s{NONCE_SIZE}s")
_MAP_INFO = struct.Struct(f"<{DIGEST_SIZE}sIB")
_MAP_REQUEST = struct.Struct(f"<{DIGEST_SIZE}sHH")
_MAP_CHUNK = struct.Struct(f"<{DIGEST_SIZE}sHH")
_ARM_HEAD = struct.Struct("<fBB")  # gripper opening, flags (1 holding), phase
_AUTONOMY = struct.Struct("<BBHf")  # task phase, flags (1 paused), recoveries, progress
_LASER_UNIT = 1000.0  # ranges as u16 millimetres (1 mm resolution, up to 65.5 m)

Encoder = Callable[[Any], bytes]
Decoder = Callable[[bytes], Message]


def _u16_mm(values: tuple[float, ...]) -> bytes:
    scaled = np.asarray(values, dtype=np.float64) * _LASER_UNIT
    scaled[scaled != scaled] = 0.0  # NaN → 0
    np.rint(scaled, out=scaled)
    np.clip(scaled, 0.0, 65535.0, out=scaled)
    return scaled.astype("<u2").tobytes()


def _from_u16_mm(payload: bytes, offset: int, count: int) -> tuple[float, ...]:
    values = np.frombuffer(payload, dtype="<u2", count=count, offset=offset) / _LASER_UNIT
    return tuple(values.tolist())


def _enc_trajectory(m: TrajectoryStart) -> bytes:
    n = len(m.t)
    if not (len(m.x) == len(m.y) == n) or n > MAX_TRAJECTORY_POINTS:
        raise MalformedError(f"trajectory needs equal t/x/y of at most {MAX_TRAJECTORY_POINTS}")
    points = [v for i in range(n) for v in (m.t[i], m.x[i], m.y[i])]
    return _TRAJ_HEAD.pack(n, int(m.reverse), int(m.periodic)) + struct.pack(f"<{3 * n}f", *points)


def _dec_trajectory(p: bytes) -> TrajectoryStart:
    n, reverse, periodic = _TRAJ_HEAD.unpack_from(p)
    if n > MAX_TRAJECTORY_POINTS or len(p) != _TRAJ_HEAD.size + 12 * n:
        raise MalformedError(f"trajectory of {n} points in {len(p)} bytes")
    v = struct.unpack_from(f"<{3 * n}f", p, _TRAJ_HEAD.size)
    return TrajectoryStart(
        tuple(v[0::3]), tuple(v[1::3]), tuple(v[2::3]), bool(reverse), bool(periodic)
    )


def _enc_telemetry(m: Telemetry) -> bytes:
    link = m.link
    flags = (
        (1 if m.estop else 0)
        | (2 if m.bumper_front else 0)
        | (4 if m.bumper_rear else 0)
        | (8 if m.localizing else 0)
        | (16 if m.autonomy is not None else 0)
    )
    head = _TELEMETRY.pack(
        m.stamp,
        *m.odom,
        *m.pose,
        m.v,
        m.omega,
        m.cmd_v,
        m.cmd_omega,
        m.pan,
        m.tilt,
        m.safety_scale,
        max(-128, min(127, m.safety_zone)),
        int(m.safety_flags) & 0xFF,
        int(m.mode),
        flags,
        m.controller & 0xFFFF,
        *(
            min(x, 0xFFFFFFFF)
            for x in (
                link.packets_received,
                link.packets_lost,
                link.duplicates,
                link.reordered,
                link.crc_failures,
                link.auth_failures,
            )
        ),
        link.rx_rate_hz,
        link.tx_rate_hz,
        link.drop_percent,
        link.latency_s,
        m.laser_angle_min,
        m.laser_angle_increment,
        m.laser_range_max,
        len(m.laser),
    )
    body = head + _u16_mm(m.laser) + _B.pack(len(m.sonar)) + _u16_mm(m.sonar)
    if m.autonomy is not None:
        a = m.autonomy
        progress = a.progress if math.isfinite(a.progress) else 0.0
        body += _AUTONOMY.pack(
            int(a.phase), 1 if a.paused else 0, min(a.recoveries, 0xFFFF), progress
        )
    return body if m.arm is None else body + _enc_arm_state(m.arm)


def _enc_arm_state(a: ArmTelemetry) -> bytes:
    n = len(a.positions)
    if n != len(a.velocities) or n > ARM_JOINTS:
        raise MalformedError(f"arm state of {n} positions and {len(a.velocities)} velocities")
    return b"".join(
        (
            _B.pack(n),
            struct.pack(f"<{2 * n}f", *a.positions, *a.velocities),
            _ARM_HEAD.pack(a.gripper_opening, 1 if a.gripper_holding else 0, a.phase),
            _H.pack(len(a.slow_pairs)),
            struct.pack(f"<{len(a.slow_pairs)}H", *a.slow_pairs),
            _H.pack(len(a.stop_pairs)),
            struct.pack(f"<{len(a.stop_pairs)}H", *a.stop_pairs),
        )
    )


def _dec_arm_state(p: bytes, offset: int) -> ArmTelemetry:
    """The arm block at the end of a telemetry payload; it must fill the payload exactly and
    every count is checked before anything is read with it."""
    n = p[offset]
    offset += 1
    if n > ARM_JOINTS:
        raise MalformedError(f"telemetry declares {n} arm joints, at most {ARM_JOINTS}")
    if len(p) < offset + 8 * n + _ARM_HEAD.size + 2:
        raise MalformedError(f"telemetry declares {n} arm joints beyond its payload")
    joints = struct.unpack_from(f"<{2 * n}f", p, offset)
    offset += 8 * n
    opening, flags, phase = _ARM_HEAD.unpack_from(p, offset)
    offset += _ARM_HEAD.size
    if flags > 1:
        raise MalformedError(f"arm flags {flags:#04x}")
    pairs: list[tuple[int, ...]] = []
    for _ in range(2):
        if len(p) < offset + 2:
            raise MalformedError("telemetry's arm pairs run beyond its payload")
        (count,) = _H.unpack_from(p, offset)
        offset += 2
        if count > ARM_PAIRS or len(p) < offset + 2 * count:
            raise MalformedError(f"telemetry declares {count} arm pairs beyond its payload")
        pairs.append(struct.unpack_from(f"<{count}H", p, offset))
        offset += 2 * count
    if offset != len(p):
        raise MalformedError(f"{len(p) - offset} bytes after the telemetry's arm state")
    return ArmTelemetry(joints[:n], joints[n:], opening, bool(flags & 1), phase, pairs[0], pairs[1])


def _dec_telemetry(p: bytes) -> Telemetry:
    if len(p) < _TELEMETRY.size + 1:
        raise MalformedError(f"telemetry payload of {len(p)} bytes is too short")
    v = _TELEMETRY.unpack_from(p)
    n_laser = v[-1]
    offset = _TELEMETRY.size
    if len(p) < offset + 2 * n_laser + 1:
        raise MalformedError(f"telemetry declares {n_laser} laser ranges beyond its payload")
    laser = _from_u16_mm(p, offset, n_laser)
    offset += 2 * n_laser
    n_sonar = p[offset]
    offset += 1
    if len(p) < offset + 2 * n_sonar:
        raise MalformedError(f"telemetry declares {n_sonar} sonar ranges, payload disagrees")
    sonar = _from_u16_mm(p, offset, n_sonar)
    offset += 2 * n_sonar
    autonomy = None
    if v[17] & 16:
        if len(p) < offset + _AUTONOMY.size:
            raise MalformedError("telemetry's autonomy block runs beyond its payload")
        phase, task_flags, recoveries, progress = _AUTONOMY.unpack_from(p, offset)
        offset += _AUTONOMY.size
        if task_flags > 1 or not 0.0 <= progress <= 1.0:
            raise MalformedError(f"autonomy flags {task_flags:#04x}, progress {progress}")
        try:
            autonomy = AutonomyTelemetry(TaskPhase(phase), progress, bool(task_flags), recoveries)
        except ValueError as err:
            raise MalformedError(f"telemetry: {err}") from None
    arm = _dec_arm_state(p, offset) if len(p) > offset else None
    try:
        mode = Mode(v[16])
        safety = SafetyFlags(v[15])
    except ValueError as err:
        raise MalformedError(f"telemetry: {err}") from None
    flags = v[17]
    link = LinkStatsReport(*v[19:25], *v[25:29])
    return Telemetry(
        stamp=v[0],
        odom=(v[1], v[2], v[3]),
        pose=(v[4], v[5], v[6]),
        v=v[7],
        omega=v[8],
        cmd_v=v[9],
        cmd_omega=v[10],
        pan=v[11],
        tilt=v[12],
        laser_angle_min=v[29],
        laser_angle_increment=v[30],
        laser_range_max=v[31],
        laser=laser,
        sonar=sonar,
        bumper_front=bool(flags & 2),
        bumper_rear=bool(flags & 4),
        safety_zone=v[14],
        safety_scale=v[13],
        safety_flags=safety,
        mode=mode,
        estop=bool(flags & 1),
        localizing=bool(flags & 8),
        controller=v[18],
        link=link,
        arm=arm,
        autonomy=autonomy,
    )


def _exact(struct_: struct.Struct, build: Callable[..., Message]) -> Decoder:
    def decode(p: bytes) -> Message:
        if len(p) != struct_.size:
            raise MalformedError(f"payload of {len(p)} bytes, expected {struct_.size}")
        return build(*struct_.unpack(p))

    return decode


def _empty(build: Callable[[], Message]) -> Decoder:
    def decode(p: bytes) -> Message:
        if p:
            raise MalformedError(f"payload of {len(p)} bytes, expected none")
        return build()

    return decode


def _mode(value: int) -> ModeChange:
    try:
        return ModeChange(Mode(value))
    except ValueError:
        raise MalformedError(f"unknown mode {value}") from None


def _bool(value: int) -> bool:
    if value > 1:
        raise MalformedError(f"boolean byte {value}")
    return bool(value)


def _reject(station: int, reason: int) -> ControlReject:
    try:
        return ControlReject(station, RejectReason(reason))
    except ValueError:
        raise MalformedError(f"unknown reject reason {reason}") from None


def _dec_fragment(p: bytes) -> VideoFragment:
    if len(p) < _FRAGMENT.size:
        raise MalformedError("video fragment shorter than its header")
    frame_id, index, count, stream = _FRAGMENT.unpack_from(p)
    if count == 0 or index >= count:
        raise MalformedError(f"fragment {index} of {count}")
    return VideoFragment(frame_id, index, count, p[_FRAGMENT.size :], stream)


def _enc_map_info(m: MapInfo) -> bytes:
    name = m.name.encode("ascii")
    return _MAP_INFO.pack(m.digest, m.size, len(name)) + name


def _dec_map_info(p: bytes) -> MapInfo:
    if len(p) < _MAP_INFO.size:
        raise MalformedError(f"map info of {len(p)} bytes is shorter than its head")
    digest, size, n = _MAP_INFO.unpack_from(p)
    if len(p) != _MAP_INFO.size + n:
        raise MalformedError(f"map info declares a name of {n} bytes, payload disagrees")
    try:
        name = p[_MAP_INFO.size :].decode("ascii")
    except UnicodeDecodeError:
        raise MalformedError("map name is not ASCII") from None
    return MapInfo(digest, size, name)


def _enc_arm_command(m: ArmVelocityCommand) -> bytes:
    n = len(m.velocities)
    if n > ARM_JOINTS:
        raise MalformedError(f"arm command of {n} joints, at most {ARM_JOINTS}")
    return _B.pack(n) + struct.pack(f"<{n}f", *m.velocities)


def _dec_arm_command(p: bytes) -> ArmVelocityCommand:
    if not p:
        raise MalformedError("arm command without its joint count")
    n = p[0]
    if n > ARM_JOINTS or len(p) != 1 + 4 * n:
        raise MalformedError(f"arm command of {n} joints in {len(p)} bytes (at most {ARM_JOINTS})")
    return ArmVelocityCommand(struct.unpack_from(f"<{n}f", p, 1))


def _dec_map_chunk(p: bytes) -> MapChunk:
    if len(p) < _MAP_CHUNK.size:
        raise MalformedError("map chunk shorter than its header")
    digest, index, count = _MAP_CHUNK.unpack_from(p)
    return MapChunk(digest, index, count, p[_MAP_CHUNK.size :])


# type code → (class, stream, encoder, decoder)
_TYPES: dict[int, tuple[type, int, Encoder, Decoder]] = {
    1: (
        VelocityCommand,
        Stream.CONTROL,
        lambda m: _F2.pack(m.v, m.omega),
        _exact(_F2, VelocityCommand),
    ),
    2: (
        WheelSpeedCommand,
        Stream.CONTROL,
        lambda m: _F2.pack(m.left, m.right),
        _exact(_F2, WheelSpeedCommand),
    ),
    3: (
        TankCommand,
        Stream.CONTROL,
        lambda m: _F4.pack(m.v, m.omega, m.pan_rate, m.tilt_rate),
        _exact(_F4, TankCommand),
    ),
    4: (
        FreeLookCommand,
        Stream.CONTROL,
        lambda m: _F4.pack(m.v1, m.v2, m.omega, m.tilt_rate),
        _exact(_F4, FreeLookCommand),
    ),
    5: (
        PanTiltCommand,
        Stream.CONTROL,
        lambda m: _F2.pack(m.pan_rate, m.tilt_rate),
        _exact(_F2, PanTiltCommand),
    ),
    6: (ModeChange, Stream.CONTROL, lambda m: _B.pack(int(m.mode)), _exact(_B, _mode)),
    7: (
        LinearDriveStart,
        Stream.CONTROL,
        lambda m: _F3.pack(m.x_start, m.x_end, m.max_speed),
        _exact(_F3, LinearDriveStart),
    ),
    8: (LinearDriveStop, Stream.CONTROL, lambda m: b"", _empty(LinearDriveStop)),
    9: (TrajectoryStart, Stream.CONTROL, _enc_trajectory, _dec_trajectory),
    10: (TrajectoryStop, Stream.CONTROL, lambda m: b"", _empty(TrajectoryStop)),
    11: (
        EStop,
        Stream.CONTROL,
        lambda m: _B.pack(int(m.engaged)),
        _exact(_B, lambda b: EStop(_bool(b))),
    ),
    12: (
        SetTransmission,
        Stream.SESSION,
        lambda m: _B.pack(int(m.enabled)),
        _exact(_B, lambda b: SetTransmission(_bool(b))),
    ),
    13: (
        SetTransmissionSpacing,
        Stream.SESSION,
        lambda m: _F.pack(m.spacing),
        _exact(_F, SetTransmissionSpacing),
    ),
    14: (Heartbeat, Stream.SESSION, lambda m: b"", _empty(Heartbeat)),
    15: (
        ControlRequest,
        Stream.SESSION,
        lambda m: _HB.pack(m.station, m.authority),
        _exact(_HB, ControlRequest),
    ),
    16: (ControlRelease, Stream.SESSION, lambda m: _H.pack(m.station), _exact(_H, ControlRelease)),
    17: (
        ControlGrant,
        Stream.SESSION,
        lambda m: _HB.pack(m.station, m.authority),
        _exact(_HB, ControlGrant),
    ),
    18: (
        ControlReject,
        Stream.SESSION,
        lambda m: _HB.pack(m.station, int(m.reason)),
        _exact(_HB, _reject),
    ),
    19: (Telemetry, Stream.TELEMETRY, _enc_telemetry, _dec_telemetry),
    20: (
        VideoFragment,
        Stream.VIDEO,
        lambda m: _FRAGMENT.pack(m.frame_id, m.index, m.count, m.stream) + m.data,
        _dec_fragment,
    ),
    21: (Relocalize, Stream.CONTROL, lambda m: b"", _empty(Relocalize)),
    TYPE_SESSION_OPEN: (
        SessionOpen,
        Stream.SESSION,
        lambda m: _NONCE.pack(m.nonce),
        _exact(_NONCE, SessionOpen),
    ),
    TYPE_SESSION_CHALLENGE: (
        SessionChallenge,
        Stream.SESSION,
        lambda m: _NONCE2.pack(m.client_nonce, m.server_nonce),
        _exact(_NONCE2, SessionChallenge),
    ),
    TYPE_SESSION_CONFIRM: (SessionConfirm, Stream.SESSION, lambda m: b"", _empty(SessionConfirm)),
    25: (MapInfo, Stream.SESSION, _enc_map_info, _dec_map_info),
    26: (
        MapRequest,
        Stream.SESSION,
        lambda m: _MAP_REQUEST.pack(m.digest, m.first, m.count),
        _exact(_MAP_REQUEST, MapRequest),
    ),
    27: (
        MapChunk,
        Stream.SESSION,
        lambda m: _MAP_CHUNK.pack(m.digest, m.index, m.count) + m.data,
        _dec_map_chunk,
    ),
    28: (ArmVelocityCommand, Stream.CONTROL, _enc_arm_command, _dec_arm_command),
    29: (
        GripperCommand,
        Stream.CONTROL,
        lambda m: _F.pack(m.opening),
        _exact(_F, GripperCommand),
    ),
}
_CODE = {cls: code for code, (cls, _, _, _) in _TYPES.items()}


class Header(NamedTuple):
    """The fixed header of a native packet, as :meth:`NativeCodec.parse` read it."""

    flags: int
    code: int
    stream: int
    sender: int
    sequence: int
    stamp_us: int
    length: int

    @property
    def stamp(self) -> float:
        return self.stamp_us / 1e6

    @property
    def message_type(self) -> type:
        return _TYPES[self.code][0]


@dataclass(slots=True)
class Keying:
    """How one sender tags its packets: the key, the flags, and its sequence per stream.

    A codec has one of its own (its key); a session end has one per session.
    """

    key: bytes | None
    flags: int
    sequences: dict[int, int] = field(default_factory=dict)


class NativeCodec:
    """Encoder/decoder of the native profile for one station.

    ``key`` authenticates every packet; without one, ``allow_unauthenticated=True`` must be
    given explicitly (a CRC-32 then only detects corruption). Sequence numbers are kept per
    stream for what this station sends; the replay window covers what it receives.
    """

    name = "native"
    sync = SYNC
    sync_offset = 0
    min_length = HEADER_SIZE + 4
    max_length = MAX_PACKET

    def __init__(
        self,
        key: bytes | None,
        *,
        sender: int = 1,
        allow_unauthenticated: bool = False,
        max_age: float = 2.0,
    ) -> None:
        if key is None and not allow_unauthenticated:
            raise ConfigError(
                "the native link needs a key (config or FREELOOK_LINK_KEY); pass "
                "allow_unauthenticated=True only to run without authentication on purpose"
            )
        if key is not None and len(key) < 16:
            raise ConfigError(f"link key of {len(key)} bytes is too short (at least 16)")
        if not 0 < sender <= 0xFFFF:
            raise ConfigError(f"station id {sender} outside 1…65535")
        self.key = key
        self.sender = sender
        self.replay = ReplayWindow(max_age)
        self.keying = Keying(key, FLAG_AUTH if key is not None else 0)

    def _packet(
        self, code: int, stream: int, payload: bytes, stamp: float, keying: Keying
    ) -> bytes:
        if len(payload) > MAX_PACKET - HEADER_SIZE - TAG_SIZE:
            raise MalformedError(f"payload of {len(payload)} bytes exceeds the packet limit")
        seq = keying.sequences.get(stream, 0)
        keying.sequences[stream] = (seq + 1) & 0xFFFFFFFF
        stamp_us = max(0, min(0xFFFFFFFFFFFFFFFF, int(stamp * 1e6)))
        body = (
            HEADER.pack(
                SYNC, VERSION, keying.flags, code, stream, self.sender, seq, stamp_us, len(payload)
            )
            + payload
        )
        if keying.key is not None:
            return body + tag(keying.key, body)
        return body + struct.pack("<I", zlib.crc32(body))

    @staticmethod
    def _stamp_ok(stamp: float) -> None:
        if not 0.0 <= stamp < 1.8e13:  # NaN fails too; u64 microseconds
            raise ValueRangeError(f"stamp {stamp!r} s is not a time the header can carry")

    def encode(self, message: Message, stamp: float, keying: Keying | None = None) -> bytes:
        """One packet for ``message`` (video frames: use :meth:`encode_video`), tagged with
        ``keying`` (default: this codec's key). A number out of its field's range (NaN, ±inf
        included) raises :class:`ValueRangeError`: nothing is sent."""
        if isinstance(message, VideoFrame):
            raise MalformedError("video frames are sent as fragments: use encode_video()")
        code = _CODE.get(type(message))
        if code is None:
            raise UnknownTypeError(f"the native profile has no {type(message).__name__}")
        self._stamp_ok(stamp)
        check_values(message, encoding=True)
        _, stream, encoder, _ = _TYPES[code]
        return self._packet(code, stream, encoder(message), stamp, keying or self.keying)

    def encode_video(
        self, frame: VideoFrame, stamp: float, keying: Keying | None = None
    ) -> list[bytes]:
        """Datagrams of at most 1200 bytes that carry one frame."""
        self._stamp_ok(stamp)
        check_values(frame, encoding=True)
        blob = _FRAME_HEAD.pack(frame.stamp, frame.width, frame.height, frame.layout) + frame.jpeg
        if len(blob) > MAX_FRAME_BYTES:
            raise MalformedError(f"frame of {len(blob)} bytes exceeds {MAX_FRAME_BYTES}")
        room = MAX_DATAGRAM - HEADER_SIZE - TAG_SIZE - _FRAGMENT.size
        count = max(1, math.ceil(len(blob) / room))
        if count > 0xFFFF:
            raise MalformedError("frame needs too many fragments")
        frame_id = frame.frame_id & 0xFFFFFFFF
        return [
            self._packet(
                20,
                Stream.VIDEO,
                _FRAGMENT.pack(frame_id, i, count, frame.stream) + blob[i * room : (i + 1) * room],
                stamp,
                keying or self.keying,
            )
            for i in range(count)
        ]

    @staticmethod
    def frame_length(buffer: bytes | bytearray, start: int) -> int:
        """Total length of the packet whose header starts at ``start`` (needs 22 bytes)."""
        if buffer[start + 2] != VERSION:
            raise FramingError(f"unsupported version {buffer[start + 2]}")
        flags = buffer[start + 3]
        payload = buffer[start + 20] | buffer[start + 21] << 8
        total = HEADER_SIZE + payload + (TAG_SIZE if flags & FLAG_AUTH else 4)
        if total > MAX_PACKET:
            raise FramingError(f"declared length {total} exceeds {MAX_PACKET}")
        return total

    header_size = HEADER_SIZE

    @staticmethod
    def parse(packet: bytes) -> Header:
        """The header, after every check that needs no cryptography: length, sync, version,
        flags, declared length, a known type on its own stream."""
        if len(packet) < HEADER_SIZE + 4:
            raise FramingError(f"packet of {len(packet)} bytes is shorter than a header")
        if len(packet) > MAX_PACKET:
            raise FramingError(f"packet of {len(packet)} bytes exceeds {MAX_PACKET}")
        sync, version, flags, code, stream, sender, seq, stamp_us, length = HEADER.unpack_from(
            packet
        )
        if sync != SYNC:
            raise FramingError(f"bad sync {sync.hex()}")
        if version != VERSION:
            raise FramingError(f"unsupported version {version}")
        if flags & ~_KNOWN_FLAGS or (flags & FLAG_SESSION and not flags & FLAG_AUTH):
            raise FramingError(f"unknown flags {flags:#04x}")
        trailer = TAG_SIZE if flags & FLAG_AUTH else 4
        if len(packet) != HEADER_SIZE + length + trailer:
            raise FramingError(f"declared payload {length} does not fit {len(packet)} bytes")
        entry = _TYPES.get(code)
        if entry is None:
            raise UnknownTypeError(f"unknown message type {code}")
        if stream != entry[1]:
            raise MalformedError(f"{entry[0].__name__} on stream {stream}, expected {entry[1]}")
        return Header(flags, code, stream, sender, seq, stamp_us, length)

    @staticmethod
    def verify(packet: bytes, header: Header, key: bytes | None) -> None:
        """Check the tag with ``key`` (or, without a key, the CRC-32 of a plain packet)."""
        authenticated = bool(header.flags & FLAG_AUTH)
        trailer = TAG_SIZE if authenticated else 4
        body, tail = packet[:-trailer], packet[-trailer:]
        if key is not None:
            if not authenticated:
                raise AuthenticationError("unauthenticated packet refused (a key is set)")
            if not tags_equal(tag(key, body), tail):
                raise AuthenticationError(
                    f"tag does not verify (station {header.sender}, seq {header.sequence})"
                )
        else:
            if authenticated:
                raise AuthenticationError("authenticated packet but no key to verify it")
            if struct.unpack("<I", tail)[0] != zlib.crc32(body):
                raise ChecksumError("CRC-32 does not match")

    @staticmethod
    def payload(packet: bytes, header: Header) -> Message:
        """The message a verified packet carries, every number checked against its range."""
        cls, _, _, decoder = _TYPES[header.code]
        try:
            message = decoder(packet[HEADER_SIZE : HEADER_SIZE + header.length])
        except struct.error as err:
            raise MalformedError(f"{cls.__name__}: {err}") from None
        check_values(message)
        return message

    def decode(self, data: bytes | bytearray | memoryview) -> Decoded:
        """Verify and decode one packet; raises a ProtocolError subclass when it is refused.

        This is the one-key profile without sessions: packets tagged with a session key are
        refused (a :class:`LinkSession` with a ``role`` decodes those)."""
        packet = bytes(data)
        header = self.parse(packet)
        if header.flags & FLAG_SESSION:
            raise SessionError("a session packet, and this end has no sessions")
        self.verify(packet, header, self.key)
        message = self.payload(packet, header)
        stamp = header.stamp
        if self.key is not None:
            self.replay.check(header.sender, header.stream, header.sequence, stamp)
        return Decoded(message, stamp, len(packet), header.sender, header.stream, header.sequence)
