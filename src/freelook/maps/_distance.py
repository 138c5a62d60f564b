"""Distances and resampling on a grid: what localization's likelihood field, the ray caster's
clearance table and the start finder need, without scipy.ndimage.

A robot program builds these once per map; importing scipy.ndimage for them cost its process
about 15 MB (scipy.special, scipy.linalg and a second OpenBLAS come along). Each function
returns what its scipy.ndimage counterpart returns, to the bit (the tests compare them).
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

__all__ = ["distance_to_background", "grow", "interpolate_linear"]


@numba.njit(cache=True, nogil=True)
def _lower_envelope(
    f: npt.NDArray[np.float64],
    out: npt.NDArray[np.float64],
    v: npt.NDArray[np.int64],
    z: npt.NDArray[np.float64],
) -> None:
    """``out[q] = min over p of (q − p)² + f[p]``: the lower envelope of parabolas
    (Felzenszwalb and Huttenlocher). Integer-valued inputs below 2⁵² give exact outputs."""
    n = f.shape[0]
    k = 0
    v[0] = 0
    z[0] = -math.inf
    z[1] = math.inf
    for q in range(1, n):
        p = v[k]
        s = ((f[q] + q * q) - (f[p] + p * p)) / (2.0 * (q - p))
        while s <= z[k]:  # z[0] is −∞: the loop ends
            k -= 1
            p = v[k]
            s = ((f[q] + q * q) - (f[p] + p * p)) / (2.0 * (q - p))
        k += 1
        v[k] = q
        z[k] = s
        z[k + 1] = math.inf
    k = 0
    for q in range(n):
        while z[k + 1] < q:
            k += 1
        p = v[k]
        out[q] = (q - p) * (q - p) + f[p]


@numba.njit(cache=True, nogil=True)
def _squared_distances(mask: npt.NDArray[np.bool_], out: npt.NDArray[np.float64]) -> None:
    """Squared distance (cells²) from each cell centre to the nearest False cell's centre."""
    rows, cols = mask.shape
    far = float(rows * rows + cols * cols) * 4.0 + 1.0  # beyond any distance on the grid
    # down each column: the distance to the nearest False cell in it, squared
    for j in range(cols):
        gap = -1
        for i in range(rows):
            if not mask[i, j]:
                gap = 0
            elif gap >= 0:
                gap += 1
            out[i, j] = far if gap < 0 else float(gap)
        gap = -1
        for i in range(rows - 1, -1, -1):
            if not mask[i, j]:
                gap = 0
            elif gap >= 0:
                gap += 1
            if gap >= 0 and gap < out[i, j]:  # far exceeds every gap
                out[i, j] = float(gap)
        for i in range(rows):
            if out[i, j] != far:
                out[i, j] = out[i, j] * out[i, j]
    # along each row: the nearest over all columns
    f = np.empty(cols)
    d = np.empty(cols)
    v = np.empty(cols, dtype=np.int64)
    z = np.empty(cols + 1)
    for i in range(rows):
        for j in range(cols):
            f[j] = out[i, j]
        _lower_envelope(f, d, v, z)
        for j in range(cols):
            out[i, j] = d[j] if d[j] < far else math.inf


def distance_to_background(mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.float64]:
    """Distance (cells) from each True cell's centre to the nearest False cell's centre; 0 on
    False cells, infinity everywhere when no cell is False.

    The exact Euclidean distance transform (``scipy.ndimage.distance_transform_edt``'s
    distances, to the bit): squared distances are whole numbers, found exactly, and their
    square root is rounded once.
    """
    cells = np.ascontiguousarray(mask, dtype=np.bool_)
    if cells.ndim != 2:
        raise ValueError(f"a grid is 2-D, got {cells.ndim} dimensions")
    squared = np.empty(cells.shape)
    if cells.size:
        _squared_distances(cells, squared)
    return np.sqrt(squared)


def grow(grid: npt.NDArray[np.bool_]) -> npt.NDArray[np.bool_]:
    """``grid`` grown by one cell each way, diagonals included (a 3 × 3 binary dilation; cells
    beyond the edge count as False)."""
    cells = np.asarray(grid, dtype=np.bool_)
    across = cells.copy()
    across[:, 1:] |= cells[:, :-1]
    across[:, :-1] |= cells[:, 1:]
    grown = across.copy()
    grown[1:] |= across[:-1]
    grown[:-1] |= across[1:]
    return grown


def interpolate_linear(
    values: npt.NDArray[np.float64],
    rows: npt.NDArray[np.float64],
    cols: npt.NDArray[np.float64],
) -> npt.NDArray[np.float64]:
    """``values`` at fractional (row, column) positions (arrays of one shape), bilinear between
    cell centres; positions beyond the edge take the edge's values.

    ``scipy.ndimage.map_coordinates(values, (rows, cols), order=1, mode="nearest")``, to the
    bit: its weights (the second of each pair is one less the first) and its order of sums.
    """
    grid = np.asarray(values, dtype=np.float64)
    n_rows, n_cols = grid.shape
    r0 = np.floor(rows)
    c0 = np.floor(cols)
    wr = np.empty((2, *np.shape(rows)))
    wc = np.empty((2, *np.shape(cols)))
    wr[0] = 1.0 - (rows - r0)
    wr[1] = 1.0 - wr[0]
    wc[0] = 1.0 - (cols - c0)
    wc[1] = 1.0 - wc[0]
    i = r0.astype(np.int64)
    j = c0.astype(np.int64)
    i_at = (np.clip(i, 0, n_rows - 1), np.clip(i + 1, 0, n_rows - 1))
    j_at = (np.clip(j, 0, n_cols - 1), np.clip(j + 1, 0, n_cols - 1))
    total = np.zeros(np.shape(rows))
    for a in range(2):
        for b in range(2):
            total += grid[i_at[a], j_at[b]] * wr[a] * wc[b]
    return total
