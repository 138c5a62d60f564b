"""The particle filter's compiled loops: beam scoring, motion, reweighting and resampling.

A particle's score is the sum, over the scan's beams, of the likelihood field read at the
beam's end point as that particle would see it: a bilinear lookup between the four nearest
cell centres of a float32 table. The particles are visited in a given order, a chunk of them at
a time, beam by beam: one beam's end points from neighbouring particles fall in a small patch
of the table, so the lookups stay in cache. Each particle's beams are summed in scan order,
whatever the order the particles are visited in, so a score does not depend on it.

A chunk's lookups of one beam are three loops: where each end point falls (its cell and its
place in it), the four cells around it fetched, and the blend. The first and the last read and
write only the chunk's own arrays, element by element, so the compiler runs them several
particles at a time; the fetch reads the table wherever the end points fall, one at a time.
"""

from __future__ import annotations

import functools
import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = [
    "SCATTER_HEADINGS",
    "TableFrame",
    "compile_kernels",
    "log_weights",
    "log_weights_split",
    "move",
    "reweight",
    "scatter_order",
    "systematic",
]

_Array = npt.NDArray[np.float64]
_Table = npt.NDArray[np.float32]
_Indices = npt.NDArray[np.int64]
_Cells = npt.NDArray[np.uint64]
#: Where a table lies and what a beam ending off it scores: (origin x, origin y, a cell's
#: side, the score outside the cell centres).
TableFrame = tuple[float, float, float, float]

SCATTER_HEADINGS = 64  # heading bins of :func:`scatter_order`
_CHUNK = 128  # particles scored together, beam by beam


@numba.njit(cache=True, nogil=True)
def _place(
    poses: tuple[_Array, _Array, _Array, _Array],
    end: tuple[float, float],
    table: tuple[int, float, float],
    cell: _Cells,
    fx: _Array,
    fy: _Array,
) -> None:
    """Where the end point ``end`` (robot frame, in table cells) falls for each of the
    ``poses`` (x, y in cells from the first cell's centre; cos, sin of the heading): the index
    of the cell at or below it among the table's flat rows (``table``: a row's cells, the last
    column's and row's indices) and its place in that cell, ``fx`` NaN where the four cells
    around it do not all exist (beyond the outer cell centres, or not a number; the index is
    then the first cell's)."""
    gx0, gy0, c, s = poses
    ax, ay = end
    cols, last_col, last_row = table
    for q in range(gx0.shape[0]):
        gx = gx0[q] + c[q] * ax - s[q] * ay
        gy = gy0[q] + s[q] * ax + c[q] * ay
        fj = np.floor(gx)
        fi = np.floor(gy)
        inside = (fj >= 0.0) & (fj < last_col) & (fi >= 0.0) & (fi < last_row)
        fj = fj if inside else 0.0
        fi = fi if inside else 0.0
        fx[q] = gx - fj if inside else math.nan
        fy[q] = gy - fi
        # unsigned: numba adds no check for a negative index
        cell[q] = np.uint64(fi) * np.uint64(cols) + np.uint64(fj)


@numba.njit(cache=True, nogil=True)
def _fetch(
    flat: npt.NDArray[np.float32],
    cols: int,
    cell: _Cells,
    corners: tuple[_Array, _Array, _Array, _Array],
) -> None:
    """The four cells from each ``cell`` on (itself, the next, the two above them)."""
    t00, t01, t10, t11 = corners
    right, up, diagonal = np.uint64(1), np.uint64(cols), np.uint64(cols + 1)
    for q in range(cell.shape[0]):
        t00[q] = flat[cell[q]]
        t01[q] = flat[cell[q] + right]
        t10[q] = flat[cell[q] + up]
        t11[q] = flat[cell[q] + diagonal]


@numba.njit(cache=True, nogil=True)
def _blend(
    fx: _Array,
    fy: _Array,
    corners: tuple[_Array, _Array, _Array, _Array],
    outside: float,
    total: _Array,
) -> None:
    """Adds to ``total`` each end point's value, bilinear between its four cells (``outside``
    where :func:`_place` found them missing). Interpolated, the field is continuous: a beam
    ending on a wall face scores the same from either side of the wall."""
    t00, t01, t10, t11 = corners
    for q in range(fx.shape[0]):
        near = (1.0 - fx[q]) * t00[q] + fx[q] * t01[q]
        far = (1.0 - fx[q]) * t10[q] + fx[q] * t11[q]
        value = (1.0 - fy[q]) * near + fy[q] * far
        total[q] += value if fx[q] == fx[q] else outside


@numba.njit(cache=True, nogil=True)
def log_weights(
    particles: _Array,
    order: _Indices,
    beams: tuple[_Array, _Array],
    table: _Table,
    frame: TableFrame,
    out: _Array,
) -> None:
    """Each particle ``order`` lists: its summed beam log-likelihood on ``table``, into its
    place in ``out`` (the others are left alone). ``beams``: the end points (x, y) in the
    robot frame."""
    bx, by = beams
    ox, oy, resolution, outside = frame
    inv = 1.0 / resolution
    n = order.shape[0]
    # each particle's pose in table cells, relative to the cell centres, and its heading
    gx0, gy0, c, s = np.empty(n), np.empty(n), np.empty(n), np.empty(n)
    for q in range(n):
        p = order[q]
        c[q] = math.cos(particles[p, 2])
        s[q] = math.sin(particles[p, 2])
        gx0[q] = (particles[p, 0] - ox) * inv - 0.5
        gy0[q] = (particles[p, 1] - oy) * inv - 0.5
    total = np.zeros(n)
    rows, cols = table.shape
    flat = np.ascontiguousarray(table).ravel()  # a view of a C-ordered table
    shape = (cols, cols - 1.0, rows - 1.0)
    # a chunk's end points of one beam: cells, places in them, the four cells' values
    cells = np.empty(_CHUNK, dtype=np.uint64)
    places = (np.empty(_CHUNK), np.empty(_CHUNK))
    values = (np.empty(_CHUNK), np.empty(_CHUNK), np.empty(_CHUNK), np.empty(_CHUNK))
    for lo in range(0, n, _CHUNK):
        chunk = slice(lo, min(n, lo + _CHUNK))
        m = chunk.stop - lo
        poses = (gx0[chunk], gy0[chunk], c[chunk], s[chunk])
        cell, fx, fy, sums = cells[:m], places[0][:m], places[1][:m], total[chunk]
        corners = (values[0][:m], values[1][:m], values[2][:m], values[3][:m])
        for k in range(bx.shape[0]):
            _place(poses, (bx[k] * inv, by[k] * inv), shape, cell, fx, fy)
            _fetch(flat, cols, cell, corners)
            _blend(fx, fy, corners, outside, sums)
    for q in range(n):
        out[order[q]] = total[q]


@numba.njit(cache=True, nogil=True, parallel=True)
def log_weights_split(
    particles: _Array,
    order: _Indices,
    beams: tuple[_Array, _Array],
    table: _Table,
    frame: TableFrame,
    out: _Array,
    parts: int,
) -> None:
    """:func:`log_weights` on ``parts`` slices of ``order`` at once, one per core."""
    n = order.shape[0]
    size = (n + parts - 1) // parts
    for part in numba.prange(parts):
        lo = part * size
        hi = min(n, lo + size)
        log_weights(particles, order[lo:hi], beams, table, frame, out)


@numba.njit(cache=True, nogil=True)
def scatter_order(
    particles: _Array, ox: float, oy: float, places: tuple[float, int, int]
) -> _Indices:
    """The particles' indices sorted by heading bin, then place (squares of side
    ``places[0]``, ``places[1]`` a row, ``places[2]`` rows; by row, then column), all in one
    counting sort; a pose off the map counts to the edge place. Scored in this order, poses
    drawn all over the map keep their lookups local."""
    cell, nx, ny = places
    n = particles.shape[0]
    buckets = SCATTER_HEADINGS * ny * nx
    key = np.empty(n, dtype=np.int64)
    start = np.zeros(buckets + 1, dtype=np.int64)
    for p in range(n):
        col = min(max(math.floor((particles[p, 0] - ox) / cell), 0), nx - 1)
        row = min(max(math.floor((particles[p, 1] - oy) / cell), 0), ny - 1)
        heading = math.floor(particles[p, 2] / (2.0 * math.pi) * SCATTER_HEADINGS)
        key[p] = ((heading % SCATTER_HEADINGS) * ny + row) * nx + col
        start[key[p] + 1] += 1
    for b in range(buckets):
        start[b + 1] += start[b]
    order = np.empty(n, dtype=np.int64)
    for p in range(n):
        order[start[key[p]]] = p
        start[key[p]] += 1
    return order


@numba.njit(cache=True, nogil=True)
def move(
    particles: _Array,
    noise: _Array,
    rot1: float,
    trans: float,
    rot2: float,
    spread: tuple[float, float, float],
) -> None:
    """Move each particle by rotate–translate–rotate, each step blurred by its own noise."""
    for p in range(particles.shape[0]):
        heading = particles[p, 2] + rot1 - noise[p, 0] * spread[0]
        step = trans - noise[p, 1] * spread[1]
        particles[p, 0] += step * math.cos(heading)
        particles[p, 1] += step * math.sin(heading)
        particles[p, 2] = heading + rot2 - noise[p, 2] * spread[2]


@numba.njit(cache=True, nogil=True)
def reweight(scores: _Array, weights: _Array, temperature: float) -> float:
    """Multiply the weights by the tempered likelihoods, normalise in place; returns the
    weighted mean score."""
    n = weights.shape[0]
    top = -np.inf
    for p in range(n):
        weights[p] = scores[p] / temperature + math.log(max(weights[p], 1e-300))
        top = max(top, weights[p])
    total = 0.0
    for p in range(n):
        weights[p] = math.exp(weights[p] - top)
        total += weights[p]
    mean = 0.0
    for p in range(n):
        weights[p] /= total
        mean += weights[p] * scores[p]
    return mean


@numba.njit(cache=True, nogil=True)
def systematic(weights: _Array, start: float, out: _Indices) -> None:
    """Low-variance resampling: for evenly spaced positions ``(start + k) / len(out)``, the
    index where the running sum of ``weights`` first reaches each (one pass, both sorted)."""
    count = out.shape[0]
    last = weights.shape[0] - 1
    i = 0
    running = weights[0]
    for k in range(count):
        position = (start + k) / count
        while running < position and i < last:
            i += 1
            running += weights[i]
        out[k] = i


@functools.cache
def compile_kernels() -> None:
    """Compile (or load from numba's cache) the tracking loops now, on tiny inputs, not in the
    middle of a running robot's first localization.

    The split scorer waits for the first global search: loading it starts numba's pool of
    worker threads, which a tracking robot has no use for.
    """
    poses = np.zeros((4, 3))
    scores = np.zeros(4)
    beams = np.zeros(2)
    table = np.zeros((4, 4), dtype=np.float32)
    log_weights(poses, np.arange(4), (beams, beams), table, (0.0, 0.0, 1.0, 0.0), scores)
    move(poses, np.zeros((4, 3)), 0.0, 0.0, 0.0, (0.0, 0.0, 0.0))
    reweight(scores, np.full(4, 0.25), 1.0)
    systematic(np.full(4, 0.25), 0.5, np.empty(4, dtype=np.int64))
