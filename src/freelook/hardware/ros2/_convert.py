"""ROS 2 readings as the robot program's HAL readings (sans-I/O: plain numbers in and out).

What ROS means is kept: a ``LaserScan``'s geometry is its own (``angle_min``, an
``angle_increment`` of either sign, any start), turned into the robot's frame by the laser's
mount (:func:`scan_sweep`), and the description checks only what it pins; a range of +inf is
nothing within range, −inf something closer than ``range_min``, NaN an invalid measurement
(REP 117). An ``Imu`` whose angular velocity covariance starts with −1 has no rate.
Non-finite odometry or rates are refused (the caller counts them), never used.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import LaserConfig, LaserMountConfig

__all__ = [
    "FULL_CIRCLE",
    "ScanLayout",
    "ScanRanges",
    "Sweep",
    "check_scan_layout",
    "layout_note",
    "scan_problem",
    "scan_ranges",
    "scan_sweep",
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


def _deg(angle: float) -> str:
    return f"{math.degrees(angle):.4g}°"


def _said(layout: ScanLayout) -> str:
    return (
        f"{layout.beams} beams from {_deg(layout.angle_min)} every {_deg(layout.angle_increment)}"
    )


def scan_problem(layout: ScanLayout) -> str | None:
    """Why a scan's own layout is no layout (None: it is one): angles not finite, fewer than
    two beams, no step between them, or beams wrapping round more than once."""
    a0, step, n = layout.angle_min, layout.angle_increment, layout.beams
    if not (math.isfinite(a0) and math.isfinite(step)):
        return f"angles {a0}, {step}: not finite"
    if n < 2:
        return f"{n} beam(s): a scan needs two at least"
    if step == 0.0:
        return f"{n} beams all at {_deg(a0)} (angle_increment 0)"
    if (n - 1) * abs(step) > math.tau + abs(step):
        return f"{_said(layout)}: more than once round"
    return None


def check_scan_layout(
    layout: ScanLayout, laser: LaserConfig | LaserMountConfig, frame: str, where: str = "[laser]"
) -> str | None:
    """Why a scan laid out so is refused (None: it is taken): a ``frame_id`` other than
    ``frame`` ("": any), no layout (:func:`scan_problem`), or one unlike what the
    description's ``where`` section pins (its ``pinned`` fields: ``beams`` the count,
    ``fov_deg`` the span from the first beam to the last, within a tenth of a beam). Where it
    starts, its sign and anything unpinned are the scan's own."""
    if frame and layout.frame_id != frame:
        return f"frame_id {layout.frame_id!r}, but the description says {frame!r}"
    problem = scan_problem(layout)
    if problem is not None:
        return problem
    pinned = laser.pinned
    beams, fov = laser.beams, laser.fov_deg
    unpin = "pinned = [] takes any" if isinstance(laser, LaserConfig) else "omit it to take any"
    if "beams" in pinned and beams is not None and layout.beams != beams:
        return f"{_said(layout)}, but the description's {where} pins beams = {beams} ({unpin})"
    span = abs(layout.angle_increment) * (layout.beams - 1)
    off = abs(span - math.radians(fov)) if fov is not None else 0.0
    if "fov_deg" in pinned and off > 0.1 * abs(layout.angle_increment):
        return (
            f"{_said(layout)} (over {_deg(span)}), but the description's {where} pins "
            f"fov_deg = {fov:g} ({unpin})"
        )
    return None


def layout_note(layout: ScanLayout, laser: LaserConfig) -> str | None:
    """What a scan's layout has that the description's ``[laser]`` does not (None: the same
    beams over the same span): said in the log, once a layout, when nothing is pinned."""
    span = abs(layout.angle_increment) * (layout.beams - 1)
    fov = math.radians(laser.fov_deg)
    if layout.beams == laser.beams and abs(span - fov) <= 0.1 * abs(layout.angle_increment):
        return None
    return (
        f"{_said(layout)} (over {_deg(span)}); the description's [laser] has "
        f"{laser.beams} beams over {laser.fov_deg:g}° (what the simulator draws): taken as "
        "the scan says"
    )


#: a scan whose beams, one step apart, go round within this share of a step is a full circle
FULL_CIRCLE = 1e-3


class Sweep(NamedTuple):
    """A scan's beams in the robot frame as one sweep, counter-clockwise, at bearings
    ``first + j·step``: sweep beam j is the message's beam j, or n − 1 − j when ``reversed``,
    and ``roll`` beams on round a full circle (:meth:`arrange`)."""

    reversed: bool
    roll: int
    first: float  # rad, in [−π, π) (a full circle's: from −π less FULL_CIRCLE of a step)
    step: float  # rad, > 0
    beams: int

    def bearings(self) -> npt.NDArray[np.float64]:
        """Each sweep beam's bearing (rad, robot frame; from ``first``, not wrapped)."""
        return self.first + self.step * np.arange(self.beams, dtype=np.float64)

    def arrange(self, values: npt.NDArray[np.float64]) -> npt.NDArray[np.float64]:
        """A message's per-beam values (its ranges) in the sweep's order."""
        swept = values[::-1] if self.reversed else values
        if self.roll:
            swept = np.roll(swept, -self.roll)
        return np.ascontiguousarray(swept, dtype=np.float64)


def _wrapped(angle: float) -> float:
    """``angle`` in [−π, π)."""
    angle = (angle + math.pi) % math.tau - math.pi
    return angle if -math.pi <= angle < math.pi else -math.pi


def scan_sweep(layout: ScanLayout, yaw: float = 0.0, upside_down: bool = False) -> Sweep:
    """The sweep of a scan from a laser whose x axis points at ``yaw`` (rad, robot frame),
    ``upside_down`` or not: the message's beam i at angle ``angle_min + i·angle_increment``
    in the laser's frame is at bearing ``yaw + s·angle`` on the robot, s = −1 upside down
    (its z axis points down: its angles turn clockwise seen from above), else 1. Either sign
    of increment, any start (−π, 0 … 2π, …); the first bearing is in [−π, π), and a full
    circle starts at −π or within a step after it (below it by no more than the increment's
    rounding: :data:`FULL_CIRCLE` of a step), so no sweep but one wider than the gap it
    leaves crosses ±π (where a bearing's arctangent wraps)."""
    sign = -1.0 if upside_down else 1.0
    n = layout.beams
    turn = sign * layout.angle_increment
    reverse = turn < 0.0
    step = abs(turn)
    start = layout.angle_min + (n - 1) * layout.angle_increment if reverse else layout.angle_min
    first = _wrapped(yaw + sign * start)
    roll = 0
    if abs(n * step - math.tau) <= FULL_CIRCLE * step:
        # the first beam at or after π, taken round to −π: then on round from there
        roll = max(0, math.ceil((math.pi - first) / step - FULL_CIRCLE))
        roll = 0 if roll >= n else roll  # (already within a step after −π)
        if roll:
            first = first + roll * step - math.tau
    return Sweep(reverse, roll, first, step, n)


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
