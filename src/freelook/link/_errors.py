"""Why a packet was refused. Decoders raise these; transports and statistics count them.

ProtocolError
├── FramingError         bad sync, version or length                  "malformed"
├── ChecksumError        CRC mismatch                                 "crc"
├── UnknownTypeError     a type the profile does not define           "malformed"
├── MalformedError       a payload that does not fit its type         "malformed"
│   └── ValueRangeError  a number not finite or outside its field's range   "value"
├── AuthenticationError  the tag does not verify                      "auth"
│   └── SessionError     no session (or no key) for the station it claims   "session"
├── ReplayError          a sequence already seen, or a stale stamp    "replay"
└── RateLimitError       its source spent its budget of refused packets     "rate"
"""

from __future__ import annotations

from freelook.errors import ProtocolError

__all__ = [
    "AuthenticationError",
    "ChecksumError",
    "FramingError",
    "MalformedError",
    "RateLimitError",
    "ReplayError",
    "SessionError",
    "UnknownTypeError",
    "ValueRangeError",
    "rejection_reason",
]


class FramingError(ProtocolError):
    """Bad sync bytes or a length outside the profile's bounds."""


class ChecksumError(ProtocolError):
    """The CRC does not match: the packet was corrupted on the way."""


class UnknownTypeError(ProtocolError):
    """A type or sub-type this profile does not define."""


class MalformedError(ProtocolError):
    """The payload does not fit its declared type."""


class ValueRangeError(MalformedError):
    """A number that is not finite or lies outside its field's range (names field and range)."""


class AuthenticationError(ProtocolError):
    """The tag does not verify: forged, corrupted, or signed with another key."""


class SessionError(AuthenticationError):
    """No key or no open session for the station a packet claims, or a handshake that does
    not belong to this end's pending one. Refused before any cryptography."""


class ReplayError(ProtocolError):
    """A sequence number already seen or too old, or a stale time stamp."""


class RateLimitError(ProtocolError):
    """The packet's source has spent its budget of refused packets: dropped unexamined."""


def rejection_reason(err: ProtocolError) -> str:
    """The statistics' name for why a packet was refused: crc, auth, session, replay, rate,
    value or malformed."""
    if isinstance(err, ChecksumError):
        return "crc"
    if isinstance(err, ReplayError):
        return "replay"
    if isinstance(err, SessionError):
        return "session"
    if isinstance(err, AuthenticationError):
        return "auth"
    if isinstance(err, RateLimitError):
        return "rate"
    if isinstance(err, ValueRangeError):
        return "value"
    return "malformed"
