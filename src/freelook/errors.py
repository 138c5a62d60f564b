"""The exception tree shared by every freelook package.

FreelookError
├── ConfigError        a configuration file is missing, malformed or invalid
├── WorldError         a world/map file cannot be loaded
├── ProtocolError      bytes that do not form a valid packet (codecs raise, transports count)
├── ModeError          a drive mode cannot run on this robot (e.g. FLC without a pan unit)
└── HardwareError      a robot's hardware cannot be reached or does not answer as expected
"""

from __future__ import annotations

__all__ = [
    "ConfigError",
    "FreelookError",
    "HardwareError",
    "ModeError",
    "ProtocolError",
    "WorldError",
]


class FreelookError(Exception):
    """Base class of every error freelook raises on purpose."""


class ConfigError(FreelookError):
    """A configuration file is missing, malformed or fails validation.

    ``problems`` holds one human-readable line per problem, each naming the file and field.
    """

    def __init__(self, message: str, problems: list[str] | None = None) -> None:
        super().__init__(message)
        self.problems: list[str] = problems if problems is not None else [message]


class WorldError(FreelookError):
    """A world or map file cannot be loaded; the message names the file and line or field."""


class ProtocolError(FreelookError):
    """Bytes that do not form a valid packet."""


class ModeError(FreelookError):
    """A drive mode cannot run on this robot; the message says why."""


class HardwareError(FreelookError):
    """Hardware cannot be reached or does not answer; the message names the port or host."""
