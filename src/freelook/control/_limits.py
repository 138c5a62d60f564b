"""Ratio-preserving velocity limits (the thesis eqs. 5.1–5.4).

When v or ω exceeds its maximum, both are scaled by one factor so v/ω is kept (the robot
follows the same arc, slower). A minimum raises a too-small non-zero command the same way, so
motors that stall below a threshold still move (and a zero command stays zero).
"""

from __future__ import annotations

import math

from freelook.hal import scale_within

__all__ = ["limit_velocity", "thesis_limit_velocity"]


def limit_velocity(
    v: float,
    omega: float,
    v_max: float,
    omega_max: float,
    v_min: float = 0.0,
    omega_min: float = 0.0,
) -> tuple[float, float]:
    """Scale (v, ω) by one factor so |v| ≤ v_max and |ω| ≤ ω_max (then apply the minimums)."""
    scale = scale_within((v, omega), (v_max, omega_max))
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


def thesis_limit_velocity(
    v: float,
    omega: float,
    v_max: float,
    omega_max: float,
    v_min: float,
    omega_min: float,
) -> tuple[float, float]:
    """The thesis's Algorithm 5.3 as printed (the thesis eqs. 5.1–5.4), on magnitudes.

    Over a maximum, both are scaled so the larger ratio is 1 (as :func:`limit_velocity`).
    Under a minimum, both are scaled up so the smaller of v/v_min, ω/ω_min is 1 (a zero ω
    raises v to v_min alone, eq. 5.4a), and whatever this pushes past a maximum is then cut to
    it on its own, breaking the ratio as the thesis's code does. A tiny ω on a curve therefore
    throws v up to v_max: the minimums the thesis blames for its ±30 mm.
    """
    v, omega = limit_velocity(v, omega, v_max, omega_max)
    if v == 0.0 and omega == 0.0:
        return 0.0, 0.0
    a, w = abs(v), abs(omega)
    if a < v_min or w < omega_min:
        if w == 0.0:
            a = max(a, v_min)
        elif a == 0.0:
            w = max(w, omega_min)
        else:
            up = 1.0 / min(a / v_min, w / omega_min)
            a, w = a * up, w * up
        a, w = min(a, v_max), min(w, omega_max)
    return math.copysign(a, v) if v else a, math.copysign(w, omega) if omega else w
