"""Planar geometry shared by every layer: the SE(2) pose and angle helpers (radians)."""

from __future__ import annotations

import math
from typing import NamedTuple

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["Pose", "rotation", "wrap_angle", "wrap_angle_compiled", "wrap_angles"]

_TWO_PI = 2.0 * math.pi


def wrap_angle(angle: float) -> float:
    """Wrap an angle to (−π, π], so that comparing or subtracting headings never jumps by 2π."""
    wrapped = math.fmod(angle + math.pi, _TWO_PI)
    if wrapped <= 0.0:
        wrapped += _TWO_PI
    return wrapped - math.pi


@numba.njit(cache=True, nogil=True, inline="always")
def wrap_angle_compiled(angle: float) -> float:
    """:func:`wrap_angle` for compiled code, to the bit (fmod is exact in both)."""
    wrapped: float = np.fmod(angle + math.pi, _TWO_PI)
    if wrapped <= 0.0:
        wrapped += _TWO_PI
    return wrapped - math.pi


def wrap_angles(angles: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """Vectorised :func:`wrap_angle`."""
    a = np.asarray(angles, dtype=np.float64)
    wrapped = np.mod(a + math.pi, _TWO_PI)
    wrapped = np.where(wrapped <= 0.0, wrapped + _TWO_PI, wrapped)
    return wrapped - math.pi


def rotation(angle: float) -> npt.NDArray[np.float64]:
    """The 2-D rotation matrix R(angle)."""
    c, s = math.cos(angle), math.sin(angle)
    return np.array([[c, -s], [s, c]])


class Pose(NamedTuple):
    """A planar pose (SE(2)): position (m) and heading θ (rad) in some frame.

    A tuple, so it unpacks as ``x, y, theta`` wherever a plain (x, y, θ) is expected.
    """

    x: float
    y: float
    theta: float

    def compose(self, d: tuple[float, float, float]) -> Pose:
        """This pose moved by ``d``, given in this pose's frame."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        return Pose(
            self.x + c * d[0] - s * d[1],
            self.y + s * d[0] + c * d[1],
            wrap_angle(self.theta + d[2]),
        )

    def relative(self, other: tuple[float, float, float]) -> Pose:
        """``other`` in this pose's frame (so ``self.compose(self.relative(b)) == b``)."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        dx, dy = other[0] - self.x, other[1] - self.y
        return Pose(c * dx + s * dy, -s * dx + c * dy, wrap_angle(other[2] - self.theta))

    def inverse(self) -> Pose:
        """The motion that undoes this one (``self.compose(self.inverse())`` is the origin)."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        return Pose(-c * self.x - s * self.y, s * self.x - c * self.y, wrap_angle(-self.theta))
