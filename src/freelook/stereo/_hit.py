"""Horizontal Image Translation (TAROS 2018 eqs. 1–4; docs/design.md §3).

A stereo pair from parallel cameras shown on a virtual screen puts very far objects at the
screen and everything else in front of it. Shifting each eye's image outwards (the left image
to the left, the right one to the right) moves the convergence point behind the screen; the
shift must stay within the screen's parallax limit, or the farthest points would ask the eyes
to diverge. The limit, in the headset's pixels and in camera pixels:

    d′ = X / (4 tan(φx/2))          projection distance (px; X both eyes' width)
    p_max = L_IPD·d′ / (2 d_s)      the screen plane's parallax limit (headset px)
    w′_s = w_s·d′ / d_s             the screen's width as displayed (headset px)
    p′_max = p_max·X_c / w′_s       the shift of each camera image (camera px)

so p′_max = L_IPD·X_c / (2 w_s). Pure functions; no clock, no I/O.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from freelook.errors import FreelookError

__all__ = ["Hit", "HitError", "hit", "hit_from_view"]


class HitError(FreelookError, ValueError):
    """A HIT parameter that is not a finite positive number (or a field of view ≥ 180°)."""


@dataclass(frozen=True, slots=True)
class Hit:
    """The HIT quantities of one headset, screen and camera (pixels)."""

    projection_distance: float  # d′, headset px
    max_parallax: float  # p_max, headset px
    screen_width: float  # w′_s, headset px
    camera_shift: float  # p′_max, camera px, each image outwards

    def as_dict(self) -> dict[str, float]:
        """The four values by name (for ``--json`` and the page)."""
        return asdict(self)


def _positive(name: str, value: float) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise HitError(f"{name} must be a number, got {value!r}") from None
    if not math.isfinite(number) or number <= 0.0:
        raise HitError(f"{name} must be a finite number > 0, got {value!r}")
    return number


def hit(
    resolution: float,
    fov_deg: float,
    ipd: float,
    screen_distance: float,
    screen_width: float,
    camera_width: float,
) -> Hit:
    """Eqs. 1–4 for a headset ``resolution`` px wide (both eyes), one eye's horizontal field
    of view ``fov_deg``, an ``ipd`` (m), a screen ``screen_width`` m wide ``screen_distance`` m
    away, and camera images ``camera_width`` px wide. Raises :class:`HitError` on bad input."""
    X = _positive("resolution", resolution)
    fov = _positive("fov", fov_deg)
    if fov >= 180.0:
        raise HitError(f"fov must be < 180 degrees, got {fov_deg!r}")
    L = _positive("ipd", ipd)
    d_s = _positive("screen distance", screen_distance)
    w_s = _positive("screen width", screen_width)
    X_c = _positive("camera width", camera_width)
    d = X / (4.0 * math.tan(math.radians(fov) / 2.0))
    p_max = L * d / (2.0 * d_s)
    w = w_s * d / d_s
    return Hit(d, p_max, w, p_max * X_c / w)


def hit_from_view(
    eye_width: float,
    projection_x: float,
    ipd: float,
    screen_distance: float,
    screen_width: float,
    camera_width: float,
) -> Hit:
    """HIT from a rendered view as WebXR gives it: one eye's render width (px), the projection
    matrix's horizontal scale ``projection_x`` (its [0][0] entry, 1 / tan(φx/2) for a symmetric
    frustum) and the distance between the two eyes' positions (m)."""
    p = _positive("projection x scale", projection_x)
    fov_deg = math.degrees(2.0 * math.atan(1.0 / p))
    return hit(
        2.0 * _positive("eye width", eye_width),
        fov_deg,
        ipd,
        screen_distance,
        screen_width,
        camera_width,
    )
