"""Compiled loops of the safety filter's footprint geometry: how deep points lie inside the
inflated footprint, where along an arc the footprint first takes one deeper, the nearest point.

NaN is handled as numpy's reductions handle it: a NaN depth or distance wins.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = [
    "approach_hit",
    "approach_hits",
    "compile_kernels",
    "max_depth",
    "max_depths",
    "nearest_squared",
]

_Array = npt.NDArray[np.float64]


@numba.njit(cache=True, nogil=True)
def _depth(px: float, py: float, half_l: float, half_w: float, cx: float) -> float:
    """``np.minimum(half_l - |px - cx|, half_w - |py|)``, NaN as numpy has it."""
    a = half_l - abs(px - cx)
    b = half_w - abs(py)
    if a != a or b != b:
        return math.nan
    return a if a < b else b


@numba.njit(cache=True, nogil=True)
def max_depth(points: _Array, half_l: float, half_w: float, cx: float) -> float:
    """The deepest point's depth inside the inflated footprint now (NaN as numpy's max)."""
    deepest = -math.inf
    for i in range(points.shape[0]):
        d = _depth(points[i, 0], points[i, 1], half_l, half_w, cx)
        if d != d:
            return math.nan
        if d > deepest:
            deepest = d
    return deepest


@numba.njit(cache=True, nogil=True)
def approach_hit(
    points: _Array,
    x: _Array,
    y: _Array,
    c: _Array,
    s: _Array,
    base: float,
    half_l: float,
    half_w: float,
    cx: float,
) -> int:
    """The first sample k where the footprint posed at (x[k], y[k], cos c[k], sin s[k]) takes
    a point deeper than max(base, its depth now) + 1e-4; −1 when none does.

    With ``base`` ≥ 0 every allowed depth is above 0, so only a point inside the footprint
    can be hit: one within the furthest pose's distance plus the footprint's reach from the
    centre. Points clearly further (by a millionth, far above the rounding of the rotation)
    are left out of the samples × points loop; which sample hits first does not change."""
    n = points.shape[0]
    reach = 0.0  # the furthest pose from here (NaN if any pose is NaN: then none is left out)
    for k in range(x.shape[0]):
        r = math.hypot(x[k], y[k])
        if r != r:
            reach = math.nan
            break
        if r > reach:
            reach = r
    corner = math.hypot(abs(cx) + abs(half_l), abs(half_w))
    bound = (reach + corner) * (1.0 + 1e-6) + 1e-6 if base >= 0.0 else math.nan
    near = np.empty(n, dtype=np.int64)
    allowed = np.empty(n)
    m = 0
    for i in range(n):
        if math.hypot(points[i, 0], points[i, 1]) > bound:
            continue
        now = _depth(points[i, 0], points[i, 1], half_l, half_w, cx)
        near[m] = i
        # np.maximum(base, now): NaN wins
        allowed[m] = (now if now != now or now > base else base) + 1e-4
        m += 1
    for k in range(x.shape[0]):
        for j in range(m):
            i = near[j]
            dx = points[i, 0] - x[k]
            dy = points[i, 1] - y[k]
            px = c[k] * dx + s[k] * dy
            py = -s[k] * dx + c[k] * dy
            if _depth(px, py, half_l, half_w, cx) > allowed[j]:
                return k
    return -1


@numba.njit(cache=True, nogil=True)
def max_depths(
    live: _Array, prior: _Array, half_l: float, half_w: float, cx: float
) -> tuple[float, float]:
    """:func:`max_depth` of both groups of points in one call (the sensors' now, the
    remembered and the map's)."""
    return max_depth(live, half_l, half_w, cx), max_depth(prior, half_l, half_w, cx)


@numba.njit(cache=True, nogil=True)
def approach_hits(
    live: _Array,
    prior: _Array,
    x: _Array,
    y: _Array,
    c: _Array,
    s: _Array,
    live_base: float,
    prior_base: float,
    half_l: float,
    half_w: float,
    cx: float,
) -> tuple[int, int]:
    """:func:`approach_hit` of both groups of points along one arc in one call."""
    return (
        approach_hit(live, x, y, c, s, live_base, half_l, half_w, cx),
        approach_hit(prior, x, y, c, s, prior_base, half_l, half_w, cx),
    )


@numba.njit(cache=True, nogil=True)
def _nearest_in(points: _Array, side: int, rear: float, front: float, best: float) -> float:
    """:func:`nearest_squared` over one array, from ``best`` so far."""
    for i in range(points.shape[0]):
        px = points[i, 0]
        # the points that count: x ≥ rear moving forward, x ≤ front backing (NaN x: left out)
        if (side > 0 and not px >= rear) or (side < 0 and not px <= front):
            continue
        py = points[i, 1]
        squared = px * px + py * py
        if squared != squared:
            return math.nan
        if squared < best:
            best = squared
    return best


@numba.njit(cache=True, nogil=True)
def nearest_squared(points: _Array, prior: _Array, side: int, rear: float, front: float) -> float:
    """The smallest squared distance (``x·x + y·y``) from the centre over both arrays'
    points that count: all of them for ``side`` 0, those with x ≥ ``rear`` for 1, with
    x ≤ ``front`` for −1. NaN if any counted is NaN (as numpy's min), inf when none counts."""
    best = _nearest_in(points, side, rear, front, math.inf)
    if best != best:
        return best
    return _nearest_in(prior, side, rear, front, best)


def compile_kernels() -> None:
    """Compile the loops a control cycle runs now (or load them from numba's cache), at
    start-up: compiled in the first control cycle, they would hold the first command back."""
    points = np.zeros((1, 2))
    one = np.ones(1)
    max_depths(points, points, 0.2, 0.1, 0.0)
    nearest_squared(points, points, 0, 0.0, 0.0)
    approach_hits(points, points, one, one, one, one, 0.0, 0.0, 0.2, 0.1, 0.0)
