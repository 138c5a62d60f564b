"""The thesis's packet format (the thesis §5.1, docs/design.md §4), byte-exact, little-endian.

    length u8 | 0xFF 0xFA | type u8 | sub_type u8 | payload | time u32 (ms) | CRC-16 u16

Units on the wire: mm, mm/s, degrees, deg/s, ms; finite values beyond the integer ranges
saturate (never wrap around); a NaN or ±inf is refused (:class:`ValueRangeError`), except in
the range arrays (laser, sonar), where +inf is the longest range and NaN no reading. Decoded
values are checked against their fields' ranges like the native profile's. The profile has no
authentication: anyone on the radio can command the robot.

Types: 0xA1 position (robot → operator), 0xA2 command (operator → robot) with sub-types 0 none,
1 set Tx, 2 set Tx spacing, 3 set velocity (wheels), 4 set control velocity (v, ω).
"""

from __future__ import annotations

import functools
import math
import struct

from freelook.link._crc import crc16_ccitt_false
from freelook.link._decoded import Decoded
from freelook.link._errors import (
    ChecksumError,
    FramingError,
    MalformedError,
    UnknownTypeError,
    ValueRangeError,
)
from freelook.link._messages import (
    Heartbeat,
    Message,
    PositionReport,
    SetTransmission,
    SetTransmissionSpacing,
    Telemetry,
    VelocityCommand,
    WheelSpeedCommand,
)
from freelook.link._values import check_values

__all__ = ["ThesisCodec", "position_from_telemetry"]

SYNC = b"\xff\xfa"
TYPE_POSITION = 0xA1
TYPE_COMMAND = 0xA2
SUB_NONE, SUB_SET_TX, SUB_TX_SPACING, SUB_VELOCITY, SUB_CONTROL_VELOCITY = range(5)
LASER_READINGS = 35
SONAR_READINGS = 8
MIN_LENGTH = 11
POSITION_LENGTH = 107

_HEAD = struct.Struct("<BBBBB")
_TAIL = struct.Struct("<IH")
_U8 = struct.Struct("<B")
_U16 = struct.Struct("<H")
_I16x2 = struct.Struct("<hh")
_POSITION = struct.Struct(f"<5h{LASER_READINGS}H{SONAR_READINGS}H")
_PAYLOAD_SIZE = {
    SUB_NONE: 0,
    SUB_SET_TX: 1,
    SUB_TX_SPACING: 2,
    SUB_VELOCITY: 4,
    SUB_CONTROL_VELOCITY: 4,
}


def _finite(value: float, what: str) -> float:
    if not math.isfinite(value):
        raise ValueRangeError(f"{what} = {value!r} is not finite")
    return value


def _i16(value: float, what: str) -> int:
    return max(-32768, min(32767, round(_finite(value, what))))


def _u16(value: float, what: str) -> int:
    return max(0, min(65535, round(_finite(value, what))))


def _range_mm(value: float) -> int:
    """A range reading as u16 mm: NaN (no reading) 0, beyond 65.535 m (or +inf) 65535."""
    if value != value:
        return 0
    return 65535 if value >= 65.535 else max(0, round(value * 1000))


def _heading_deg(theta: float) -> int:
    deg = math.degrees(math.remainder(_finite(theta, "PositionReport.theta"), 2 * math.pi))
    return max(-180, min(180, round(deg)))


@functools.cache
def _laser_picks(n: int) -> tuple[int, ...]:
    """Which of a scan's ``n`` readings the packet's LASER_READINGS are, evenly spread."""
    return tuple(round(i * (n - 1) / (LASER_READINGS - 1)) for i in range(LASER_READINGS))


def position_from_telemetry(t: Telemetry) -> PositionReport:
    """What the thesis's position packet can carry of a telemetry record."""
    laser: tuple[float, ...] = ()
    if t.laser:
        laser = tuple(t.laser[i] for i in _laser_picks(len(t.laser)))
    sonar = tuple(t.sonar[8:16]) if len(t.sonar) >= 16 else tuple(t.sonar[:SONAR_READINGS])
    return PositionReport(t.pose[0], t.pose[1], t.pose[2], t.v, t.omega, laser, sonar)


class ThesisCodec:
    """Encoder and decoder of the thesis profile."""

    name = "thesis"
    sync = SYNC
    sync_offset = 1  # the length byte comes first
    min_length = MIN_LENGTH
    max_length = POSITION_LENGTH

    @staticmethod
    def _frame(ptype: int, sub: int, payload: bytes, tick_ms: int) -> bytes:
        length = MIN_LENGTH + len(payload)
        body = _HEAD.pack(length, 0xFF, 0xFA, ptype, sub) + payload
        body += struct.pack("<I", tick_ms & 0xFFFFFFFF)
        return body + struct.pack("<H", crc16_ccitt_false(body))

    def encode(self, message: Message, stamp: float) -> bytes:
        """Bytes of ``message``; ``stamp`` (s) goes out as the millisecond tick (which wraps,
        as the thesis's does). A NaN or ±inf is refused with :class:`ValueRangeError`."""
        tick = int(_finite(stamp, "stamp") * 1000.0)
        if isinstance(message, VelocityCommand):
            payload = _I16x2.pack(
                _i16(message.v * 1000, "VelocityCommand.v"),
                _i16(math.degrees(message.omega), "VelocityCommand.omega"),
            )
            return self._frame(TYPE_COMMAND, SUB_CONTROL_VELOCITY, payload, tick)
        if isinstance(message, WheelSpeedCommand):
            payload = _I16x2.pack(
                _i16(message.left * 1000, "WheelSpeedCommand.left"),
                _i16(message.right * 1000, "WheelSpeedCommand.right"),
            )
            return self._frame(TYPE_COMMAND, SUB_VELOCITY, payload, tick)
        if isinstance(message, SetTransmission):
            return self._frame(TYPE_COMMAND, SUB_SET_TX, _U8.pack(int(message.enabled)), tick)
        if isinstance(message, SetTransmissionSpacing):
            payload = _U16.pack(_u16(message.spacing * 1000, "SetTransmissionSpacing.spacing"))
            return self._frame(TYPE_COMMAND, SUB_TX_SPACING, payload, tick)
        if isinstance(message, Heartbeat):
            return self._frame(TYPE_COMMAND, SUB_NONE, b"", tick)
        if isinstance(message, Telemetry):
            message = position_from_telemetry(message)
        if isinstance(message, PositionReport):
            laser = list(message.laser[:LASER_READINGS])
            laser += [0.0] * (LASER_READINGS - len(laser))
            sonar = list(message.sonar[:SONAR_READINGS])
            sonar += [0.0] * (SONAR_READINGS - len(sonar))
            payload = _POSITION.pack(
                _i16(message.x * 1000, "PositionReport.x"),
                _i16(message.y * 1000, "PositionReport.y"),
                _heading_deg(message.theta),
                _i16(message.v * 1000, "PositionReport.v"),
                _i16(math.degrees(message.omega), "PositionReport.omega"),
                *(_range_mm(r) for r in laser),
                *(_range_mm(r) for r in sonar),
            )
            return self._frame(TYPE_POSITION, 0, payload, tick)
        raise UnknownTypeError(f"the thesis profile cannot carry {type(message).__name__}")

    @staticmethod
    def frame_length(buffer: bytes | bytearray, start: int) -> int:
        """Declared length of the packet at ``start`` (the byte before the sync pair)."""
        length = buffer[start]
        if not MIN_LENGTH <= length <= POSITION_LENGTH:
            raise FramingError(f"length byte {length} outside {MIN_LENGTH}…{POSITION_LENGTH}")
        return length

    def decode(self, data: bytes | bytearray | memoryview) -> Decoded:
        """The message in one complete packet; raises a ProtocolError subclass if invalid."""
        packet = bytes(data)
        if len(packet) < MIN_LENGTH:
            raise FramingError(f"packet of {len(packet)} bytes is shorter than {MIN_LENGTH}")
        length, sync1, sync2, ptype, sub = _HEAD.unpack_from(packet)
        if (sync1, sync2) != (0xFF, 0xFA):
            raise FramingError(f"bad sync bytes {sync1:#04x} {sync2:#04x}")
        if length != len(packet):
            raise FramingError(f"length byte says {length}, packet has {len(packet)} bytes")
        tick, crc = _TAIL.unpack_from(packet, length - 6)
        computed = crc16_ccitt_false(packet[: length - 2])
        if crc != computed:
            raise ChecksumError(f"CRC {crc:#06x} does not match computed {computed:#06x}")
        payload = packet[5 : length - 6]
        stamp = tick / 1000.0
        message: Message
        if ptype == TYPE_POSITION:
            if len(payload) != _POSITION.size:
                raise MalformedError(f"position payload of {len(payload)} bytes, expected 96")
            v = _POSITION.unpack(payload)
            if not -180 <= v[2] <= 180:
                raise ValueRangeError(f"PositionReport heading {v[2]} deg outside -180…180")
            message = PositionReport(
                v[0] / 1000,
                v[1] / 1000,
                math.radians(v[2]),
                v[3] / 1000,
                math.radians(v[4]),
                tuple(r / 1000 for r in v[5 : 5 + LASER_READINGS]),
                tuple(r / 1000 for r in v[5 + LASER_READINGS :]),
            )
        elif ptype == TYPE_COMMAND:
            expected = _PAYLOAD_SIZE.get(sub)
            if expected is None:
                raise UnknownTypeError(f"unknown command sub-type {sub}")
            if len(payload) != expected:
                raise MalformedError(
                    f"sub-type {sub} payload of {len(payload)} bytes, expected {expected}"
                )
            if sub == SUB_NONE:
                message = Heartbeat()
            elif sub == SUB_SET_TX:
                if payload[0] > 1:
                    raise MalformedError(f"set Tx value {payload[0]} is neither 0 nor 1")
                message = SetTransmission(bool(payload[0]))
            elif sub == SUB_TX_SPACING:
                message = SetTransmissionSpacing(_U16.unpack(payload)[0] / 1000)
            elif sub == SUB_VELOCITY:
                left, right = _I16x2.unpack(payload)
                message = WheelSpeedCommand(left / 1000, right / 1000)
            else:
                v_mm, w_deg = _I16x2.unpack(payload)
                message = VelocityCommand(v_mm / 1000, math.radians(w_deg))
        else:
            raise UnknownTypeError(f"unknown packet type {ptype:#04x}")
        check_values(message)
        return Decoded(message, stamp, length)
