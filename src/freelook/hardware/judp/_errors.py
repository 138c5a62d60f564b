"""The package's error: a :class:`freelook.errors.HardwareError` about a JAUS robot."""

from __future__ import annotations

from freelook.errors import HardwareError

__all__ = ["JausRobotError"]


class JausRobotError(HardwareError):
    """The JAUS robot does not answer discovery, refuses control, or offers no drive service.

    The message names the address, what was asked and what (if anything) was answered.
    """
