"""JUDP (SAE AS5669A) framing and the JAUS general transport header, sans-I/O.

One UDP datagram holds a transport version byte (2) and one or more JAUS messages, each with
the 14-byte general transport header around its payload (little-endian throughout):

| offset | field | type |
|---|---|---|
| 0 | message type (bits 2–7, 0: JAUS message) and header compression flags (bits 0–1) | u8 |
| 1 | data size: this message from its type byte to its sequence number | u16 |
| 3 | properties: priority (bits 0–1), broadcast (2–3), ACK/NAK (4–5), data flags (6–7) | u8 |
| 4 | destination id: component, node, subsystem | u8, u8, u16 |
| 8 | source id | u8, u8, u16 |
| 12 | payload: message code (u16) and body | … |
| size−2 | sequence number | u16 |

The flag bits follow the JR Middleware reference implementation. Header compression and
multi-packet messages are not supported: such a message is refused (:class:`JudpError`), as
is anything truncated, oversized or inconsistent; the caller drops it and counts it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

__all__ = [
    "HEADER_SIZE",
    "JUDP_VERSION",
    "MAX_DATAGRAM",
    "AckNak",
    "JausId",
    "JudpError",
    "JudpMessage",
    "pack_judp",
    "parse_judp",
]

JUDP_VERSION = 2
HEADER_SIZE = 14  # type, size, properties, destination, source, sequence number
MAX_DATAGRAM = 4096  # bytes; JAUS messages this gateway takes are far smaller
_HEADER = struct.Struct("<BHBBBHBBH")  # type … source (12 bytes), then payload, then u16 seq
_SEQUENCE = struct.Struct("<H")


class JudpError(ValueError):
    """A datagram or message that is not well-formed JUDP (dropped and counted)."""


class AckNak(IntEnum):
    NONE = 0
    REQUIRED = 1
    NAK = 2
    ACK = 3


@dataclass(frozen=True, slots=True, order=True)
class JausId:
    """A JAUS address; 0xFFFF / 0xFF are the broadcast wildcards."""

    subsystem: int
    node: int
    component: int

    def matches(self, other: JausId) -> bool:
        """Whether a message addressed to ``self`` reaches ``other`` (wildcards match)."""
        return (
            self.subsystem in (other.subsystem, 0xFFFF)
            and self.node in (other.node, 0xFF)
            and self.component in (other.component, 0xFF)
        )

    def __str__(self) -> str:
        return f"{self.subsystem}.{self.node}.{self.component}"


@dataclass(frozen=True, slots=True)
class JudpMessage:
    """One JAUS message as carried by JUDP; ``payload`` is the message code and body."""

    destination: JausId
    source: JausId
    payload: bytes
    sequence: int = 0
    priority: int = 1  # 0 low, 1 standard, 2 high, 3 safety critical
    broadcast: int = 0
    ack_nak: AckNak = AckNak.NONE

    @property
    def code(self) -> int:
        """The message code (0 when there is no payload, as in a bare ACK)."""
        return int.from_bytes(self.payload[:2], "little") if len(self.payload) >= 2 else 0

    @property
    def body(self) -> bytes:
        return self.payload[2:]


def parse_judp(datagram: bytes) -> list[JudpMessage]:
    """Every message of one datagram; :class:`JudpError` for any malformed part."""
    if len(datagram) > MAX_DATAGRAM:
        raise JudpError(f"datagram of {len(datagram)} bytes exceeds {MAX_DATAGRAM}")
    if not datagram:
        raise JudpError("empty datagram")
    if datagram[0] != JUDP_VERSION:
        raise JudpError(f"transport version {datagram[0]} (only {JUDP_VERSION}, AS5669A)")
    messages: list[JudpMessage] = []
    offset = 1
    while offset < len(datagram):
        if len(datagram) - offset < HEADER_SIZE:
            raise JudpError(f"truncated header at byte {offset}")
        kind, size, props, dc, dn, ds, sc, sn, ss = _HEADER.unpack_from(datagram, offset)
        if kind & 0x03:
            raise JudpError("header compression is not supported")
        if kind >> 2 != 0:
            raise JudpError(f"message type {kind >> 2} is not a JAUS message")
        if size < HEADER_SIZE or size == HEADER_SIZE + 1:
            raise JudpError(f"data size {size} is shorter than a header and a message code")
        if offset + size > len(datagram):
            raise JudpError(f"data size {size} runs past the datagram ({len(datagram)} bytes)")
        if props >> 6 != 0:
            raise JudpError("multi-packet messages are not supported")
        start = offset + _HEADER.size
        end = offset + size - _SEQUENCE.size
        (sequence,) = _SEQUENCE.unpack_from(datagram, end)
        messages.append(
            JudpMessage(
                destination=JausId(ds, dn, dc),
                source=JausId(ss, sn, sc),
                payload=bytes(datagram[start:end]),
                sequence=sequence,
                priority=props & 0x03,
                broadcast=(props >> 2) & 0x03,
                ack_nak=AckNak((props >> 4) & 0x03),
            )
        )
        offset += size
    return messages


def pack_judp(messages: list[JudpMessage]) -> bytes:
    """One datagram carrying ``messages``."""
    out = bytearray([JUDP_VERSION])
    for m in messages:
        for name, value, limit in (
            ("priority", m.priority, 3),
            ("broadcast", m.broadcast, 3),
            ("sequence", m.sequence, 0xFFFF),
        ):
            if not 0 <= value <= limit:
                raise JudpError(f"{name} {value} is out of 0…{limit}")
        size = HEADER_SIZE + len(m.payload)
        props = m.priority | (m.broadcast << 2) | (int(m.ack_nak) << 4)
        d, s = m.destination, m.source
        out += _HEADER.pack(
            0, size, props, d.component, d.node, d.subsystem, s.component, s.node, s.subsystem
        )
        out += m.payload
        out += _SEQUENCE.pack(m.sequence)
    if len(out) > MAX_DATAGRAM:
        raise JudpError(f"datagram of {len(out)} bytes exceeds {MAX_DATAGRAM}")
    return bytes(out)
