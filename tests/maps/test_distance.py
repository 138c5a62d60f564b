"""Grid distances and resampling without scipy.ndimage: the same numbers as scipy.ndimage's, to
the bit, and a robot program that never loads it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from scipy.ndimage import binary_dilation, distance_transform_edt, map_coordinates

from freelook.maps import distance_to_background, grow, interpolate_linear, load_world

_grids = arrays(np.bool_, st.tuples(st.integers(1, 40), st.integers(1, 40)), elements=st.booleans())


@settings(max_examples=300, deadline=None)
@given(_grids)
def test_distances_are_scipys_exact_transform_to_the_bit(mask: npt.NDArray[np.bool_]) -> None:
    if mask.all():
        assert np.all(np.isinf(distance_to_background(mask)))  # no background to be near
        return
    assert np.array_equal(distance_to_background(mask), distance_transform_edt(mask))


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 60), st.integers(2, 60), st.integers(0, 2**32 - 1))
def test_sparse_background_far_across_the_grid(rows: int, cols: int, seed: int) -> None:
    """One or two background cells: distances span the grid, where an envelope slip shows."""
    rng = np.random.default_rng(seed)
    mask = np.ones((rows, cols), dtype=bool)
    for _ in range(int(rng.integers(1, 3))):
        mask[rng.integers(rows), rng.integers(cols)] = False
    assert np.array_equal(distance_to_background(mask), distance_transform_edt(mask))


def test_distances_on_the_built_in_map_both_ways() -> None:
    grid = load_world("lab").obstacles()
    for mask in (grid, ~grid):
        assert np.array_equal(distance_to_background(mask), distance_transform_edt(mask))


def test_a_grid_must_be_two_dimensional() -> None:
    with pytest.raises(ValueError, match="2-D"):
        distance_to_background(np.zeros(5, dtype=bool))


@settings(max_examples=200, deadline=None)
@given(_grids)
def test_growing_is_a_three_by_three_dilation(grid: npt.NDArray[np.bool_]) -> None:
    expected = binary_dilation(grid, structure=np.ones((3, 3), dtype=bool))
    assert np.array_equal(grow(grid), expected)


@settings(max_examples=200, deadline=None)
@given(
    st.integers(1, 25),
    st.integers(1, 25),
    st.integers(1, 5),
    st.floats(-3.0, 3.0),
    st.integers(0, 2**32 - 1),
)
def test_linear_interpolation_is_map_coordinates_to_the_bit(
    rows: int, cols: int, up: int, scale: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    values = rng.standard_normal((rows, cols)) * 10.0**scale
    # the likelihood field's positions (cell centres of a finer grid), then some off the
    # grid and between, where the edge is taken
    r = (np.arange(rows * up) + 0.5) / up - 0.5
    c = (np.arange(cols * up) + 0.5) / up - 0.5
    at_r, at_c = np.meshgrid(r, c, indexing="ij")
    for shift in (0.0, 2.0):
        pr = at_r + rng.uniform(-shift, shift, at_r.shape)
        pc = at_c + rng.uniform(-shift, shift, at_c.shape)
        expected = map_coordinates(values, (pr, pc), order=1, mode="nearest")
        assert np.array_equal(interpolate_linear(values, pr, pc), expected)


_ROBOT = """
import sys
from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot, published_map
from freelook.maps import load_world

world = load_world("lab")
robot = SimulatedRobot(
    load_robot("pioneer3dx"), world, seed=1, use_localization=True, robot_map=published_map(world)
)
robot.core.estimator.mcl.global_init()
robot.run_for(1.0)
assert robot.core.estimator.mcl.updates > 0
print(sorted(m for m in sys.modules if m.startswith(("scipy.ndimage", "scipy.special"))))
"""


def test_a_robot_program_localizing_on_a_map_never_loads_scipy_ndimage() -> None:
    """Its likelihood field, clearance table and start finder are built here: scipy.ndimage
    (and scipy.special with it) would cost the process about 15 MB."""
    out = subprocess.run(
        [sys.executable, "-c", _ROBOT], capture_output=True, text=True, check=True, timeout=300
    )
    assert out.stdout.strip().splitlines()[-1] == "[]"
