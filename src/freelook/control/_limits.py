"""Ratio-preserving velocity limits (seed 004 eqs. 5.1–5.4).

When v or ω exceeds its maximum, both are scaled by one factor so v/ω is kept (the robot
follows the same arc, slower). A minimum raises a too-small non-zero command the same way, so
motors that stall below a threshold still move (and a zero command stays zero).
"""

from __future__ import annotations

__all__ = ["limit_velocity"]


def limit_velocity(
    v: float,
    omega: float,
    v_max: float,
    omega_max: float,
    v_min: float = 0.0,
    omega_min: float = 0.0,
) -> tuple[float, float]:
    """Scale (v, ω) by one factor so |v| ≤ v_max and |ω| ≤ ω_max (then apply the minimums)."""
    scale = 1.0
    if abs(v) > v_max:
        scale = v_max / abs(v)
    if abs(omega) * scale > omega_max:
        scale = omega_max / abs(omega)
    v, omega = v * scale, omega * scale
    if v != 0.0 or omega != 0.0:
        up = 1.0
        if 0.0 < abs(v) < v_min:
            up = v_min / abs(v)
        if 0.0 < abs(omega) * up < omega_min:
            up = omega_min / abs(omega)
        # raising must not break a maximum
        if abs(v) * up <= v_max and abs(omega) * up <= omega_max:
            v, omega = v * up, omega * up
    return v, omega
