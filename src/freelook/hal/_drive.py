"""The one drive command the robot program gives a base, and the one ratio-keeping scale.

The control step makes one :class:`DriveCommand` a cycle, carrying the command in both forms a
base may take: the body twist (v, vy, ω) and the track speeds. Each backend reads the form it
needs: a base that takes a twist (ARCOS, JAUS, ROS 2's ``cmd_vel``, a holonomic base) reads the
twist, a simulated or differential base the track speeds; none turns one form back into the
other.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from freelook.config import DriveKind

__all__ = ["DriveCommand", "DriveKind", "scale_within"]


class DriveCommand(NamedTuple):
    """One cycle's drive command: the twist and the track speeds that carry it out (a named
    tuple: one is made every control cycle)."""

    #: forward speed (m/s)
    v: float
    #: turn rate (rad/s)
    omega: float
    #: left and right track surface speeds (m/s)
    v_left: float
    v_right: float
    #: sideways speed (m/s; a holonomic base only, zero on others)
    vy: float = 0.0

    @classmethod
    def of_twist(cls, v: float, omega: float, d: float, vy: float = 0.0) -> DriveCommand:
        """The command for a twist, its track speeds those of a base of effective track
        width ``d``."""
        half = 0.5 * omega * d
        return cls(v, omega, v - half, v + half, vy)

    @classmethod
    def of_wheels(cls, left: float, right: float, d: float) -> DriveCommand:
        """The command for track speeds, its twist that of a base of effective track width
        ``d`` (for a source that thinks in track speeds)."""
        return cls((left + right) / 2, (right - left) / d, left, right)


def scale_within(values: Sequence[float], limits: Sequence[float | None]) -> float:
    """The largest factor s ≤ 1 with |s·values[i]| ≤ limits[i] for every i (a limit of None:
    none), so a command scaled by it keeps its ratios: the robot keeps its arc, only slower.

    The limits are taken in order, each lowering s only if the ones before left it over.
    """
    s = 1.0
    for value, limit in zip(values, limits, strict=True):
        if limit is not None and abs(value) * s > limit:
            s = limit / abs(value)
    return s
