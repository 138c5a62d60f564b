"""The package's error: a :class:`freelook.errors.HardwareError` about an ARCOS robot."""

from __future__ import annotations

from freelook.errors import HardwareError

__all__ = ["ArcosError"]


class ArcosError(HardwareError):
    """The robot cannot be reached, does not answer the handshake, or its link is stuck.

    The message names the host and port or the serial device, and what was expected.
    """
