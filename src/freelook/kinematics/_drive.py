"""Drive models: differential/tracked (Ögren 2013 eq. 3) and holonomic, with a pan camera.

State (z1, z2, θ, φ): reference point z, chassis heading θ, pan angle φ relative to the chassis.

A holonomic base on omni wheels (Kievit-Kylar's three-wheeled M2P2): wheel i sits at angle
aᵢ round the centre at radius R and rolls at right angles to its radius, so its surface speed
for the body twist (vx, vy, ω) is wᵢ = −sin aᵢ·vx + cos aᵢ·vy + R·ω (:func:`omni_wheel_matrix`);
three wheels not all on one line give the twist back from their speeds.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

__all__ = [
    "DriveState",
    "camera_pose",
    "drive_derivative",
    "integrate_drive",
    "integrate_holonomic",
    "omni_ground_matrix",
    "omni_wheel_matrix",
]


@dataclass(frozen=True, slots=True)
class DriveState:
    x: float
    y: float
    theta: float
    pan: float = 0.0


def drive_derivative(
    theta: float, v_left: float, v_right: float, pan_rate: float, d: float
) -> tuple[float, float, float, float]:
    """(ż1, ż2, θ̇, φ̇) of Ögren 2013 eq. 3: ż = (v_r+v_l)/2·(cos θ, sin θ), θ̇ = (v_r−v_l)/d."""
    v = 0.5 * (v_right + v_left)
    return (v * math.cos(theta), v * math.sin(theta), (v_right - v_left) / d, pan_rate)


def integrate_drive(
    state: DriveState, v_left: float, v_right: float, pan_rate: float, d: float, dt: float
) -> DriveState:
    """Exact integration over ``dt`` with constant track speeds (a circular arc)."""
    v = 0.5 * (v_right + v_left)
    omega = (v_right - v_left) / d
    theta = state.theta
    if abs(omega * dt) < 1e-9:
        x = state.x + v * dt * math.cos(theta + 0.5 * omega * dt)
        y = state.y + v * dt * math.sin(theta + 0.5 * omega * dt)
    else:
        radius = v / omega
        x = state.x + radius * (math.sin(theta + omega * dt) - math.sin(theta))
        y = state.y - radius * (math.cos(theta + omega * dt) - math.cos(theta))
    return DriveState(x, y, theta + omega * dt, state.pan + pan_rate * dt)


def integrate_holonomic(
    state: DriveState, vx: float, vy: float, omega: float, pan_rate: float, dt: float
) -> DriveState:
    """Exact integration of a holonomic base with body-frame velocity (vx, vy) and yaw rate ω."""
    theta = state.theta
    if abs(omega * dt) < 1e-9:
        c, s = math.cos(theta + 0.5 * omega * dt), math.sin(theta + 0.5 * omega * dt)
        dx, dy = (vx * c - vy * s) * dt, (vx * s + vy * c) * dt
    else:
        # ∫ R(θ + ωτ)·(vx, vy) dτ over [0, dt]
        s0, c0 = math.sin(theta), math.cos(theta)
        s1, c1 = math.sin(theta + omega * dt), math.cos(theta + omega * dt)
        dx = (vx * (s1 - s0) + vy * (c1 - c0)) / omega
        dy = (-vx * (c1 - c0) + vy * (s1 - s0)) / omega
    return DriveState(state.x + dx, state.y + dy, theta + omega * dt, state.pan + pan_rate * dt)


def camera_pose(
    x: float, y: float, theta: float, pan: float, L1: float, L2: float
) -> tuple[float, float, float]:
    """Camera position x = z + R(θ)·(L1, L2) and heading ψ = θ + φ."""
    c, s = math.cos(theta), math.sin(theta)
    return (x + c * L1 - s * L2, y + s * L1 + c * L2, theta + pan)


def omni_wheel_matrix(angles: Sequence[float], radius: float) -> npt.NDArray[np.float64]:
    """(n, 3): each omni wheel's surface speed per unit of the body twist (vx, vy, ω); wheel
    i at angle ``angles[i]`` (rad, from forward, counter-clockwise) ``radius`` m from the
    centre, rolling at right angles to its radius."""
    a = np.asarray(angles, dtype=np.float64)
    return np.column_stack([-np.sin(a), np.cos(a), np.full(len(a), radius)])


def omni_ground_matrix(
    angles: Sequence[float],
    radius: float,
    ratios: Sequence[float],
    true_radius: float | None = None,
) -> npt.NDArray[np.float64]:
    """(3, 3): the body twist the ground gives per unit of the commanded twist, on omni wheels
    whose motors turn each wheel as the nominal geometry asks (:func:`omni_wheel_matrix` at
    ``radius``) and whose true diameters are ``ratios`` times nominal, at ``true_radius``
    (default: the nominal) from the centre: the least-squares twist of the true geometry
    (exact for three wheels)."""
    nominal = omni_wheel_matrix(angles, radius)
    true = omni_wheel_matrix(angles, radius if true_radius is None else true_radius)
    ground = np.asarray(ratios, dtype=np.float64)[:, None] * nominal
    solved, *_ = np.linalg.lstsq(true, ground, rcond=None)
    return np.asarray(solved)
