"""Small planar-geometry helpers shared by every layer (angles in radians)."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

__all__ = ["rotation", "wrap_angle", "wrap_angles"]

_TWO_PI = 2.0 * math.pi


def wrap_angle(angle: float) -> float:
    """Wrap an angle to (−π, π], so that comparing or subtracting headings never jumps by 2π."""
    wrapped = math.fmod(angle + math.pi, _TWO_PI)
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
