"""Compiled loops of the safety layer's sensor geometry: which points a laser's sweep passes
beyond, which lie in a sonar cone nearer than its reading, which lie outside a sweep's view.

Every control cycle tests a few hundred remembered and map points against the laser's sweep
and the sonar cones: small arrays, where numpy's per-call cost is most of the time, so these
loops are the one implementation of the tests.

Most points are far from any edge, and those need no arctangent or square root at all: a
point clearly to one side of a sweep's edges is placed by cross products, and one clearly
within a narrow cone's reach and clear of its side by squares. Only the few near an edge are
placed by their bearing's arctangent.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["beyond_beams", "in_cones", "outside_sweep", "to_frame"]

_Array = npt.NDArray[np.float64]
_Mask = npt.NDArray[np.bool_]

#: A cone's test by cosine decides points further than this (radians) from the cone's side.
_CONE_BAND = 1e-6
#: No wedge: every point is placed by its arctangent.
_NONE = (1.0, 0.0, 1.0, 0.0, 0)


#: A point further than this (radians, as the sine of its angle off an edge) to one side of a
#: sweep's edge is on that side without its arctangent: far beyond the cross products'
#: rounding.
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
) -> None:
    """``out``: which points a sweep (beam k at ``first + k·step``, one for each of
    ``ranges``) passes beyond: nothing is there, or the beam would have stopped at it."""
    edges = _beams_wedge(first, step, ranges.shape[0])
    for i in range(points.shape[0]):
        out[i] = _beyond_beam(
            points[i, 0] - ox, points[i, 1] - oy, edges, first, step, ranges, tolerance
        )


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
) -> bool:
    """:func:`beyond_beams` of the point (dx, dy) from the sweep's origin: whether the beam
    its bearing rounds to (halves to even) reaches further (a point not finite, or beyond the
    sweep, is not passed)."""
    if _side(dx, dy, edges) < 0 or step == 0.0:  # (a sweep of one bearing: no beam to pass)
        return False
    q = (math.atan2(dy, dx) - first) / step
    if not abs(q) < 1e15:
        return False
    k = int(np.rint(q))
    return 0 <= k < ranges.shape[0] and float(ranges[k]) > math.hypot(dx, dy) + tolerance


#: Sectors of bearing round the points' origin, by which a far point finds the cones it may
#: lie in (a bit each in an int64: rings of up to 64 transducers are sorted so).
_SECTORS = 64
#: A point this many times further from the origin than the furthest transducer is seen from
#: each transducer at most asin(1/3) ≈ 19.5° off its bearing from the origin.
_FAR = 3.0
#: Radians added to the widest a far point's bearing may differ and still fall in a cone: far
#: beyond the rounding of the sectors' arithmetic and the cones' own band (1e-6).
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
def _cone_tables(
    bearing: _Array, reach: _Array, tolerance: float
) -> tuple[_Array, _Array, _Array, _Array, _Array]:
    """Each cone's axis (cos, sin), the distance it must be nearer than, and the squared
    distances above which a point is clearly beyond that (inf: the test does not apply) and
    below which it is clearly within it (−1: none is)."""
    sonars = bearing.shape[0]
    cb = np.empty(sonars)
    sb = np.empty(sonars)
    near = np.empty(sonars)
    beyond = np.empty(sonars)
    within = np.empty(sonars)
    for j in range(sonars):
        cb[j] = math.cos(bearing[j])
        sb[j] = math.sin(bearing[j])
        near[j] = reach[j] - tolerance
        beyond[j] = near[j] * near[j] * (1.0 + 1e-12) if near[j] > 0.0 else math.inf
        within[j] = near[j] * near[j] * (1.0 - 1e-9) if near[j] > 0.0 else -1.0
    return cb, sb, near, beyond, within


@numba.njit(cache=True, nogil=True, inline="always")
def _in_cone(
    dx: float,
    dy: float,
    j: int,
    tables: tuple[_Array, _Array, _Array, _Array, _Array],
    bearing: float,
    half_cone: float,
    bounds: tuple[bool, bool, float, float, float, float],
) -> bool:
    """Whether (dx, dy) from cone ``j``'s transducer lies in it: clearly beyond its reach or
    behind the transducer is outside, without a square root (within 1e-12 relative of the
    reach, or within 2e-6 of the transducer, the exact tests decide); then by the cosine off
    the axis, clear of ``_CONE_BAND``; then by the angle."""
    cb, sb, near, beyond, within = tables
    fast, behind_out, cos_in, cos_out, cos_in_squared, cos_out_squared = bounds
    squared = dx * dx + dy * dy
    if squared > beyond[j]:
        return False
    if behind_out and squared > 4e-12:
        ahead = cb[j] * dx + sb[j] * dy
        if ahead <= 0.0:
            return False
        if squared < within[j]:  # h < near[j], and r = ahead / h is clear of the band
            if ahead * ahead < cos_out_squared * squared:
                return False
            if ahead * ahead > cos_in_squared * squared:
                return True
    h = math.hypot(dx, dy)
    if not h < near[j]:
        return False
    if fast and h > 1e-6:
        r = (cb[j] * dx + sb[j] * dy) / h
        if r < cos_out:
            return False
        if r > cos_in:
            return True
    d = math.atan2(dy, dx) - bearing
    off = abs(math.atan2(math.sin(d), math.cos(d)))
    return off < half_cone


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
) -> None:
    """``out``: which points lie in a cone nearer than its reach.

    Most points are decided by the cosine of their angle off the cone's axis, without an
    arctangent: clearly in or clearly out by ``_CONE_BAND`` radians; the rest by the angle.
    Of a narrow cone, points clearly nearer than the reach and clearly off the band are
    decided by squares, without a square root either. A point far from the origin is tested
    only against the cones its sector of bearing may lie in (:func:`_cone_sectors`): the
    others hold it nowhere near their sides, so it is outside them."""
    tables = _cone_tables(bearing, reach, tolerance)
    fast = _CONE_BAND < half_cone < math.pi - _CONE_BAND
    cos_in = math.cos(half_cone - _CONE_BAND)  # cosines above: clearly inside
    cos_out = math.cos(half_cone + _CONE_BAND)  # below: clearly outside
    behind_out = fast and cos_out > 0.0  # a cone narrower than a half-plane
    # the same bounds on the squared cosine, widened by far more than the squares' rounding
    cos_in_squared = cos_in * cos_in * (1.0 + 1e-9)
    cos_out_squared = cos_out * cos_out * (1.0 - 1e-9)
    bounds = (fast, behind_out, cos_in, cos_out, cos_in_squared, cos_out_squared)
    sectors, far = _cone_sectors(ox, oy, tables[0], tables[1], half_cone)
    far_squared = far * far
    for i in range(points.shape[0]):
        px, py = points[i, 0], points[i, 1]
        # not finite: NaN and inf fail the first test or the second
        square = px * px + py * py
        maybe = np.int64(-1)  # every cone
        if square >= far_squared and square < math.inf:
            maybe = sectors[_sector(px, py)]
        inside = False
        for j in range(ox.shape[0]):
            if (maybe >> j) & 1 and _in_cone(
                px - ox[j], py - oy[j], j, tables, bearing[j], half_cone, bounds
            ):
                inside = True
                break
        out[i] = inside


@numba.njit(cache=True, nogil=True)
def outside_sweep(
    points: _Array, ox: float, oy: float, first: float, last: float, out: _Mask
) -> None:
    """``out``: which points lie outside the bearings [first, last] seen from (ox, oy) (a
    point not finite is not: its bearing is no number)."""
    edges = _wedge(first, last)
    for i in range(points.shape[0]):
        dx = points[i, 0] - ox
        dy = points[i, 1] - oy
        side = _side(dx, dy, edges)
        if side != 0:
            out[i] = side < 0
            continue
        b = math.atan2(dy, dx)
        out[i] = b < first or b > last
