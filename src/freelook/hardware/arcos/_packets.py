"""ARCOS packets: framing, checksum, command encoding and the standard SIP.

Every packet on an ARCOS link, in both directions, is::

    0xFA 0xFB | count | payload (type byte first) | checksum (high byte, low byte)

where ``count`` is the payload length plus the two checksum bytes. The checksum is the sum of
the payload read as big-endian 16-bit words (wrapping at 16 bits), with an odd last byte XOR'd
into it. Numbers inside payloads are little-endian. Commands from the client carry at most one
argument: an integer (``ARGINT`` 0x3B for ≥ 0, ``ARGNINT`` 0x1B with the absolute value for
< 0) or a length-prefixed string (``ARGSTR`` 0x2B). The robot answers with server information
packets (SIPs); the standard one (type 0x32 stopped, 0x33 moving) carries odometry, wheel
speeds, battery, stall and bumper bits and new sonar readings.
"""

from __future__ import annotations

import functools
import struct
from dataclasses import dataclass
from enum import IntEnum

from freelook.errors import ProtocolError

__all__ = [
    "MAX_PAYLOAD",
    "SIP_MOVING",
    "SIP_STOPPED",
    "SYNC",
    "ArgType",
    "Command",
    "PacketDecoder",
    "Sip",
    "checksum",
    "encode_command",
    "encode_packet",
    "parse_sip",
    "parse_sync2",
]

SYNC = b"\xfa\xfb"
MAX_PAYLOAD = 249  # ARCOS's limit; the count byte then says at most 251
MIN_COUNT = 3  # a type byte and the checksum
MAX_COUNT = MAX_PAYLOAD + 2
MAX_INT_ARG = 0x7FFF  # ARCOS integer arguments are 16-bit signed values
MAX_STR_ARG = MAX_PAYLOAD - 3  # command byte, ARGSTR, length byte

SIP_STOPPED = 0x32
SIP_MOVING = 0x33


class Command(IntEnum):
    """ARCOS client commands (Pioneer 3 operations manual; ARIA's ``ArCommands``).

    The SYNC0, SYNC1 and SYNC2 handshake packets reuse the numbers 0, 1 and 2.
    """

    PULSE = 0  # keep-alive: resets the robot's 2 s communication watchdog
    OPEN = 1  # start the servers (SIPs) after the handshake
    CLOSE = 2  # stop the servers and the motors, end the session
    ENABLE = 4  # int: 1 enables the motors, 0 disables them
    SETV = 6  # int: maximum translational velocity, mm/s
    SETRV = 10  # int: maximum rotational velocity, deg/s
    VEL = 11  # int: translational velocity, mm/s
    RVEL = 21  # int: rotational velocity, deg/s
    STOP = 29  # stop, motors stay enabled
    ESTOP = 55  # emergency stop: maximum deceleration, overrides the deceleration limit


class ArgType(IntEnum):
    """The byte that says what follows a command byte."""

    ARGINT = 0x3B  # positive (or zero) integer, little-endian uint16
    ARGNINT = 0x1B  # negative integer, its absolute value as little-endian uint16
    ARGSTR = 0x2B  # string: a length byte, then that many bytes


@functools.lru_cache(maxsize=MAX_PAYLOAD // 2 + 1)
def _words(n: int) -> struct.Struct:
    return struct.Struct(f">{n}H")


def checksum(payload: bytes | bytearray | memoryview) -> int:
    """The ARCOS checksum of a payload (type byte and data, not the header or count)."""
    n = len(payload)
    words: tuple[int, ...] = _words(n // 2).unpack_from(payload)
    total = sum(words) & 0xFFFF
    if n % 2:
        total ^= payload[n - 1]
    return total


def encode_packet(payload: bytes) -> bytes:
    """Frame a payload: header, count, payload and checksum (high byte first)."""
    if not 1 <= len(payload) <= MAX_PAYLOAD:
        raise ValueError(f"ARCOS payload of {len(payload)} bytes: must be 1 to {MAX_PAYLOAD}")
    return SYNC + bytes((len(payload) + 2,)) + payload + checksum(payload).to_bytes(2, "big")


def encode_command(command: int, argument: int | bytes | None = None) -> bytes:
    """One framed client command with an optional integer or string argument."""
    if not 0 <= command <= 0xFF:
        raise ValueError(f"ARCOS command number {command}: must be 0 to 255")
    if argument is None:
        return encode_packet(bytes((command,)))
    if isinstance(argument, bytes):
        if len(argument) > MAX_STR_ARG:
            raise ValueError(
                f"string argument of {len(argument)} bytes to command {command}: "
                f"at most {MAX_STR_ARG}"
            )
        return encode_packet(bytes((command, ArgType.ARGSTR, len(argument))) + argument)
    if not -MAX_INT_ARG <= argument <= MAX_INT_ARG:
        raise ValueError(
            f"integer argument {argument} to command {command}: must be within ±{MAX_INT_ARG}"
        )
    kind = ArgType.ARGINT if argument >= 0 else ArgType.ARGNINT
    return encode_packet(bytes((command, kind)) + abs(argument).to_bytes(2, "little"))


class PacketDecoder:
    """Splits a byte stream into checked payloads, resynchronising after anything else.

    Garbage before a header is skipped; a count outside 3..251 or a wrong checksum rejects
    the candidate and the search resumes one byte after its first sync byte, so a real packet
    hidden behind a false header is still found. The buffer never holds more than one
    maximum-size packet between calls. Every byte fed ends up in exactly one of: a returned
    packet, ``skipped_bytes``, or the (bounded) pending tail.
    """

    __slots__ = ("_buffer", "bad_checksums", "bad_counts", "packets", "skipped_bytes")

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.packets = 0
        self.bad_checksums = 0
        self.bad_counts = 0
        self.skipped_bytes = 0

    @property
    def pending(self) -> int:
        """Bytes held back as the possible start of a packet."""
        return len(self._buffer)

    def reset(self) -> None:
        """Forget a partial packet (a new connection starts clean)."""
        self.skipped_bytes += len(self._buffer)
        self._buffer.clear()

    def feed(self, data: bytes) -> list[bytes]:
        """The payloads of the complete, valid packets that ``data`` finishes."""
        buf = self._buffer
        buf += data
        out: list[bytes] = []
        i, n = 0, len(buf)
        while True:
            j = buf.find(SYNC, i)
            if j < 0:
                keep = n - 1 if n > i and buf[n - 1] == SYNC[0] else n  # a lone 0xFA may start one
                self.skipped_bytes += keep - i
                i = keep
                break
            self.skipped_bytes += j - i
            i = j
            if n - i < 3:
                break
            count = buf[i + 2]
            if not MIN_COUNT <= count <= MAX_COUNT:
                self.bad_counts += 1
                self.skipped_bytes += 1
                i += 1
                continue
            end = i + 3 + count
            if end > n:
                break
            payload = bytes(buf[i + 3 : end - 2])
            if checksum(payload) != (buf[end - 2] << 8 | buf[end - 1]):
                self.bad_checksums += 1
                self.skipped_bytes += 1
                i += 1
                continue
            out.append(payload)
            self.packets += 1
            i = end
        del buf[:i]
        return out


_SIP_HEAD = struct.Struct("<HHhhhBHhHBB")  # x y th vl vr battery stall control flags compass n
_SONAR = struct.Struct("<BH")


@dataclass(frozen=True, slots=True)
class Sip:
    """The standard server information packet, in ARCOS's own units."""

    moving: bool  # type 0x33 (else 0x32, motors stopped)
    x: int  # mm, 15-bit, wraps at 32768
    y: int
    th: int  # angle units, 4096 per revolution
    left_velocity: int  # mm/s
    right_velocity: int
    battery: int  # 0.1 V
    stall_bumpers: int  # bit 0/8: left/right wheel stalled; bits 1–7 rear, 9–15 front bumpers
    control: int  # heading setpoint, angle units
    flags: int  # bit 0: motors enabled
    compass: int  # 2° units
    sonar: tuple[tuple[int, int], ...]  # (sonar number, range mm) for the new readings

    @property
    def left_stalled(self) -> bool:
        return bool(self.stall_bumpers & 0x0001)

    @property
    def right_stalled(self) -> bool:
        return bool(self.stall_bumpers & 0x0100)

    @property
    def front_bumpers(self) -> int:
        """Bit i − 1 set: front bumper segment i pressed (as ARIA reads the high byte)."""
        return (self.stall_bumpers >> 9) & 0x7F

    @property
    def rear_bumpers(self) -> int:
        return (self.stall_bumpers >> 1) & 0x7F

    @property
    def motors_enabled(self) -> bool:
        return bool(self.flags & 0x0001)


def parse_sip(payload: bytes) -> Sip:
    """Decode a standard SIP payload (type byte first); extra trailing fields are ignored."""
    if not payload or payload[0] not in (SIP_STOPPED, SIP_MOVING):
        kind = f"0x{payload[0]:02X}" if payload else "empty"
        raise ProtocolError(f"packet type {kind} is not a standard SIP (0x32 or 0x33)")
    need = 1 + _SIP_HEAD.size
    if len(payload) < need:
        raise ProtocolError(f"SIP of {len(payload)} bytes: the fixed part needs {need}")
    x, y, th, vl, vr, battery, stall, control, flags, compass, n = _SIP_HEAD.unpack_from(payload, 1)
    need += n * _SONAR.size
    if len(payload) < need:
        raise ProtocolError(f"SIP with {n} sonar readings has {len(payload)} bytes, needs {need}")
    start = 1 + _SIP_HEAD.size
    sonar = tuple(_SONAR.unpack_from(payload, start + k * _SONAR.size) for k in range(n))
    return Sip(
        payload[0] == SIP_MOVING,
        x & 0x7FFF,
        y & 0x7FFF,
        th,
        vl,
        vr,
        battery,
        stall,
        control,
        flags,
        compass,
        sonar,
    )


def parse_sync2(payload: bytes) -> tuple[str, str, str]:
    """The robot's name, type and subtype from its SYNC2 echo (NUL-terminated strings)."""
    parts = payload[1:].split(b"\0")
    name, kind, subtype = ([*parts, b"", b"", b""])[:3]
    return name.decode("latin-1"), kind.decode("latin-1"), subtype.decode("latin-1")
