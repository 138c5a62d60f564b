"""Localization's likelihood fields, built a band of rows at a time (the coarse one only when a
search first needs it), equal a whole-grid computation with scipy (within float32's rounding)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt
import pytest
from scipy.ndimage import distance_transform_edt, map_coordinates

from freelook.config import load_robot
from freelook.estimation import MonteCarloLocalization
from freelook.estimation._field import FIELD_UPSAMPLE, SEARCH_SIGMA, LikelihoodField
from freelook.maps import load_world

#: a few float32 roundings of log-likelihoods between about −8 and 2
_FLOAT32 = {"rtol": 1e-6, "atol": 1e-6}


@pytest.mark.parametrize("name", ["lab", "square"])
def test_banded_fields_equal_the_whole_grid_computation(name: str) -> None:
    world = load_world(name)
    config = load_robot("pioneer3dx")
    assert config.laser is not None
    mcl = MonteCarloLocalization.for_robot(world, config, seed=1)
    grid = world.obstacles()
    half = world.resolution / 2
    distance = np.where(
        grid,
        half - distance_transform_edt(grid) * world.resolution,
        distance_transform_edt(~grid) * world.resolution - half,
    )
    rows, cols = grid.shape
    z_hit, z_rand = mcl.field.z_hit, mcl.field.z_rand

    def field(sigma: float, up: int) -> npt.NDArray[np.float32]:
        r = (np.arange(rows * up) + 0.5) / up - 0.5
        c = (np.arange(cols * up) + 0.5) / up - 0.5
        at = np.meshgrid(r, c, indexing="ij")
        fine = map_coordinates(distance, at, order=1, mode="nearest")
        table: npt.NDArray[np.float32] = np.log(
            z_hit * np.exp(-(fine**2) / (2 * sigma**2)) + z_rand
        ).astype(np.float32)
        return table

    assert not mcl.field.coarse_built  # not built until a search needs it
    np.testing.assert_allclose(mcl.field.sharp, field(0.05, FIELD_UPSAMPLE), **_FLOAT32)
    # the blurred field on the map's own grid: its cell centres' distances, no interpolation
    coarse = field(SEARCH_SIGMA, 1)
    np.testing.assert_array_equal(
        coarse,
        np.log(z_hit * np.exp(-(distance**2) / (2 * SEARCH_SIGMA**2)) + z_rand).astype(np.float32),
    )
    np.testing.assert_allclose(mcl.field.coarse, coarse, **_FLOAT32)
    assert mcl.field.coarse_built


def test_filters_on_one_map_share_its_tables_and_other_maps_get_their_own() -> None:
    config = load_robot("pioneer3dx")
    lab, square = load_world("lab"), load_world("square")
    LikelihoodField.forget_tables()
    first = MonteCarloLocalization.for_robot(lab, config, seed=1)
    built = first.field.sharp.copy()
    second = MonteCarloLocalization.for_robot(load_world("lab"), config, seed=2)
    assert (
        second.field.sharp is first.field.sharp
    )  # built once for the map, however often it is loaded
    assert second.field.coarse is first.field.coarse
    assert second.field.coarse is not second.field.sharp
    other = MonteCarloLocalization.for_robot(square, config, seed=1)
    assert other.field.sharp.shape != first.field.sharp.shape
    LikelihoodField.forget_tables()
    assert np.array_equal(MonteCarloLocalization.for_robot(lab, config, seed=3).field.sharp, built)


def test_a_map_differing_in_one_cell_gets_its_own_table() -> None:
    from dataclasses import replace

    config = load_robot("pioneer3dx")
    lab = load_world("lab")
    occupancy = lab.occupancy.copy()
    rows, cols = occupancy.shape
    occupancy[rows // 2, cols // 2] = not occupancy[rows // 2, cols // 2]
    changed = replace(lab, occupancy=occupancy, _obstacles=None)
    table = MonteCarloLocalization.for_robot(lab, config, seed=1).field.sharp
    other = MonteCarloLocalization.for_robot(changed, config, seed=1).field.sharp
    assert other is not table
    assert not np.array_equal(other, table)
