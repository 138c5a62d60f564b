"""Compiled loops of the safety layer's per-cycle geometry, to the bit of its numpy forms.

Every control cycle tests a few hundred remembered and map points against the laser's sweep
and the sonar cones, and moves the footprint along its arc past the range points: small
arrays, where numpy's per-call cost is most of the time. These loops do the same arithmetic
in the same order (sums, products, square roots, sines, cosines and ``hypot`` round alike
here and in numpy). One thing does not: numpy's ``arctan2`` may run its own vectorised code,
a few ulps from the C library's. So the loops decide every point whose answer a few ulps
cannot change, and flag the rest (within ``_DOUBT`` of a beam's rounding edge, a cone's side
or a sweep's end, or not finite) for the caller to recompute with the numpy form. The answers
are the numpy forms', bit for bit; the equivalence tests hold them to it.

Most points are far from any edge, and those need no arctangent or square root at all: a
point clearly to one side of a sweep's edges is placed by cross products, and one clearly
within a narrow cone's reach and clear of its side by squares. Only the few near an edge are
worked out as the numpy form does.
"""

from __future__ import annotations

import math
from enum import IntEnum
from typing import NamedTuple

import numba
import numpy as np
import numpy.typing as npt

__all__ = [
    "Cones",
    "Fresh",
    "MemorySettings",
    "MemoryStatus",
    "Odometry",
    "Remembered",
    "Sweep",
    "approach_hit",
    "approach_hits",
    "beyond_beams",
    "compile_kernels",
    "in_cones",
    "max_depth",
    "max_depths",
    "memory_cycle",
    "nearest_squared",
    "outside_sweep",
    "remember",
    "to_frame",
]

_Array = npt.NDArray[np.float64]
_Mask = npt.NDArray[np.bool_]

#: Closer than this to a decision's edge (radians, or beams for a rounding edge), a point is
#: left to the numpy form: a million times the few ulps the two arctangents differ by.
_DOUBT = 1e-9
#: A cone's test by cosine decides points further than this (radians) from the cone's side.
_CONE_BAND = 1e-6
#: No wedge: every point is placed by its arctangent.
_NONE = (1.0, 0.0, 1.0, 0.0, 0)


#: A point further than this (radians, as the sine of its angle off an edge) to one side of a
#: sweep's edge is on that side without its arctangent: a thousand times ``_DOUBT``.
_EDGE_BAND = 1e-6


@numba.njit(cache=True, nogil=True)
def _wedge(lo: float, hi: float) -> tuple[float, float, float, float, int]:
    """The edges of the bearings [lo, hi] as unit vectors (lo's, hi's) and how points may be
    placed against it without an arctangent: 0 not at all (the wedge reaches ±π, where
    ``atan2`` wraps, or is all round), 1 a wedge of at most π (inside: left of lo's edge and
    right of hi's), 2 a wider one (outside: right of lo's edge and left of hi's)."""
    span = hi - lo
    if not (-math.pi + _EDGE_BAND < lo and hi < math.pi - _EDGE_BAND and span >= 0.0):
        return 1.0, 0.0, 1.0, 0.0, 0
    kind = 1 if span <= math.pi else 2
    return math.cos(lo), math.sin(lo), math.cos(hi), math.sin(hi), kind


@numba.njit(cache=True, nogil=True)
def _side(dx: float, dy: float, edges: tuple[float, float, float, float, int]) -> int:
    """Where (dx, dy) lies against a :func:`_wedge`: 1 clearly inside, −1 clearly outside,
    0 near an edge, at the origin, not finite, or a wedge that cannot tell."""
    lc, ls, hc, hs, kind = edges
    if kind == 0:
        return 0
    band = _EDGE_BAND * (abs(dx) + abs(dy))
    left_of_lo = lc * dy - ls * dx  # |p| sin(angle from lo's edge to p)
    right_of_hi = hs * dx - hc * dy  # |p| sin(angle from p to hi's edge)
    if not (abs(left_of_lo) > band and abs(right_of_hi) > band):
        return 0  # near an edge's line (or NaN, or the origin)
    if kind == 1:
        return 1 if left_of_lo > 0.0 and right_of_hi > 0.0 else -1
    return -1 if left_of_lo < 0.0 and right_of_hi < 0.0 else 1


@numba.njit(cache=True, nogil=True)
def to_frame(points: _Array, ox: float, oy: float, c: float, s: float, out: _Array) -> None:
    """``out`` = the points seen from (ox, oy) with heading cos ``c``, sin ``s``."""
    for i in range(points.shape[0]):
        dx = points[i, 0] - ox
        dy = points[i, 1] - oy
        out[i, 0] = c * dx + s * dy
        out[i, 1] = -s * dx + c * dy


@numba.njit(cache=True, nogil=True)
def beyond_beams(
    points: _Array,
    ox: float,
    oy: float,
    first: float,
    step: float,
    ranges: _Array,
    tolerance: float,
    out: _Mask,
    doubt: _Mask,
) -> int:
    """Which points a sweep (beam k at ``first + k·step``) passes beyond; returns how many
    are in doubt (their beam's rounding too close to call)."""
    doubtful = 0
    edges = _beams_wedge(first, step, ranges.shape[0])
    for i in range(points.shape[0]):
        out[i], doubt[i] = _beyond_beam(
            points[i, 0] - ox, points[i, 1] - oy, edges, first, step, ranges, tolerance
        )
        doubtful += doubt[i]
    return doubtful


@numba.njit(cache=True, nogil=True, inline="always")
def _beams_wedge(first: float, step: float, beams: int) -> tuple[float, float, float, float, int]:
    """The :func:`_wedge` outside which bearings round to no beam: the outer beams' half
    steps."""
    return _wedge(first - 0.5 * step, first + (beams - 0.5) * step) if step > 0.0 else _NONE


@numba.njit(cache=True, nogil=True, inline="always")
def _beyond_beam(
    dx: float,
    dy: float,
    edges: tuple[float, float, float, float, int],
    first: float,
    step: float,
    ranges: _Array,
    tolerance: float,
) -> tuple[bool, bool]:
    """:func:`beyond_beams` of the point (dx, dy) from the sweep's origin: (passed beyond,
    in doubt)."""
    if _side(dx, dy, edges) < 0:
        return False, False
    q = (math.atan2(dy, dx) - first) / step
    if not abs(q) < 1e15 or abs(q - math.floor(q) - 0.5) < _DOUBT:
        return False, True
    k = int(np.rint(q))
    if 0 <= k < ranges.shape[0]:
        return ranges[k] > math.hypot(dx, dy) + tolerance, False
    return False, False


#: Sectors of bearing round the points' origin, by which a far point finds the cones it may
#: lie in (a bit each in an int64: rings of up to 64 transducers are sorted so).
_SECTORS = 64
#: A point this many times further from the origin than the furthest transducer is seen from
#: each transducer at most asin(1/3) ≈ 19.5° off its bearing from the origin.
_FAR = 3.0
#: Radians added to the widest a far point's bearing may differ and still fall in a cone: far
#: beyond the rounding of the sectors' arithmetic and the cones' own bands (1e-6, 1e-9).
_SECTOR_MARGIN = 1e-3


@numba.njit(cache=True, nogil=True)
def _diamond(x: float, y: float) -> float:
    """A stand-in for the bearing of (x, y) in [0, 4), rising with it from bearing 0 round to
    2π (a quarter turn per unit), without an arctangent; NaN for a point not finite."""
    if y >= 0.0:
        return y / (x + y) if x >= 0.0 else 1.0 - x / (y - x)
    return 2.0 - y / (-x - y) if x < 0.0 else 3.0 + x / (x - y)


@numba.njit(cache=True, nogil=True)
def _sector(x: float, y: float) -> int:
    """Which of the :data:`_SECTORS` equal spans of :func:`_diamond` holds (x, y)."""
    return min(int(_diamond(x, y) * (_SECTORS / 4.0)), _SECTORS - 1)


@numba.njit(cache=True, nogil=True)
def _cone_sectors(
    ox: _Array, oy: _Array, cb: _Array, sb: _Array, half_cone: float
) -> tuple[npt.NDArray[np.int64], float]:
    """For each sector, the cones (a bit each) a point in it at least the returned distance
    from the origin may lie in; the distance is infinite when no sector is narrower than all.

    Seen from a transducer at most ρ from the origin, a point r ≥ 3ρ away lies at most
    asin(ρ/r) ≤ asin(1/3) off its bearing from the origin (the angle at the point in the
    triangle origin–transducer–point, opposite the shortest side). A cone then holds it only
    if that bearing is within half the cone plus asin(1/3) of the cone's axis: each cone
    marks the sectors that window crosses (a margin wider).
    """
    sonars = ox.shape[0]
    rho = 0.0
    for j in range(sonars):
        rho = max(rho, math.hypot(ox[j], oy[j]))
    masks = np.zeros(_SECTORS, dtype=np.int64)
    window = half_cone + math.asin(1.0 / _FAR) + _SECTOR_MARGIN
    if sonars > 63 or not window < math.pi / 2 or not rho < 1e6:
        return masks, math.inf
    cw = math.cos(window)
    sw = math.sin(window)
    for j in range(sonars):
        # the window's edges: the axis turned by ∓window (its sectors run anticlockwise)
        lo = _sector(cb[j] * cw + sb[j] * sw, sb[j] * cw - cb[j] * sw)
        hi = _sector(cb[j] * cw - sb[j] * sw, sb[j] * cw + cb[j] * sw)
        k = lo
        while True:
            masks[k] |= np.int64(1) << j
            if k == hi:
                break
            k = (k + 1) % _SECTORS
    return masks, max(_FAR * rho, 1e-6)


@numba.njit(cache=True, nogil=True)
def in_cones(
    points: _Array,
    ox: _Array,
    oy: _Array,
    bearing: _Array,
    reach: _Array,
    half_cone: float,
    tolerance: float,
    out: _Mask,
    doubt: _Mask,
) -> int:
    """Which points lie in a cone nearer than its reach; returns how many are in doubt.

    Most points are decided by the cosine of their angle off the cone's axis, without an
    arctangent: clearly in or clearly out by ``_CONE_BAND`` radians; the rest by the angle.
    Of a narrow cone, points clearly nearer than the reach and clearly off the band are
    decided by squares, without a square root either. A point far from the origin is tested
    only against the cones its sector of bearing may lie in (:func:`_cone_sectors`): the
    others hold it nowhere near their sides, so it is outside them and in no doubt."""
    doubtful = 0
    sonars = ox.shape[0]
    cb = np.empty(sonars)
    sb = np.empty(sonars)
    near = np.empty(sonars)
    # squared distances above this are clearly beyond the reach (inf: the test does not apply)
    beyond = np.empty(sonars)
    # squared distances below this are clearly within the reach (−1: none is)
    within = np.empty(sonars)
    for j in range(sonars):
        cb[j] = math.cos(bearing[j])
        sb[j] = math.sin(bearing[j])
        near[j] = reach[j] - tolerance
        beyond[j] = near[j] * near[j] * (1.0 + 1e-12) if near[j] > 0.0 else math.inf
        within[j] = near[j] * near[j] * (1.0 - 1e-9) if near[j] > 0.0 else -1.0
    fast = _CONE_BAND < half_cone < math.pi - _CONE_BAND
    cos_in = math.cos(half_cone - _CONE_BAND)  # cosines above: clearly inside
    cos_out = math.cos(half_cone + _CONE_BAND)  # below: clearly outside
    behind_out = fast and cos_out > 0.0  # a cone narrower than a half-plane
    # the same bounds on the squared cosine, widened by far more than the squares' rounding
    cos_in_squared = cos_in * cos_in * (1.0 + 1e-9)
    cos_out_squared = cos_out * cos_out * (1.0 - 1e-9)
    sectors, far = _cone_sectors(ox, oy, cb, sb, half_cone)
    far_squared = far * far
    everyone = np.int64(-1)
    for i in range(points.shape[0]):
        inside = False
        unsure = False
        px, py = points[i, 0], points[i, 1]
        # not finite: NaN and inf fail the first test or the second
        square = px * px + py * py
        maybe = everyone
        if square >= far_squared and square < math.inf:
            maybe = sectors[_sector(px, py)]
        for j in range(sonars):
            if not (maybe >> j) & 1:
                continue
            dx = points[i, 0] - ox[j]
            dy = points[i, 1] - oy[j]
            squared = dx * dx + dy * dy
            # clearly beyond its reach or clearly behind the transducer: outside, as the exact
            # tests below would find, without their square root (within 1e-12 relative of the
            # reach, or within 2e-6 of the transducer, they decide); the reach first, the one
            # that needs no more arithmetic
            if squared > beyond[j]:
                continue
            if behind_out and squared > 4e-12:
                ahead = cb[j] * dx + sb[j] * dy
                if ahead <= 0.0:
                    continue
                if squared < within[j]:  # h < near[j], and r = ahead / h is clear of the band
                    if ahead * ahead < cos_out_squared * squared:
                        continue
                    if ahead * ahead > cos_in_squared * squared:
                        inside = True
                        break
            h = math.hypot(dx, dy)
            if not h < near[j]:
                continue
            if fast and h > 1e-6:
                r = (cb[j] * dx + sb[j] * dy) / h
                if r < cos_out:
                    continue
                if r > cos_in:
                    inside = True
                    break
            d = math.atan2(dy, dx) - bearing[j]
            off = abs(math.atan2(math.sin(d), math.cos(d)))
            if not abs(off - half_cone) > _DOUBT:
                unsure = True
            elif off < half_cone:
                inside = True
                break
        out[i] = inside
        doubt[i] = unsure and not inside
        if doubt[i]:
            doubtful += 1
    return doubtful


@numba.njit(cache=True, nogil=True)
def outside_sweep(
    points: _Array, ox: float, oy: float, first: float, last: float, out: _Mask, doubt: _Mask
) -> int:
    """Which points lie outside the bearings [first, last] seen from (ox, oy); returns how
    many are in doubt."""
    doubtful = 0
    edges = _wedge(first, last)
    for i in range(points.shape[0]):
        dx = points[i, 0] - ox
        dy = points[i, 1] - oy
        side = _side(dx, dy, edges)
        if side != 0:
            out[i] = side < 0
            doubt[i] = False
            continue
        b = math.atan2(dy, dx)
        out[i] = b < first or b > last
        doubt[i] = not (abs(b - first) > _DOUBT and abs(b - last) > _DOUBT)
        if doubt[i]:
            doubtful += 1
    return doubtful


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
        # the numpy form's mask: x ≥ rear moving forward, x ≤ front backing (NaN x: left out)
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
    """The smallest squared distance from the centre over both arrays' points, as
    ``np.min(np.einsum("ij,ij->i", p, p))`` of the stacked points that count gives it (its
    rows are ``x·x + y·y``): all of them for ``side`` 0, those with x ≥ ``rear`` for 1, with
    x ≤ ``front`` for −1. NaN if any counted is NaN (numpy's min), inf when none counts."""
    best = _nearest_in(points, side, rear, front, math.inf)
    if best != best:
        return best
    return _nearest_in(prior, side, rear, front, best)


#: Cell indices at least this large are left to the numpy form: their codes could overflow.
_CELL_LIMIT = 2.0**40


@numba.njit(cache=True, nogil=True)
def remember(
    fresh: _Array,
    laser_count: int,
    xy: _Array,
    stamp: _Array,
    laser: _Mask,
    pose: _Array,
    since: float,
    reach: float,
    cell: float,
    out_xy: _Array,
    out_stamp: _Array,
    out_laser: _Mask,
) -> int:
    """The obstacle memory's update, as its numpy form makes it: the ``fresh`` readings (robot
    frame, the first ``laser_count`` the laser's) placed at ``pose`` = (x, y, cos, sin) and
    stamped ``pose``'s time, before the remembered ``xy``, ``stamp``, ``laser``; those newer
    than ``since`` and nearer than ``reach`` kept; of them the first in each grid cell and
    source, in the order of their codes (a stable sort: ``np.unique``'s first indices).
    Writes the ``out_*`` arrays and returns how many; −1 when a cell index is too large for
    the codes' int64 (the caller takes the numpy form then)."""
    x, y, c, s, now = pose[0], pose[1], pose[2], pose[3], pose[4]
    n_fresh = fresh.shape[0]
    n = n_fresh + xy.shape[0]
    near_xy = np.empty((n, 2))
    near_stamp = np.empty(n)
    near_laser = np.empty(n, dtype=np.bool_)
    code = np.empty(n, dtype=np.int64)
    m = 0
    for i in range(n):
        if i < n_fresh:
            wx = x + c * fresh[i, 0] - s * fresh[i, 1]
            wy = y + s * fresh[i, 0] + c * fresh[i, 1]
            when = now
            is_laser = i < laser_count
        else:
            wx = xy[i - n_fresh, 0]
            wy = xy[i - n_fresh, 1]
            when = stamp[i - n_fresh]
            is_laser = laser[i - n_fresh]
        if not (when > since and math.hypot(wx - x, wy - y) < reach):
            continue
        k0 = np.floor(wx / cell)
        k1 = np.floor(wy / cell)
        if not (abs(k0) < _CELL_LIMIT and abs(k1) < _CELL_LIMIT):
            return -1
        code[m] = (int(k0) * 1_000_003 + int(k1)) * 2 + (1 if is_laser else 0)
        near_xy[m, 0] = wx
        near_xy[m, 1] = wy
        near_stamp[m] = when
        near_laser[m] = is_laser
        m += 1
    order = np.argsort(code[:m], kind="mergesort")
    kept = 0
    for r in range(m):
        i = order[r]
        if r > 0 and code[i] == code[order[r - 1]]:
            continue
        out_xy[kept, 0] = near_xy[i, 0]
        out_xy[kept, 1] = near_xy[i, 1]
        out_stamp[kept] = near_stamp[i]
        out_laser[kept] = near_laser[i]
        kept += 1
    return kept


@numba.njit(cache=True, nogil=True)
def _compact(
    keep: _Mask, xy: _Array, stamp: _Array, laser: _Mask, local: _Array
) -> tuple[_Array, _Array, _Mask, _Array]:
    """The rows ``keep`` marks of the four arrays (copies, in order; the arrays themselves when
    it marks them all, as most cycles do)."""
    m = 0
    for i in range(keep.shape[0]):
        m += keep[i]
    if m == keep.shape[0]:
        return xy, stamp, laser, local
    out_xy = np.empty((m, 2))
    out_stamp = np.empty(m)
    out_laser = np.empty(m, dtype=np.bool_)
    out_local = np.empty((m, 2))
    k = 0
    for i in range(keep.shape[0]):
        if keep[i]:
            out_xy[k, 0] = xy[i, 0]
            out_xy[k, 1] = xy[i, 1]
            out_stamp[k] = stamp[i]
            out_laser[k] = laser[i]
            out_local[k, 0] = local[i, 0]
            out_local[k, 1] = local[i, 1]
            k += 1
    return out_xy, out_stamp, out_laser, out_local


class MemoryStatus(IntEnum):
    """How :func:`memory_cycle` ended."""

    DONE = 0  #: the memory updated; the points are those outside the sweep's view
    IN_DOUBT = 1  #: a point's clearing is in doubt: nothing was done, take the steps one by one
    CELLS_TOO_LARGE = 2  #: the memory cleared, but the fresh readings' cells are too large
    NEAR_SWEEP_ENDS = 3  #: done, but a point lies too near the sweep's ends to tell if outside


class Remembered(NamedTuple):
    """The obstacle memory's points: odometry-frame positions, stamps, from the laser?"""

    xy: _Array
    stamp: _Array
    laser: _Mask


class Odometry(NamedTuple):
    """The robot's odometry pose at ``now``: position and heading (cosine, sine)."""

    x: float
    y: float
    c: float
    s: float
    now: float


class Sweep(NamedTuple):
    """A laser's sweep in the robot frame: origin, first bearing, step, last bearing, ranges
    (empty: no laser)."""

    x: float
    y: float
    first: float
    step: float
    last: float
    ranges: _Array


class Cones(NamedTuple):
    """Sonar transducers in the robot frame: origins, bearings and readings (empty: none)."""

    x: _Array
    y: _Array
    bearing: _Array
    reach: _Array


class MemorySettings(NamedTuple):
    """How the memory clears (sensor ``tolerance``, sonar ``half_cone``), how long
    (``seconds``) and how far (``reach``) it remembers, and its grid's ``cell``."""

    tolerance: float
    half_cone: float
    seconds: float
    reach: float
    cell: float


class Fresh(NamedTuple):
    """This moment's readings in the robot frame, the first ``laser_count`` the laser's; taken
    in only when ``due``."""

    points: _Array
    laser_count: int
    due: bool


@numba.njit(cache=True, nogil=True)
def _cleared(
    local: _Array, laser: _Mask, sweep: Sweep, cones: Cones, settings: MemorySettings
) -> tuple[bool, _Mask]:
    """Which points stay: not laser points the sweep passes beyond, nor points inside a sonar
    cone nearer than its reading. (False, …) when a point's clearing is in doubt."""
    n = local.shape[0]
    keep = np.ones(n, dtype=np.bool_)
    ranges = sweep.ranges
    if ranges.shape[0] > 0:  # the laser's points it passes beyond (the sonar's stay)
        edges = _beams_wedge(sweep.first, sweep.step, ranges.shape[0])
        for i in range(n):
            if laser[i]:
                passed, unsure = _beyond_beam(
                    local[i, 0] - sweep.x,
                    local[i, 1] - sweep.y,
                    edges,
                    sweep.first,
                    sweep.step,
                    ranges,
                    settings.tolerance,
                )
                if unsure:
                    return False, keep
                keep[i] = not passed
    if cones.x.shape[0] > 0 and n > 0:
        hit = np.empty(n, dtype=np.bool_)
        unsure_at = np.empty(n, dtype=np.bool_)
        in_cones(
            local,
            cones.x,
            cones.y,
            cones.bearing,
            cones.reach,
            settings.half_cone,
            settings.tolerance,
            hit,
            unsure_at,
        )
        for i in range(n):
            if keep[i]:
                if unsure_at[i]:
                    return False, keep
                keep[i] = not hit[i]
    return True, keep


@numba.njit(cache=True, nogil=True)
def _outside_view(local: _Array, sweep: Sweep) -> tuple[bool, _Array]:
    """The points outside the sweep's view (all of them without a laser); (False, …) when one
    lies too near the sweep's ends to tell."""
    m = local.shape[0]
    outside = np.ones(m, dtype=np.bool_)
    doubt = np.zeros(m, dtype=np.bool_)
    if sweep.ranges.shape[0] > 0 and outside_sweep(
        local, sweep.x, sweep.y, sweep.first, sweep.last, outside, doubt
    ):
        return False, local
    count = 0
    for i in range(m):
        count += outside[i]
    points = np.empty((count, 2))
    k = 0
    for i in range(m):
        if outside[i]:
            points[k, 0] = local[i, 0]
            points[k, 1] = local[i, 1]
            k += 1
    return True, points


@numba.njit(cache=True, nogil=True)
def memory_cycle(
    memory: Remembered,
    odometry: Odometry,
    sweep: Sweep,
    cones: Cones,
    settings: MemorySettings,
    fresh: Fresh,
) -> tuple[MemoryStatus, Remembered, _Array, _Array, float]:
    """The obstacle memory's control cycle, as its steps make it one by one: the remembered
    laser points the sweep passes beyond forgotten, then those inside a sonar cone nearer than
    its reading; the ``fresh`` readings taken in when due (:func:`remember`); the old
    forgotten; the rest in the robot frame, and those outside the sweep's view.

    Returns (status, the memory, its points in the robot frame, those outside the sweep's
    view, the oldest stamp); see :class:`MemoryStatus`.
    """
    x, y, c, s, now = odometry
    xy, stamp, laser = memory
    local = np.empty((xy.shape[0], 2))
    to_frame(xy, x, y, c, s, local)
    sure, keep = _cleared(local, laser, sweep, cones, settings)
    if not sure:
        return MemoryStatus.IN_DOUBT, Remembered(xy, stamp, laser), local, local, 0.0
    xy, stamp, laser, local = _compact(keep, xy, stamp, laser, local)
    if fresh.due:
        m = fresh.points.shape[0] + xy.shape[0]
        out_xy, out_stamp, out_laser = np.empty((m, 2)), np.empty(m), np.empty(m, dtype=np.bool_)
        pose = np.array((x, y, c, s, now))
        since = now - settings.seconds
        kept = remember(
            fresh.points,
            fresh.laser_count,
            xy,
            stamp,
            laser,
            pose,
            since,
            settings.reach,
            settings.cell,
            out_xy,
            out_stamp,
            out_laser,
        )
        if kept < 0:
            return MemoryStatus.CELLS_TOO_LARGE, Remembered(xy, stamp, laser), local, local, 0.0
        xy, stamp, laser = out_xy[:kept], out_stamp[:kept], out_laser[:kept]
        local = np.empty((kept, 2))
        to_frame(xy, x, y, c, s, local)
    young = np.empty(xy.shape[0], dtype=np.bool_)
    oldest = math.inf
    for i in range(xy.shape[0]):
        young[i] = stamp[i] > now - settings.seconds
        if young[i] and stamp[i] < oldest:
            oldest = stamp[i]
    xy, stamp, laser, local = _compact(young, xy, stamp, laser, local)
    sure, points = _outside_view(local, sweep)
    status = MemoryStatus.DONE if sure else MemoryStatus.NEAR_SWEEP_ENDS
    return status, Remembered(xy, stamp, laser), local, points, oldest


def compile_kernels() -> None:
    """Compile the loops a control cycle runs now (or load them from numba's cache), at
    start-up: compiled in the first control cycle, they would hold the first command back.
    The loops the cycle's own calls hold (the sweep's and the cones' tests, the memory's
    intake) are compiled only where called alone, by callers outside the control cycle: the
    cycle hands what its calls leave in doubt to the numpy forms, so the robot program does
    not carry each loop twice."""
    points = np.zeros((1, 2))
    one = np.ones(1)
    out = np.zeros(1, dtype=np.bool_)
    max_depths(points, points, 0.2, 0.1, 0.0)
    nearest_squared(points, points, 0, 0.0, 0.0)
    approach_hits(points, points, one, one, one, one, 0.0, 0.0, 0.2, 0.1, 0.0)
    memory_cycle(
        Remembered(points, one, out),
        Odometry(0.0, 0.0, 1.0, 0.0, 1.0),
        Sweep(0.0, 0.0, -1.0, 0.1, 1.0, one),
        Cones(one, one, one, one),
        MemorySettings(0.1, 0.2, 1.0, 1.0, 0.1),
        Fresh(points, 1, True),
    )
