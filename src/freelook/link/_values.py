"""The range of every numeric field of every message, checked at decode and at encode.

A number that is not finite or lies outside its field's range is refused with a
:class:`ValueRangeError` naming the message, the field, the value and the range; the
statistics count it as "value". The ranges are generous physical bounds (no ground robot
drives at 20 m/s), there to stop NaN, ±inf and absurd values from reaching the controllers.
Range arrays (laser, sonar) saturate when encoded (the wire carries u16 millimetres: +inf is
the longest range, NaN no reading) and are checked when decoded.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from freelook.link._errors import ValueRangeError
from freelook.link._messages import (
    ArmTelemetry,
    ArmVelocityCommand,
    AutonomyTelemetry,
    ClockEcho,
    ControlGrant,
    ControlReject,
    ControlRelease,
    ControlRequest,
    FrameLayout,
    FreeLookCommand,
    GoalStart,
    GripperCommand,
    LinearDriveStart,
    MapChunk,
    MapInfo,
    MapRequest,
    Message,
    ModeRefusal,
    PanTiltCommand,
    PositionReport,
    ReceptionReport,
    SessionChallenge,
    SessionOpen,
    SetTransmissionSpacing,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    VelocityCommand,
    VideoCodec,
    VideoFeedback,
    VideoFragment,
    VideoFrame,
    WheelSpeedCommand,
)
from freelook.link._stats_report import LinkStatsReport

__all__ = [
    "ARM_JOINTS",
    "ARM_PAIRS",
    "ARM_PHASES",
    "DIGEST_SIZE",
    "FIELD_LIMITS",
    "MAP_CHUNK",
    "MAX_AGE",
    "MAX_MAP_BYTES",
    "MAX_MAP_REQUEST",
    "MAX_REASON_BYTES",
    "MAX_STREAMS",
    "NONCE_SIZE",
    "Limit",
    "check_values",
]

NONCE_SIZE = 16
DIGEST_SIZE = 32  # SHA-256 of an encoded map
MAP_CHUNK = 1024  # bytes of encoded map per chunk (one datagram)
MAX_MAP_BYTES = 4 * 1024 * 1024  # an encoded map at most (4096 chunks)
MAX_MAP_REQUEST = 64  # chunks one map request may ask for
_MAP_NAME = re.compile(r"[A-Za-z0-9_.-]{0,64}")
SPEED = 20.0  # m/s: any linear or track speed
RATE = 50.0  # rad/s: any turn, pan or tilt rate
DISTANCE = 1e6  # m: any coordinate
ANGLE = 1e6  # rad: headings may be unwrapped
CAMERA = 1e3  # rad: pan and tilt angles
TIME = 1e11  # s: stamps (wall clock or a run's own)
DURATION = 1e6  # s: trajectory times
RANGE = 65.535  # m: what a u16 millimetre carries
U8, U16, U32 = 0xFF, 0xFFFF, 0xFFFFFFFF
ARM_JOINTS = 16  # joints an arm command or arm telemetry may carry
ARM_PAIRS = 512  # checked pairs one phase may list in telemetry
ARM_PHASES = 8  # phases arm telemetry may list as gone through since the previous report
ARM_RATE = 20.0  # rad/s or m/s: any joint velocity (the robot holds it to its URDF's limits)
GRIPPER = 1.0  # m: the widest gripper opening
MAX_STREAMS = 8  # camera streams a robot may send (0 the driving camera)
MAX_AGE = 3600.0  # s: the oldest a reception report says (older, or never: this)
MAX_REASON_BYTES = 120  # UTF-8 bytes of a mode refusal's reason
#: what a refusal's reason may hold: printable text, no control characters (it reaches pages)
_REASON = re.compile(r"[^\x00-\x1f\x7f-\x9f]*")


@dataclass(frozen=True, slots=True)
class Limit:
    low: float
    high: float
    saturates: bool = False  # an array the encoder saturates rather than refuses


def _sym(bound: float) -> Limit:
    return Limit(-bound, bound)


_STATION = Limit(0, U16)
_AUTHORITY = Limit(0, U8)
_RANGES = Limit(0.0, RANGE, saturates=True)

FIELD_LIMITS: dict[type, dict[str, Limit]] = {
    VelocityCommand: {"v": _sym(SPEED), "omega": _sym(RATE)},
    WheelSpeedCommand: {"left": _sym(SPEED), "right": _sym(SPEED)},
    TankCommand: {
        "v": _sym(SPEED),
        "omega": _sym(RATE),
        "pan_rate": _sym(RATE),
        "tilt_rate": _sym(RATE),
    },
    FreeLookCommand: {
        "v1": _sym(SPEED),
        "v2": _sym(SPEED),
        "omega": _sym(RATE),
        "tilt_rate": _sym(RATE),
    },
    PanTiltCommand: {"pan_rate": _sym(RATE), "tilt_rate": _sym(RATE)},
    ArmVelocityCommand: {"velocities": _sym(ARM_RATE)},
    GripperCommand: {"opening": Limit(0.0, GRIPPER)},
    ArmTelemetry: {
        "positions": _sym(CAMERA),
        "velocities": _sym(ARM_RATE),
        "gripper_opening": Limit(0.0, GRIPPER),
        "phase": Limit(0, 2),
        "slow_pairs": Limit(0, ARM_PAIRS - 1),
        "stop_pairs": Limit(0, ARM_PAIRS - 1),
        "phases": Limit(0, 2),
    },
    LinearDriveStart: {
        "x_start": _sym(DISTANCE),
        "x_end": _sym(DISTANCE),
        "max_speed": Limit(0.0, SPEED),
    },
    TrajectoryStart: {"t": _sym(DURATION), "x": _sym(DISTANCE), "y": _sym(DISTANCE)},
    GoalStart: {"x": _sym(DISTANCE), "y": _sym(DISTANCE)},
    SetTransmissionSpacing: {"spacing": Limit(0.0, 3600.0)},
    ReceptionReport: {
        "telemetry_overdue": Limit(0.0, MAX_AGE),
        "video_age": Limit(0.0, MAX_AGE),
        "loss_percent": Limit(0.0, 100.0),
    },
    ClockEcho: {"sent": Limit(0.0, TIME), "received": Limit(0.0, TIME)},
    ControlRequest: {"station": _STATION, "authority": _AUTHORITY},
    ControlRelease: {"station": _STATION},
    ControlGrant: {"station": _STATION, "authority": _AUTHORITY},
    ControlReject: {"station": _STATION},
    ModeRefusal: {"station": _STATION},
    Telemetry: {
        "stamp": _sym(TIME),
        "odom": _sym(max(DISTANCE, ANGLE)),
        "pose": _sym(max(DISTANCE, ANGLE)),
        "v": _sym(SPEED),
        "omega": _sym(RATE),
        "cmd_v": _sym(SPEED),
        "cmd_omega": _sym(RATE),
        "pan": _sym(CAMERA),
        "tilt": _sym(CAMERA),
        "laser_angle_min": _sym(2 * math.pi),
        "laser_angle_increment": _sym(2 * math.pi),
        "laser_range_max": Limit(0.0, 1e3),
        "laser": _RANGES,
        "sonar": _RANGES,
        "safety_zone": Limit(-128, 127),
        "safety_scale": Limit(0.0, 2.0),
        "controller": _STATION,
    },
    AutonomyTelemetry: {"progress": Limit(0.0, 1.0), "recoveries": Limit(0, U16)},
    LinkStatsReport: {
        "packets_received": Limit(0, U32),
        "packets_lost": Limit(0, U32),
        "duplicates": Limit(0, U32),
        "reordered": Limit(0, U32),
        "crc_failures": Limit(0, U32),
        "auth_failures": Limit(0, U32),
        "rx_rate_hz": Limit(0.0, 1e6),
        "tx_rate_hz": Limit(0.0, 1e6),
        "drop_percent": Limit(0.0, 100.0),
        "latency_s": _sym(1e6),
    },
    PositionReport: {
        "x": _sym(DISTANCE),
        "y": _sym(DISTANCE),
        "theta": Limit(-math.pi - 1e-6, math.pi + 1e-6),
        "v": _sym(SPEED),
        "omega": _sym(RATE),
        "laser": _RANGES,
        "sonar": _RANGES,
    },
    VideoFrame: {
        "frame_id": Limit(0, U32),
        "stamp": _sym(TIME),
        "width": Limit(0, U16),
        "height": Limit(0, U16),
        "stream": Limit(0, MAX_STREAMS - 1),
        "layout": Limit(0, max(FrameLayout)),
        "codec": Limit(0, max(VideoCodec)),
    },
    VideoFeedback: {"stream": Limit(0, MAX_STREAMS - 1), "loss": Limit(0.0, 1.0)},
    VideoFragment: {
        "frame_id": Limit(0, U32),
        "index": Limit(0, U16),
        "count": Limit(1, U16),
        "stream": Limit(0, MAX_STREAMS - 1),
    },
    MapInfo: {"size": Limit(1, MAX_MAP_BYTES)},
    MapRequest: {"first": Limit(0, MAX_MAP_BYTES // MAP_CHUNK), "count": Limit(1, MAX_MAP_REQUEST)},
    MapChunk: {
        "index": Limit(0, MAX_MAP_BYTES // MAP_CHUNK - 1),
        "count": Limit(1, MAX_MAP_BYTES // MAP_CHUNK),
    },
}

_DIGESTS = (MapInfo, MapRequest, MapChunk)

_NONCES: dict[type, tuple[str, ...]] = {
    SessionOpen: ("nonce",),
    SessionChallenge: ("client_nonce", "server_nonce"),
}


#: per message class: whether it needs more than its fields' limits (the checks after them)
_SPECIAL: dict[type, bool] = {}


def _is_special(cls: type) -> bool:
    kinds = (ArmVelocityCommand, ArmTelemetry, *_DIGESTS)
    return issubclass(cls, kinds) or cls in (Telemetry, ModeRefusal, VideoFrame, *_NONCES)


def _refuse(owner: str, name: str, value: object, limit: Limit) -> ValueRangeError:
    what = "is not finite" if isinstance(value, float) and not math.isfinite(value) else "outside"
    bounds = f"{limit.low:g}…{limit.high:g}"
    if what == "outside":
        return ValueRangeError(f"{owner}.{name} = {value!r} outside {bounds}")
    return ValueRangeError(f"{owner}.{name} = {value!r} is not finite (range {bounds})")


def check_values(
    message: Message | LinkStatsReport | ArmTelemetry | AutonomyTelemetry,
    *,
    encoding: bool = False,
) -> None:
    """Raise :class:`ValueRangeError` unless every numeric field is finite and in range.

    ``encoding``: skip the arrays the encoder saturates (their wire form is always in range).
    """
    cls = type(message)
    special = _SPECIAL.get(cls)
    if special is None:
        special = _SPECIAL[cls] = _is_special(cls)
    if special and isinstance(message, ArmVelocityCommand | ArmTelemetry):
        _check_arm(message)  # the counts first: no field of an oversize list is looked at
    limits = FIELD_LIMITS.get(cls)
    if limits is not None:
        for name, limit in limits.items():
            if encoding and limit.saturates:
                continue
            value = getattr(message, name)
            low, high = limit.low, limit.high
            if isinstance(value, tuple):
                for item in value:
                    if not low <= item <= high:  # NaN fails every comparison
                        raise _refuse(cls.__name__, name, item, limit)
            elif not low <= value <= high:
                raise _refuse(cls.__name__, name, value, limit)
    if not special:  # a command's or a report's fields alone: nothing more to look at
        return
    if cls is Telemetry:
        assert isinstance(message, Telemetry)
        check_values(message.link)
        if message.arm is not None:
            check_values(message.arm)
        if message.autonomy is not None:
            check_values(message.autonomy)
    for name in _NONCES.get(cls, ()):
        nonce = getattr(message, name)
        if len(nonce) != NONCE_SIZE:
            raise ValueRangeError(f"{cls.__name__}.{name} of {len(nonce)} bytes, not 16")
    if isinstance(message, _DIGESTS):
        _check_map(message)
    if cls is ModeRefusal:
        assert isinstance(message, ModeRefusal)
        _check_reason(message.reason)
    if cls is VideoFrame:
        assert isinstance(message, VideoFrame)
        if message.layout == FrameLayout.SIDE_BY_SIDE and message.width % 2:
            raise ValueRangeError(
                f"VideoFrame.width = {message.width} is odd: a side-by-side pair has two eyes"
            )
        if message.codec == VideoCodec.JPEG and not message.keyframe:
            raise ValueRangeError("VideoFrame: a JPEG frame is always a keyframe")


def _check_map(message: MapInfo | MapRequest | MapChunk) -> None:
    """Digests of 32 bytes, a chunk inside its map and of at most one chunk's bytes, a name
    of at most 64 letters, digits, ``_``, ``.`` or ``-`` (it ends up in pages and paths)."""
    owner = type(message).__name__
    if len(message.digest) != DIGEST_SIZE:
        raise ValueRangeError(f"{owner}.digest of {len(message.digest)} bytes, not {DIGEST_SIZE}")
    if isinstance(message, MapInfo) and not _MAP_NAME.fullmatch(message.name):
        raise ValueRangeError(f"{owner}.name {message.name[:80]!r} is not a map name")
    if isinstance(message, MapChunk):
        if message.index >= message.count:
            raise ValueRangeError(f"{owner}.index = {message.index} outside 0…{message.count - 1}")
        if not 0 < len(message.data) <= MAP_CHUNK:
            raise ValueRangeError(
                f"{owner}.data of {len(message.data)} bytes outside 1…{MAP_CHUNK}"
            )


def _check_reason(reason: str) -> None:
    """A refusal's reason: at most MAX_REASON_BYTES of UTF-8, printable."""
    size = len(reason.encode("utf-8", "surrogatepass"))
    if size > MAX_REASON_BYTES:
        raise ValueRangeError(f"ModeRefusal.reason of {size} bytes, at most {MAX_REASON_BYTES}")
    if not _REASON.fullmatch(reason):
        raise ValueRangeError(f"ModeRefusal.reason {reason[:80]!r} holds control characters")


def _check_arm(message: ArmVelocityCommand | ArmTelemetry) -> None:
    """At most 16 joints (positions and velocities alike), at most 512 pairs a phase, at most
    8 phases gone through."""
    owner = type(message).__name__
    n = len(message.velocities)
    if n > ARM_JOINTS:
        raise ValueRangeError(f"{owner}.velocities of {n} joints, at most {ARM_JOINTS}")
    if isinstance(message, ArmTelemetry):
        if len(message.positions) != n:
            raise ValueRangeError(f"{owner}: {len(message.positions)} positions and {n} velocities")
        for name in ("slow_pairs", "stop_pairs"):
            count = len(getattr(message, name))
            if count > ARM_PAIRS:
                raise ValueRangeError(f"{owner}.{name} of {count} pairs, at most {ARM_PAIRS}")
        if len(message.phases) > ARM_PHASES:
            raise ValueRangeError(
                f"{owner}.phases of {len(message.phases)} phases, at most {ARM_PHASES}"
            )
