"""Box–box separation by the separating-axis theorem (15 axes), compiled over many pairs.

For two oriented boxes the candidate axes are the three face normals of each and the nine
cross products of their edge directions (Gottschalk; Ericson, *Real-Time Collision Detection*
§4.4.1). On each unit axis L the boxes' projections are separated by
``|t·L| − (r_a + r_b)``; the largest of these over the 15 axes is the **separation** ``s``:
``s > 0`` means the boxes are apart (and at least ``s`` apart), ``s ≤ 0`` means they intersect
or touch (closed boxes, as python-fcl counts them). ``s`` is continuous in the poses, so it also
tells whether a motion moves two intersecting boxes apart. Cross axes of (nearly) parallel
edges have no reliable direction and are skipped; the face axes cover that case.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

from freelook.arm._kinematics import boxes_kernel, fk_kernel
from freelook.arm._model import ArmModel

__all__ = ["obb_overlap", "obb_separation", "pair_separations"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]

#: |a_i × b_j| below this: the edges are parallel and the axis has no reliable direction (its
#: separation would carry rounding errors of 1e-16/|a_i × b_j|); the face axes stand in, at
#: worst calling boxes a micrometre apart touching
_PARALLEL = 1e-6


@numba.njit(cache=True, nogil=True, inline="always")
def _separation(
    ca: F64,
    ra: F64,
    ha: F64,
    cb: F64,
    rb: F64,
    hb: F64,
    pad: float,
    enough: float,
    R: F64,
    A: F64,
    t: F64,
) -> float:
    """Separation of box a (centre, rotation columns = axes, half extents) and box b, each
    grown by ``pad``. Once the boxes are known to be more than ``enough`` apart the search
    stops and returns that lower bound. ``R``, ``A`` (3×3) and ``t`` (3) are scratch space."""
    d0, d1, d2 = cb[0] - ca[0], cb[1] - ca[1], cb[2] - ca[2]
    a0, a1, a2 = ha[0] + pad, ha[1] + pad, ha[2] + pad
    b0, b1, b2 = hb[0] + pad, hb[1] + pad, hb[2] + pad
    # bounding spheres first: most pairs are far apart
    lower = math.sqrt(d0 * d0 + d1 * d1 + d2 * d2) - math.sqrt(a0 * a0 + a1 * a1 + a2 * a2)
    lower -= math.sqrt(b0 * b0 + b1 * b1 + b2 * b2)
    if lower > enough:
        return lower
    for i in range(3):
        t[i] = ra[0, i] * d0 + ra[1, i] * d1 + ra[2, i] * d2
        for j in range(3):
            R[i, j] = ra[0, i] * rb[0, j] + ra[1, i] * rb[1, j] + ra[2, i] * rb[2, j]
            A[i, j] = abs(R[i, j])
    best = -math.inf
    # a's faces
    for i in range(3):
        r_a = a0 if i == 0 else (a1 if i == 1 else a2)
        s = abs(t[i]) - r_a - (b0 * A[i, 0] + b1 * A[i, 1] + b2 * A[i, 2])
        best = max(best, s)
        if best > enough:
            return float(best)
    # b's faces
    for j in range(3):
        r_b = b0 if j == 0 else (b1 if j == 1 else b2)
        tb = t[0] * R[0, j] + t[1] * R[1, j] + t[2] * R[2, j]
        s = abs(tb) - r_b - (a0 * A[0, j] + a1 * A[1, j] + a2 * A[2, j])
        best = max(best, s)
        if best > enough:
            return float(best)
    # edge × edge: L = a_i × b_j, written in a's frame
    ha_ = (a0, a1, a2)
    hb_ = (b0, b1, b2)
    for i in range(3):
        i1 = (i + 1) % 3
        i2 = (i + 2) % 3
        for j in range(3):
            # |a_i × b_j| from the two small components, not as √(1 − R_ij²): no cancellation
            n = math.sqrt(R[i1, j] * R[i1, j] + R[i2, j] * R[i2, j])
            if n < _PARALLEL:
                continue
            j1 = (j + 1) % 3
            j2 = (j + 2) % 3
            r_a = ha_[i1] * A[i2, j] + ha_[i2] * A[i1, j]
            r_b = hb_[j1] * A[i, j2] + hb_[j2] * A[i, j1]
            tl = t[i2] * R[i1, j] - t[i1] * R[i2, j]
            s = (abs(tl) - r_a - r_b) / n
            best = max(best, s)
            if best > enough:
                return float(best)
    return float(best)


@numba.njit(cache=True, nogil=True)
def _separation_kernel(ca: F64, ra: F64, ha: F64, cb: F64, rb: F64, hb: F64, out: F64) -> None:
    R, A, t = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    for p in range(ca.shape[0]):
        out[p] = _separation(ca[p], ra[p], ha[p], cb[p], rb[p], hb[p], 0.0, math.inf, R, A, t)


def obb_separation(ca: F64, ra: F64, ha: F64, cb: F64, rb: F64, hb: F64) -> F64:
    """Separation of each pair of boxes: centres (P, 3), rotations (P, 3, 3), half extents
    (P, 3) for a and for b; positive when apart, ≤ 0 when they intersect or touch."""
    a = [np.ascontiguousarray(x, dtype=np.float64) for x in (ca, ra, ha, cb, rb, hb)]
    out = np.empty(a[0].shape[0])
    _separation_kernel(a[0], a[1], a[2], a[3], a[4], a[5], out)
    return out


def obb_overlap(ca: F64, ra: F64, ha: F64, cb: F64, rb: F64, hb: F64) -> npt.NDArray[np.bool_]:
    """Whether each pair of boxes intersects or touches (see :func:`obb_separation`)."""
    return obb_separation(ca, ra, ha, cb, rb, hb) <= 0.0


@numba.njit(cache=True, nogil=True)
def separations_kernel(
    q: F64,
    parent: I64,
    origin: F64,
    axis: F64,
    kind: I64,
    link_q: I64,
    scale: F64,
    offset: F64,
    box_link: I64,
    box_origin: F64,
    half: F64,
    pair_a: I64,
    pair_b: I64,
    pad: float,
    enough: float,
    out: F64,
) -> None:
    """Fill ``out`` (B, P) with the separation of every checked pair in every pose of ``q``
    (a lower bound where it exceeds ``enough``)."""
    n_batch = q.shape[0]
    links = np.empty((n_batch, parent.shape[0], 4, 4))
    centres = np.empty((n_batch, box_link.shape[0], 3))
    rotations = np.empty((n_batch, box_link.shape[0], 3, 3))
    fk_kernel(q, parent, origin, axis, kind, link_q, scale, offset, links)
    boxes_kernel(links, box_link, box_origin, centres, rotations)
    R, A, t = np.empty((3, 3)), np.empty((3, 3)), np.empty(3)
    for b in range(n_batch):
        for p in range(pair_a.shape[0]):
            i, k = pair_a[p], pair_b[p]
            out[b, p] = _separation(
                centres[b, i], rotations[b, i], half[i], centres[b, k], rotations[b, k], half[k],
                pad, enough, R, A, t,
            )  # fmt: skip


def pair_separations(
    model: ArmModel, q: F64, padding: float = 0.0, enough: float = math.inf
) -> F64:
    """Separation of every checked pair, (P,) for one pose or (B, P) for a batch; every box
    grown by ``padding`` metres on each side. Pairs further apart than ``enough`` may get a
    smaller positive lower bound instead (the search stops early: much faster)."""
    arr = np.ascontiguousarray(q, dtype=np.float64)
    single = arr.ndim == 1
    arr = arr.reshape(-1, model.n_joints)
    out = np.empty((arr.shape[0], model.n_pairs))
    separations_kernel(
        arr, model.link_parent, model.link_origin, model.link_axis, model.link_kind,
        model.link_q, model.link_scale, model.link_offset, model.box_link, model.box_origin,
        model.half_extents, model.pair_a, model.pair_b, float(padding), float(enough), out,
    )  # fmt: skip
    return out[0] if single else out
