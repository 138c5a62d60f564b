"""The particle filter's compiled kernels against plain numpy/scipy statements of the same math
(within rounding: the two sum in different orders)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.ndimage import map_coordinates

from freelook.estimation._kernels import (
    SCATTER_HEADINGS,
    log_weights,
    log_weights_split,
    move,
    scatter_order,
    systematic,
)
from freelook.estimation._search import best

seeds = st.integers(0, 2**32 - 1)
#: the kernel and the references below sum the same terms, but not always in one order
_ROUNDING = {"rtol": 1e-12, "atol": 1e-9}


def _scores(
    particles: np.ndarray,
    bx: np.ndarray,
    by: np.ndarray,
    table: np.ndarray,
    origin: tuple[float, float],
    resolution: float,
    outside: float,
) -> np.ndarray:
    """:func:`log_weights` of every particle, in their own order."""
    out = np.full(len(particles), np.nan)
    frame = (*origin, resolution, outside)
    log_weights(particles, np.arange(len(particles)), (bx, by), table, frame, out)
    return out


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 300), st.integers(1, 40))
def test_scores_are_bilinear_lookups_of_each_beam_end(seed: int, count: int, beams: int) -> None:
    rng = np.random.default_rng(seed)
    table = rng.normal(-2.0, 1.0, (30, 40)).astype(np.float32)
    resolution, origin, outside = 0.1, (-0.5, 0.3), -7.0
    particles = np.column_stack(
        [rng.uniform(-1.0, 4.0, count), rng.uniform(-0.5, 3.5, count), rng.uniform(-4, 4, count)]
    )
    bx, by = rng.uniform(-1.5, 1.5, beams), rng.uniform(-1.5, 1.5, beams)
    out = _scores(particles, bx, by, table, origin, resolution, outside)

    c, s = np.cos(particles[:, 2:3]), np.sin(particles[:, 2:3])
    ex = particles[:, 0:1] + c * bx - s * by
    ey = particles[:, 1:2] + s * bx + c * by
    col = (ex - origin[0]) / resolution - 0.5  # table cells are centred on their index
    row = (ey - origin[1]) / resolution - 0.5
    inside = (col >= 0) & (row >= 0) & (col < table.shape[1] - 1) & (row < table.shape[0] - 1)
    looked_up = map_coordinates(table.astype(np.float64), [row.ravel(), col.ravel()], order=1)
    expected = np.where(inside, looked_up.reshape(row.shape), outside).sum(axis=1)
    np.testing.assert_allclose(out, expected, **_ROUNDING)


def _scalar_scores(
    particles: np.ndarray,
    bx: np.ndarray,
    by: np.ndarray,
    table: np.ndarray,
    origin: tuple[float, float],
    resolution: float,
    outside: float,
) -> np.ndarray:
    """The lookup one particle and one beam at a time, in Python's own doubles."""
    rows, cols = table.shape
    inv = 1.0 / resolution
    scores = []
    for x, y, theta in particles.tolist():
        c, s = math.cos(theta), math.sin(theta)
        gx0, gy0 = (x - origin[0]) * inv - 0.5, (y - origin[1]) * inv - 0.5
        total = 0.0
        for ex, ey in zip(bx.tolist(), by.tolist(), strict=True):
            ax, ay = ex * inv, ey * inv
            gx = gx0 + c * ax - s * ay
            gy = gy0 + s * ax + c * ay
            j, i = math.floor(gx), math.floor(gy)
            if 0 <= i < rows - 1 and 0 <= j < cols - 1:
                fx, fy = gx - j, gy - i
                t00, t01 = float(table[i, j]), float(table[i, j + 1])
                t10, t11 = float(table[i + 1, j]), float(table[i + 1, j + 1])
                total += (1.0 - fy) * ((1.0 - fx) * t00 + fx * t01) + fy * (
                    (1.0 - fx) * t10 + fx * t11
                )
            else:
                total += outside
        scores.append(total)
    return np.array(scores)


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 70), st.integers(1, 12))
def test_scores_at_the_table_s_edges_are_those_of_a_lookup_one_at_a_time(
    seed: int, count: int, beams: int
) -> None:
    rng = np.random.default_rng(seed)
    rows, cols = 9, 13
    table = rng.normal(-2.0, 1.0, (rows, cols)).astype(np.float32)
    resolution, origin, outside = 0.1, (-0.5, 0.3), -7.0
    # poses over the table and beyond it, some with end points exactly on the cell centres
    # that bound the table (the first and the last that still have four cells)
    particles = np.column_stack(
        [rng.uniform(-1.2, 1.2, count), rng.uniform(-0.4, 1.5, count), rng.uniform(-4, 4, count)]
    )
    bx, by = rng.uniform(-0.6, 0.6, beams), rng.uniform(-0.6, 0.6, beams)
    edges = [(0.0, 0.0), (cols - 2, rows - 2), (cols - 2 + 1e-12, 0.5), (cols - 1, 1.0)]
    for k, (gx, gy) in enumerate(edges[: min(count, len(edges))]):
        particles[k] = (origin[0] + (gx + 0.5) * resolution, origin[1] + (gy + 0.5) * resolution, 0)
    bx[0] = by[0] = 0.0
    out = _scores(particles, bx, by, table, origin, resolution, outside)
    expected = _scalar_scores(particles, bx, by, table, origin, resolution, outside)
    np.testing.assert_allclose(out, expected, **_ROUNDING)


@settings(max_examples=60, deadline=None)
@given(seeds, st.integers(1, 500), st.integers(1, 500))
def test_systematic_resampling_matches_the_sorted_search(seed: int, size: int, count: int) -> None:
    rng = np.random.default_rng(seed)
    weights = rng.random(size) ** 4  # uneven, with some near zero
    weights /= weights.sum()
    start = float(rng.random())
    out = np.empty(count, dtype=np.int64)
    systematic(weights, start, out)
    positions = (start + np.arange(count)) / count
    expected = np.minimum(np.searchsorted(np.cumsum(weights), positions), size - 1)
    # the running sum and numpy's cumsum may round differently right at a boundary
    differs = out != expected
    assert differs.sum() <= 1
    assert np.all(np.abs(out - expected) <= 1)


@settings(max_examples=40, deadline=None)
@given(seeds, st.floats(-0.5, 0.5), st.floats(-0.3, 0.3), st.floats(-0.5, 0.5))
def test_motion_is_rotate_translate_rotate(
    seed: int, rot1: float, trans: float, rot2: float
) -> None:
    rng = np.random.default_rng(seed)
    particles = rng.uniform(-3, 3, (50, 3))
    noise = rng.standard_normal((50, 3))
    spread = (0.01, 0.02, 0.03)
    moved = particles.copy()
    move(moved, noise, rot1, trans, rot2, spread)
    heading = particles[:, 2] + rot1 - noise[:, 0] * spread[0]
    step = trans - noise[:, 1] * spread[1]
    np.testing.assert_allclose(moved[:, 0], particles[:, 0] + step * np.cos(heading))
    np.testing.assert_allclose(moved[:, 1], particles[:, 1] + step * np.sin(heading))
    np.testing.assert_allclose(moved[:, 2], heading + rot2 - noise[:, 2] * spread[2])
    # without noise a particle moves exactly by the odometry increment
    still = particles[:1].copy()
    move(still, np.zeros((1, 3)), rot1, trans, rot2, spread)
    x, y, theta = particles[0]
    np.testing.assert_allclose(
        still[0],
        [
            x + trans * math.cos(theta + rot1),
            y + trans * math.sin(theta + rot1),
            theta + rot1 + rot2,
        ],
        atol=1e-12,
    )


@settings(max_examples=40, deadline=None)
@given(seeds, st.integers(1, 600), st.integers(1, 40))
def test_the_order_particles_are_visited_in_changes_no_score(
    seed: int, count: int, beams: int
) -> None:
    """Each particle's beams are summed in scan order however the particles are visited
    (sorted by heading and place, split across cores): the very same scores."""
    rng = np.random.default_rng(seed)
    table = rng.normal(-2.0, 1.0, (60, 80)).astype(np.float32)
    resolution, origin, outside = 0.05, (-0.5, 0.3), -7.0
    # poses over the map and beyond its edges, headings of any turn count
    particles = np.column_stack(
        [rng.uniform(-1.0, 4.0, count), rng.uniform(-0.5, 3.5, count), rng.uniform(-9, 9, count)]
    )
    bx, by = rng.uniform(-1.5, 1.5, beams), rng.uniform(-1.5, 1.5, beams)
    plain = _scores(particles, bx, by, table, origin, resolution, outside)

    cell = 0.5
    order = scatter_order(particles, *origin, (cell, 8, 6))
    assert np.array_equal(np.sort(order), np.arange(count))  # each particle once
    place = np.floor((particles[order, 1] - origin[1]) / cell)
    heading = np.floor(particles[order, 2] / (2 * math.pi) * SCATTER_HEADINGS) % SCATTER_HEADINGS
    key = heading * 6 + np.clip(place, 0, 5)
    assert np.all(np.diff(key) >= 0)  # heading bin first, then row of places

    frame = (*origin, resolution, outside)
    sorted_scores = np.full(count, np.nan)
    log_weights(particles, order, (bx, by), table, frame, sorted_scores)
    assert np.array_equal(sorted_scores, plain)
    split = np.full(count, np.nan)
    log_weights_split(particles, order, (bx, by), table, frame, split, 3)
    assert np.array_equal(split, plain)
    some = np.full(count, np.nan)
    log_weights(particles, order[::2], (bx, by), table, frame, some)
    assert np.array_equal(some[order[::2]], plain[order[::2]])
    assert np.isnan(some[order[1::2]]).all()  # the particles not listed are left alone


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from([-3.0, -2.0, -1.5, 0.0, math.nan]) | st.floats(-9, 9), min_size=1),
    st.data(),
)
def test_the_best_scores_are_argpartition_s_sorted(
    scores: list[float], data: st.DataObject
) -> None:
    """Ties at the cut (few distinct values) and NaNs too: the same indices, in order."""
    values = np.array(scores)
    count = data.draw(st.integers(1, len(values)))
    expected = np.sort(np.argpartition(-values, count - 1)[:count])
    np.testing.assert_array_equal(best(values, count), expected)
