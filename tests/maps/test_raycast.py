"""Ray casting: the ranges of a walk through every cell, a clearance table that makes the
jumps safe, computed once per map whichever object holds it."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.maps import cast_fan, cast_rays, clearance_of, enclosed_of, grid_key, load_world


def test_a_map_loaded_twice_shares_its_clearance_and_a_changed_one_does_not() -> None:
    first, second = load_world("lab").obstacles(), load_world("lab").obstacles()
    assert first is not second
    assert clearance_of(second) is clearance_of(first)
    changed = first.copy()
    changed[0, 0] = not changed[0, 0]
    assert grid_key(changed) != grid_key(first)
    assert clearance_of(changed) is not clearance_of(first)
    # the same cells in another shape are another map
    assert grid_key(first.reshape(first.shape[1], first.shape[0])) != grid_key(first)


def _walk(
    grid: npt.NDArray[np.bool_], x: float, y: float, dx: float, dy: float, max_range: float
) -> float:
    """A beam walked through every cell it crosses (grid origin 0, 0 and cells of 1 m), each
    crossing worked out from the boundary crossed: no jumps."""
    rows, cols = grid.shape
    i, j = math.floor(y), math.floor(x)
    if not (0 <= i < rows and 0 <= j < cols):
        return max_range
    if grid[i, j]:
        return 0.0
    bx = float(j + 1 if dx > 0 else j)
    by = float(i + 1 if dy > 0 else i)
    t_x = (bx - x) * (1.0 / dx) if dx != 0 else 1e30
    t_y = (by - y) * (1.0 / dy) if dy != 0 else 1e30
    while True:
        if t_x < t_y:
            t = t_x
            j += 1 if dx > 0 else -1
            bx += 1 if dx > 0 else -1
            t_x = (bx - x) * (1.0 / dx)
        else:
            t = t_y
            i += 1 if dy > 0 else -1
            by += 1 if dy > 0 else -1
            t_y = (by - y) * (1.0 / dy)
        if t > max_range or not (0 <= i < rows and 0 <= j < cols):
            return max_range
        if grid[i, j]:
            return min(t, max_range)


@st.composite
def _grids(draw: st.DrawFn) -> npt.NDArray[np.bool_]:
    """Random rooms: walls round a grid of up to 60 × 60 cells, blocks and speckle inside."""
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    rows, cols = draw(st.integers(3, 60)), draw(st.integers(3, 60))
    grid = rng.random((rows, cols)) < draw(st.floats(0.0, 0.1))
    for _ in range(draw(st.integers(0, 6))):
        i, j = rng.integers(0, rows), rng.integers(0, cols)
        grid[i : i + rng.integers(1, 8), j : j + rng.integers(1, 8)] = True
    if draw(st.booleans()):
        grid[[0, -1], :] = True
        grid[:, [0, -1]] = True
    return grid


@settings(max_examples=60, deadline=None)
@given(_grids(), st.integers(0, 2**32 - 1))
def test_a_beam_s_range_is_the_cell_walk_s_to_the_bit_however_far_it_jumped(
    grid: npt.NDArray[np.bool_], seed: int
) -> None:
    rng = np.random.default_rng(seed)
    rows, cols = grid.shape
    for _ in range(5):
        x, y = rng.uniform(-2, cols + 2), rng.uniform(-2, rows + 2)
        angles = rng.uniform(-math.pi, math.pi, 40)
        angles[:4] = (0.0, math.pi / 2, math.pi, -math.pi / 2)  # along the grid's lines too
        cast = cast_rays(grid, (0.0, 0.0), 1.0, x, y, angles, 80.0)
        walked = [_walk(grid, x, y, math.cos(a), math.sin(a), 80.0) for a in angles]
        np.testing.assert_array_equal(cast, walked)
    # from cells' corners along the grid's lines and diagonals, where a beam runs on boundaries
    along = np.linspace(-math.pi, math.pi, 9)
    for _ in range(3):
        x, y = float(rng.integers(0, cols + 1)), float(rng.integers(0, rows + 1))
        cast = cast_rays(grid, (0.0, 0.0), 1.0, x, y, along, 80.0)
        walked = [_walk(grid, x, y, math.cos(a), math.sin(a), 80.0) for a in along]
        np.testing.assert_array_equal(cast, walked)


def test_the_lab_s_ranges_are_the_cell_walk_s_to_the_bit() -> None:
    lab = load_world("lab")
    grid, (ox, oy), resolution = lab.obstacles(), lab.origin, lab.resolution
    rng = np.random.default_rng(3)
    angles = np.linspace(-math.pi, math.pi, 721)
    # the first start sits on cells' boundaries: beams along them land on them after a jump
    starts = [(11.25, 6.25)] + [(rng.uniform(0.5, 17.5), rng.uniform(0.5, 13.0)) for _ in range(4)]
    for x, y in starts:
        cast = cast_rays(grid, lab.origin, resolution, x, y, angles, 30.0)
        gx, gy = (x - ox) / resolution, (y - oy) / resolution
        walked = [
            _walk(grid, gx, gy, math.cos(a), math.sin(a), 30.0 / resolution) * resolution
            for a in angles
        ]
        np.testing.assert_array_equal(cast, np.minimum(walked, 30.0))


@settings(max_examples=40, deadline=None)
@given(_grids())
def test_clearance_is_how_far_a_beam_may_go_from_anywhere_in_a_cell(
    grid: npt.NDArray[np.bool_],
) -> None:
    """The distance between a free cell's square and the nearest obstacle cell's, by brute
    force; -1 on obstacles."""
    clearance = clearance_of(grid)
    obstacles = np.argwhere(grid)
    for (i, j), value in np.ndenumerate(clearance):
        if grid[i, j]:
            assert value == -1.0
        elif len(obstacles) == 0:
            assert value >= 1e9
        else:
            gaps = np.maximum(np.abs(obstacles - (i, j)) - 1, 0)
            assert value == pytest.approx(np.sqrt((gaps**2).sum(axis=1)).min(), abs=1e-5)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(-10.0, 10.0))
def test_a_turned_fan_is_the_beams_at_its_angles(seed: int, heading: float) -> None:
    """A fan's unit vectors turned by the heading cast as the beams at angle + heading: to the
    bit at heading 0, within float rounding otherwise."""
    lab = load_world("lab")
    grid, (ox, oy), resolution = lab.obstacles(), lab.origin, lab.resolution
    rng = np.random.default_rng(seed)
    x, y = rng.uniform(0.5, 17.5), rng.uniform(0.5, 13.0)
    angles = np.linspace(-math.pi / 2, math.pi / 2, 181)
    units = np.column_stack((np.cos(angles), np.sin(angles)))
    clearance = clearance_of(grid)
    fan = np.empty(181)
    cast_fan(clearance, (ox, oy, resolution), (x, y, 0.0), units, 30.0, fan)
    np.testing.assert_array_equal(fan, cast_rays(grid, lab.origin, resolution, x, y, angles, 30.0))
    cast_fan(clearance, (ox, oy, resolution), (x, y, heading), units, 30.0, fan)
    beams = cast_rays(grid, lab.origin, resolution, x, y, angles + heading, 30.0)
    # a beam grazing a cell's corner may hit either of its neighbours: within a cell
    close = np.abs(fan - beams) <= 1e-9
    assert close.mean() > 0.99
    assert np.all(np.abs(fan - beams) <= resolution * math.sqrt(2))


@pytest.mark.parametrize(
    ("x", "y"),
    [(1e30, 5.0), (5.0, -1e30), (-1e300, 1e300), (math.inf, 5.0), (math.nan, 5.0), (5.0, -0.0)],
)
def test_a_start_far_off_the_grid_or_not_a_number_sees_nothing(x: float, y: float) -> None:
    lab = load_world("lab")
    angles = np.linspace(-math.pi, math.pi, 16)
    ranges = cast_rays(lab.obstacles(), lab.origin, lab.resolution, x, y, angles, 30.0)
    if x == 5.0 and y == 0.0:  # on the grid's edge, in the wall round lab
        assert np.all(ranges == 0.0)
    else:
        assert np.all(ranges == 30.0)


def _room(rows: int, cols: int) -> npt.NDArray[np.bool_]:
    """A room walled in one cell thick, in a grid with a free margin of two cells."""
    grid = np.zeros((rows + 4, cols + 4), dtype=bool)
    grid[2, 2:-2] = grid[-3, 2:-2] = True
    grid[2:-2, 2] = grid[2:-2, -3] = True
    return grid


def test_a_walled_in_room_is_enclosed_and_a_gap_even_at_a_corner_opens_it() -> None:
    grid = _room(10, 14)
    enclosed = enclosed_of(grid)
    assert enclosed[3:-3, 3:-3].all()  # the room's inside
    assert enclosed[grid].all()  # the walls: a beam starting in one hits at once
    assert not enclosed[0].any()
    assert not enclosed[:, 1].any()
    for gap in [(2, 7), (9, -3)]:  # a door in a wall
        doored = grid.copy()
        doored[gap] = False
        assert not enclosed_of(doored)[3:-3, 3:-3].any()
    # two wall cells that touch only at their corners let a beam through between them
    corner = _room(10, 14)
    corner[2, 2] = False
    assert not enclosed_of(corner)[3:-3, 3:-3].any()


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.4))
def test_every_beam_from_an_enclosed_cell_hits_before_the_edge(seed: int, density: float) -> None:
    """Random walls, random starts in enclosed cells, all round: no beam leaves the grid."""
    rng = np.random.default_rng(seed)
    grid = rng.random((24, 30)) < density
    grid |= _room(20, 26)  # at least some enclosed cells
    enclosed = enclosed_of(grid)
    rows, cols = np.nonzero(enclosed)
    angles = np.linspace(-math.pi, math.pi, 361)
    beyond = 2.0 * math.hypot(*grid.shape)  # further than any beam inside the grid goes
    for k in rng.integers(0, len(rows), 20):
        x, y = cols[k] + rng.random(), rows[k] + rng.random()
        ranges = cast_rays(grid, (0.0, 0.0), 1.0, x, y, angles, beyond)
        assert (ranges < beyond).all()
