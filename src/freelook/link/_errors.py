"""Why a packet was refused. Decoders raise these; transports and statistics count them."""

from __future__ import annotations

from freelook.errors import ProtocolError

__all__ = [
    "AuthenticationError",
    "ChecksumError",
    "FramingError",
    "MalformedError",
    "ReplayError",
    "UnknownTypeError",
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


class AuthenticationError(ProtocolError):
    """The tag does not verify: forged, corrupted, or signed with another key."""


class ReplayError(ProtocolError):
    """A sequence number already seen or too old, or a stale time stamp."""


def rejection_reason(err: ProtocolError) -> str:
    """The statistics' name for why a packet was refused: crc, auth, replay or malformed."""
    if isinstance(err, ChecksumError):
        return "crc"
    if isinstance(err, ReplayError):
        return "replay"
    if isinstance(err, AuthenticationError):
        return "auth"
    return "malformed"
