"""Nonlinear state tracking controller (the thesis eq. 3.17, Klančar et al. form; design.md §3).

Errors are reference minus current in the robot frame (the thesis's eq. 3.2 prints them the
other way round, which would diverge):
    e_x =  cos θ·(x_r − x) + sin θ·(y_r − y),   e_y = −sin θ·(x_r − x) + cos θ·(y_r − y),
    e_θ = wrap(θ_r − θ)
    v = v_r·cos e_θ + k1·e_x,   ω = ω_r + k2·v_r·(sin e_θ / e_θ)·e_y + k3·e_θ
    k1 = k3 = 2ξ√(ω_r² + b·v_r²),  k2 = b   (the thesis's k2 = b·|v_r| available as an option)

The thesis's station subtracted headings held in 0…360° without wrapping, so near the 360°→0°
crossing e_θ jumped by a whole turn (its Fig. 7.6's "two big gaps", a "programming issue" it
estimates cost about 2 s a lap): ``heading_difference="thesis"`` reproduces that for the
thesis's own rows; everything else wraps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

from freelook.control._reference import Reference
from freelook.geometry import wrap_angle

__all__ = ["TrackingController", "TrackingErrors"]


@dataclass(frozen=True, slots=True)
class TrackingErrors:
    e_x: float
    e_y: float
    e_theta: float


class TrackingController:
    """Gains b and ξ (thesis: 40 and 0.8); ``gain_form`` picks k2 = b or k2 = b·|v_r|."""

    def __init__(
        self,
        b: float = 40.0,
        zeta: float = 0.8,
        gain_form: Literal["textbook", "thesis"] = "textbook",
        gain_scale: float = 1.0,
        heading_difference: Literal["wrapped", "thesis"] = "wrapped",
    ) -> None:
        """``gain_scale`` multiplies k1, k2 and k3 (0 leaves the feed-forward alone: the loop
        opened, to show what feedback is worth); ``heading_difference`` as the module says."""
        if b <= 0 or not 0 < zeta < 1 or not 0 <= gain_scale < math.inf:
            raise ValueError(
                f"need b > 0, 0 < ξ < 1 and a finite gain scale ≥ 0, got b = {b}, ξ = {zeta}, "
                f"scale {gain_scale}"
            )
        self.b = b
        self.zeta = zeta
        self.gain_form = gain_form
        self.gain_scale = gain_scale
        self.heading_difference = heading_difference

    def errors(self, ref: Reference, x: float, y: float, theta: float) -> TrackingErrors:
        dx, dy = ref.x - x, ref.y - y
        c, s = math.cos(theta), math.sin(theta)
        if self.heading_difference == "thesis":
            e_theta = ref.theta % math.tau - theta % math.tau
        else:
            e_theta = wrap_angle(ref.theta - theta)
        return TrackingErrors(c * dx + s * dy, -s * dx + c * dy, e_theta)

    def command(self, ref: Reference, x: float, y: float, theta: float) -> tuple[float, float]:
        """(v, ω) that drive the pose toward the reference."""
        err = self.errors(ref, x, y, theta)
        k1 = 2.0 * self.zeta * math.sqrt(ref.omega**2 + self.b * ref.v**2) * self.gain_scale
        k2 = (self.b if self.gain_form == "textbook" else self.b * abs(ref.v)) * self.gain_scale
        sinc = 1.0 if abs(err.e_theta) < 1e-9 else math.sin(err.e_theta) / err.e_theta
        v = ref.v * math.cos(err.e_theta) + k1 * err.e_x
        omega = ref.omega + k2 * ref.v * sinc * err.e_y + k1 * err.e_theta
        return v, omega
