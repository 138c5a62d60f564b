"""ROS 2 readings as the robot program's HAL readings (sans-I/O: plain numbers in and out).

What ROS means is kept: a ``LaserScan`` range of +inf is nothing within range, −inf something
closer than ``range_min``, NaN an invalid measurement (REP 117); an ``Imu`` whose angular
velocity covariance starts with −1 has no rate. Non-finite odometry or rates are refused (the
caller counts them), never used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import LaserConfig

__all__ = [
    "ScanLayout",
    "ScanRanges",
    "check_scan_layout",
    "scan_ranges",
    "twist_of_wheels",
    "wheels_of_twist",
    "yaw_of_quaternion",
]


class ScanLayout(NamedTuple):
    """How a ``LaserScan`` spreads its beams."""

    frame_id: str
    angle_min: float  # rad
    angle_increment: float  # rad
    beams: int


class ScanRanges(NamedTuple):
    """A scan's ranges in the HAL's terms, and how many beams were not measurements."""

    ranges: npt.NDArray[np.float64]  # m; range_max where nothing was hit
    invalid: int  # NaN, or finite but outside [range_min, range_max]
    too_close: int  # −inf: something nearer than range_min


def yaw_of_quaternion(x: float, y: float, z: float, w: float) -> float:
    """The heading (rad, about +z) of an orientation quaternion (not necessarily normalised)."""
    return math.atan2(2.0 * (w * z + x * y), w * w + x * x - y * y - z * z)


def wheels_of_twist(v: float, omega: float, track_width: float) -> tuple[float, float]:
    """Left and right track speeds (m/s) of a body twist on tracks ``track_width`` apart."""
    half = omega * track_width / 2.0
    return v - half, v + half


def twist_of_wheels(left: float, right: float, track_width: float) -> tuple[float, float]:
    """The body twist (v m/s, ω rad/s) of left and right track speeds."""
    return (left + right) / 2.0, (right - left) / track_width


def check_scan_layout(layout: ScanLayout, laser: LaserConfig, frame: str) -> str | None:
    """Why a scan laid out so does not match the description's laser (None: it matches).

    The description's laser spreads ``beams`` evenly over ``fov_deg``, centred ahead; ``frame``
    is the ``frame_id`` scans must carry ("": any).
    """
    if frame and layout.frame_id != frame:
        return f"frame_id {layout.frame_id!r}, but the description says {frame!r}"
    half = math.radians(laser.fov_deg) / 2.0
    increment = 2.0 * half / (laser.beams - 1)
    said = f"{laser.beams} beams over {laser.fov_deg:g}° from {-laser.fov_deg / 2:g}°"
    got = (
        f"{layout.beams} beams from {math.degrees(layout.angle_min):.4g}° every "
        f"{math.degrees(layout.angle_increment):.4g}°"
    )
    if layout.beams != laser.beams:
        return f"{got}, but the description's [laser] says {said}"
    if not (math.isfinite(layout.angle_min) and math.isfinite(layout.angle_increment)):
        return f"angles {layout.angle_min}, {layout.angle_increment}: not finite"
    # within a tenth of a beam at every beam, the last one included
    tolerance = 0.1 * increment
    if abs(layout.angle_min + half) > tolerance or (
        abs(layout.angle_increment - increment) * (laser.beams - 1) > tolerance
    ):
        return f"{got}, but the description's [laser] says {said}"
    return None


def scan_ranges(
    ranges: Sequence[float] | npt.NDArray[np.floating],
    range_min: float,
    range_max: float,
    no_hit: float,
) -> ScanRanges:
    """A scan's ranges as the HAL wants them: ``no_hit`` (the description's ``range_max``)
    where nothing was measured within range (+inf, NaN, outside [``range_min``,
    ``range_max``], at or beyond ``no_hit``), ``range_min`` where something is closer than the
    laser can measure (−inf)."""
    r = np.asarray(ranges, dtype=np.float64)
    out = r.copy()
    too_close = np.isneginf(r)
    with np.errstate(invalid="ignore"):
        invalid = np.isnan(r) | (np.isfinite(r) & ((r < range_min) | (r > range_max)))
        nothing = np.isposinf(r) | invalid | (r >= no_hit)
    out[nothing] = no_hit
    out[too_close] = min(range_min, no_hit)
    return ScanRanges(out, int(invalid.sum()), int(too_close.sum()))
