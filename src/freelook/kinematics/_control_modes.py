"""Tank Control (Ögren 2013 Lemma 1) and Free Look Control (design.md §3, generalised (L1, L2)).

Free Look Control inverts the camera's kinematics: with
M = [[1/2 + L2/d, 1/2 − L2/d], [−L1/d, L1/d]] (det M = L1/d),
(v_l, v_r) = M⁻¹·R(φ)·(v1, v2) and k = ω − (v_r − v_l)/d give ẋ = R(ψ)·(v1, v2), ψ̇ = ω:
the camera moves like a first-person character and the tracks do what is needed.
Scalar forms run every control cycle; the ``_batch`` forms map arrays of commands at once.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.errors import ModeError
from freelook.kinematics._commands import WheelCommand

__all__ = [
    "free_look_control",
    "free_look_control_batch",
    "holonomic_free_look",
    "tank_control",
    "tank_control_batch",
]

FloatArray = npt.NDArray[np.float64]


def tank_control(v: float, omega: float, d: float, pan_rate: float = 0.0) -> WheelCommand:
    """Lemma 1: v_l = v − ω·d/2, v_r = v + ω·d/2; the pan moves independently (Remark 1)."""
    half = 0.5 * omega * d
    return WheelCommand(v - half, v + half, pan_rate)


def tank_control_batch(
    v: FloatArray, omega: FloatArray, d: float, pan_rate: FloatArray | float = 0.0
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Vectorised :func:`tank_control`: arrays (v_l, v_r, k)."""
    half = 0.5 * np.asarray(omega, dtype=np.float64) * d
    v = np.asarray(v, dtype=np.float64)
    return v - half, v + half, np.broadcast_to(np.asarray(pan_rate, dtype=np.float64), v.shape)


def _check_offset(L1: float) -> None:
    if L1 == 0.0:
        raise ModeError(
            "Free Look Control needs the camera off the drive axle (L1 ≠ 0); got L1 = 0"
        )


def free_look_control(
    v1: float, v2: float, omega: float, pan: float, L1: float, L2: float, d: float
) -> WheelCommand:
    """Track speeds and pan rate that move the camera at (v1 forward, v2 left) and turn it at ω.

    ``pan`` is the measured pan angle φ of the camera relative to the chassis.
    """
    _check_offset(L1)
    c, s = math.cos(pan), math.sin(pan)
    a = c * v1 - s * v2  # R(φ)·(v1, v2)
    b = s * v1 + c * v2
    # M⁻¹ = (d/L1)·[[L1/d, −(1/2 − L2/d)], [L1/d, 1/2 + L2/d]]
    beta = d / L1
    v_left = a - beta * (0.5 - L2 / d) * b
    v_right = a + beta * (0.5 + L2 / d) * b
    return WheelCommand(v_left, v_right, omega - (v_right - v_left) / d)


def free_look_control_batch(
    v1: FloatArray,
    v2: FloatArray,
    omega: FloatArray,
    pan: FloatArray,
    L1: float,
    L2: float,
    d: float,
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Vectorised :func:`free_look_control` over arrays of commands: (v_l, v_r, k)."""
    _check_offset(L1)
    c, s = np.cos(pan), np.sin(pan)
    a = c * v1 - s * v2
    b = s * v1 + c * v2
    beta = d / L1
    v_left = a - (beta * (0.5 - L2 / d)) * b
    v_right = a + (beta * (0.5 + L2 / d)) * b
    return v_left, v_right, omega - (v_right - v_left) / d


def holonomic_free_look(
    v1: float, v2: float, omega: float, pan: float, L1: float, L2: float
) -> tuple[float, float, float, float]:
    """Free Look for a holonomic base: body twist (vx, vy, ω_body) and pan rate.

    A holonomic base can keep its heading: the camera velocity R(φ)·(v1, v2) is produced by
    the body directly (no rotation needed), and the camera turns with the pan unit alone.
    """
    del L1, L2  # with ω_body = 0 the camera offset does not move relative to the world
    c, s = math.cos(pan), math.sin(pan)
    return (c * v1 - s * v2, s * v1 + c * v2, 0.0, omega)
