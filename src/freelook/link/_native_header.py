"""The native profile's fixed header (docs/protocol.md), written and read.

    0  sync 0xFE 0x4C | 2 version | 3 flags | 4 type | 5 stream | 6 sender u16 | 8 sequence u32
    12 stamp u64 (µs) | 20 payload length u16 | 22 payload [| expiry u64 µs] | tag (16 B,
    keyed BLAKE2s) or CRC-32

All integers little-endian. Flag bit 0 marks an authenticated packet (a tag, else a CRC-32);
bit 1 a packet tagged with a session key (see ``_handshake.py``) rather than the station key;
bit 2 a control-stream packet whose last 8 payload bytes are its expiry: the time on the
receiver's clock (µs) after which it must not act. A receiver that does not know bit 2 refuses
the packet (unknown flags), so an expiring command is never taken for one that does not expire.
Reading a header is the first, cheapest stage of decoding: no cryptography.
"""

from __future__ import annotations

import struct
from typing import NamedTuple

from freelook.link._auth import TAG_SIZE
from freelook.link._decoded import Decoded
from freelook.link._errors import FramingError, MalformedError, UnknownTypeError
from freelook.link._messages import Message
from freelook.link._native_payloads import TYPES

__all__ = [
    "EXPIRY",
    "FLAG_AUTH",
    "FLAG_EXPIRES",
    "FLAG_SESSION",
    "HEADER",
    "HEADER_SIZE",
    "MAX_DATAGRAM",
    "MAX_PACKET",
    "SYNC",
    "VERSION",
    "Header",
    "frame_length",
    "read_header",
]

SYNC = b"\xfe\x4c"
VERSION = 1
FLAG_AUTH = 0x01
FLAG_SESSION = 0x02  # tagged with a session key (implies FLAG_AUTH)
FLAG_EXPIRES = 0x04  # a control-stream packet whose payload ends with its expiry
_KNOWN_FLAGS = FLAG_AUTH | FLAG_SESSION | FLAG_EXPIRES
EXPIRY = struct.Struct("<Q")  # µs on the receiver's clock
HEADER = struct.Struct("<2sBBBBHIQH")
HEADER_SIZE = HEADER.size  # 22
MAX_PACKET = 4096
MAX_DATAGRAM = 1200
_CONTROL = 0  # the stream whose packets may expire


class Header(NamedTuple):
    """The fixed header of a native packet, as :func:`read_header` read it."""

    flags: int
    code: int
    stream: int
    sender: int
    sequence: int
    stamp_us: int
    length: int  # the message's payload bytes (without the expiry)
    expires_us: int | None = None

    @property
    def stamp(self) -> float:
        return self.stamp_us / 1e6

    @property
    def expires(self) -> float | None:
        """The time (s, on the receiver's clock) after which the packet must not act."""
        return None if self.expires_us is None else self.expires_us / 1e6

    @property
    def message_type(self) -> type:
        return TYPES[self.code][0]

    def decoded(self, message: Message, size: int) -> Decoded:
        """``message``, read from a packet of ``size`` bytes that carried this header."""
        return Decoded(
            message, self.stamp, size, self.sender, self.stream, self.sequence, self.expires
        )


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


def read_header(packet: bytes) -> Header:
    """The header, after every check that needs no cryptography: length, sync, version,
    flags, declared length, a known type on its own stream."""
    if len(packet) < HEADER_SIZE + 4:
        raise FramingError(f"packet of {len(packet)} bytes is shorter than a header")
    if len(packet) > MAX_PACKET:
        raise FramingError(f"packet of {len(packet)} bytes exceeds {MAX_PACKET}")
    sync, version, flags, code, stream, sender, seq, stamp_us, length = HEADER.unpack_from(packet)
    if sync != SYNC:
        raise FramingError(f"bad sync {sync.hex()}")
    if version != VERSION:
        raise FramingError(f"unsupported version {version}")
    if flags & ~_KNOWN_FLAGS or (flags & FLAG_SESSION and not flags & FLAG_AUTH):
        raise FramingError(f"unknown flags {flags:#04x}")
    trailer = TAG_SIZE if flags & FLAG_AUTH else 4
    if len(packet) != HEADER_SIZE + length + trailer:
        raise FramingError(f"declared payload {length} does not fit {len(packet)} bytes")
    entry = TYPES.get(code)
    if entry is None:
        raise UnknownTypeError(f"unknown message type {code}")
    if stream != entry[1]:
        raise MalformedError(f"{entry[0].__name__} on stream {stream}, expected {entry[1]}")
    expires_us = None
    if flags & FLAG_EXPIRES:
        if stream != _CONTROL or length < EXPIRY.size:
            raise MalformedError(f"an expiry on {entry[0].__name__} ({length} payload bytes)")
        length -= EXPIRY.size
        (expires_us,) = EXPIRY.unpack_from(packet, HEADER_SIZE + length)
    return Header(flags, code, stream, sender, seq, stamp_us, length, expires_us)
