"""Localization's likelihood fields, built a band of rows at a time (the coarse one only when a
search first needs it), equal a whole-grid computation with scipy (within float32's rounding),
and reach beyond the map's edge."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest
from scipy.ndimage import distance_transform_edt, map_coordinates

from freelook.config import load_robot
from freelook.estimation import MonteCarloLocalization
from freelook.estimation._field import FIELD_MARGIN, FIELD_UPSAMPLE, SEARCH_SIGMA, LikelihoodField
from freelook.maps import load_world

#: a few float32 roundings of log-likelihoods between about −8 and 2
_FLOAT32 = {"rtol": 1e-6, "atol": 1e-6}


@pytest.mark.parametrize("name", ["lab", "square"])
def test_banded_fields_equal_the_whole_grid_computation(name: str) -> None:
    world = load_world(name)
    config = load_robot("pioneer3dx")
    assert config.laser is not None
    mcl = MonteCarloLocalization.for_robot(world, config, seed=1)
    z_hit, z_rand = mcl.field.z_hit, mcl.field.z_rand

    def distances(sigma: float) -> npt.NDArray[np.float64]:
        """The signed distance on the map grown by the table's margin, its edge cells carried
        on outwards."""
        margin = math.ceil(FIELD_MARGIN * sigma / world.resolution)
        grid = np.pad(world.obstacles(), margin, mode="edge")
        half = world.resolution / 2
        return np.where(
            grid,
            half - distance_transform_edt(grid) * world.resolution,
            distance_transform_edt(~grid) * world.resolution - half,
        )

    def field(sigma: float, up: int) -> npt.NDArray[np.float32]:
        distance = distances(sigma)
        rows, cols = distance.shape
        r = (np.arange(rows * up) + 0.5) / up - 0.5
        c = (np.arange(cols * up) + 0.5) / up - 0.5
        at = np.meshgrid(r, c, indexing="ij")
        fine = map_coordinates(distance, at, order=1, mode="nearest")
        table: npt.NDArray[np.float32] = np.log(
            z_hit * np.exp(-(fine**2) / (2 * sigma**2)) + z_rand
        ).astype(np.float32)
        return table

    assert not mcl.field.coarse_built  # not built until a search needs it
    np.testing.assert_allclose(mcl.field.sharp.values, field(0.05, FIELD_UPSAMPLE), **_FLOAT32)
    # the blurred field on the map's own grid: its cell centres' distances, no interpolation
    coarse = field(SEARCH_SIGMA, 1)
    distance = distances(SEARCH_SIGMA)
    np.testing.assert_array_equal(
        coarse,
        np.log(z_hit * np.exp(-(distance**2) / (2 * SEARCH_SIGMA**2)) + z_rand).astype(np.float32),
    )
    np.testing.assert_allclose(mcl.field.coarse.values, coarse, **_FLOAT32)
    assert mcl.field.coarse_built


def test_filters_on_one_map_share_its_tables_and_other_maps_get_their_own() -> None:
    config = load_robot("pioneer3dx")
    lab, square = load_world("lab"), load_world("square")
    LikelihoodField.forget_tables()
    first = MonteCarloLocalization.for_robot(lab, config, seed=1)
    built = first.field.sharp.values.copy()
    second = MonteCarloLocalization.for_robot(load_world("lab"), config, seed=2)
    assert (
        second.field.sharp is first.field.sharp
    )  # built once for the map, however often it is loaded
    assert second.field.coarse is first.field.coarse
    assert second.field.coarse is not second.field.sharp
    other = MonteCarloLocalization.for_robot(square, config, seed=1)
    assert other.field.sharp.values.shape != first.field.sharp.values.shape
    LikelihoodField.forget_tables()
    again = MonteCarloLocalization.for_robot(lab, config, seed=3).field.sharp.values
    assert np.array_equal(again, built)


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
    assert not np.array_equal(other.values, table.values)


@pytest.mark.parametrize("table", ["sharp", "coarse"])
def test_a_beam_ending_in_the_maps_edge_wall_scores_as_a_wall_not_off_the_map(table: str) -> None:
    # the lab is drawn to its outer walls: its edge cells are wall, their outer sides the
    # map's edge; a beam that ends a few centimetres into such a wall (range noise, a range
    # bias) is as likely as one ending as deep in any thick wall, on either field
    lab = load_world("lab")
    assert lab.obstacles()[0].all()
    mcl = MonteCarloLocalization.for_robot(lab, load_robot("pioneer3dx"), seed=1)
    field = getattr(mcl.field, table)
    sigma = 0.05 if table == "sharp" else SEARCH_SIGMA
    z_hit, z_rand = mcl.field.z_hit, mcl.field.z_rand
    face = lab.origin[1] + lab.resolution  # the bottom wall's inner face
    robot = np.array([[5.0, 3.0, -math.pi / 2]])  # facing the bottom wall

    def ending(into: float) -> float:
        """The score of one beam straight ahead ending ``into`` the wall."""
        return float(mcl.field.score(robot, np.array([3.0 - face + into]), np.zeros(1), field)[0])

    # as deep in a wall as a beam ends (to three sigmas, where a hit is still plausible), as likely
    for into in np.linspace(0.0, 3.0 * sigma, 7):
        expected = math.log(z_hit * math.exp(-(into**2) / (2 * sigma**2)) + z_rand)
        assert ending(into) == pytest.approx(expected, abs=0.03), into
    # and beyond it, an end point off the map
    assert ending(FIELD_MARGIN * sigma + 0.5) == pytest.approx(math.log(z_rand))


@pytest.mark.parametrize("table", ["sharp", "coarse"])
def test_a_map_with_room_around_its_walls_gains_no_wall_beyond_its_edge(
    table: str, tmp_path: Path
) -> None:
    # an ARIA map's grid leaves free cells around the lines of its outer walls: beyond its
    # edge there is nothing, so an end point there scores by its distance to the outer wall's
    # back face, as it would on a larger map; were the edge a wall, a pose 10 cm outwards
    # would fit as well as the true one
    path = tmp_path / "room.map"
    lines = ["0 0 4000 0", "4000 0 4000 4000", "4000 4000 0 4000", "0 4000 0 0"]
    path.write_text(
        "2D-Map\nLineMinPos: 0 0\nLineMaxPos: 4000 4000\n"
        f"NumLines: {len(lines)}\nLINES\n" + "\n".join(lines) + "\nDATA\n"
    )
    room = load_world(str(path))
    grid = room.obstacles()
    column = int((2.0 - room.origin[0]) / room.resolution)
    assert not grid[0, column]  # the edge row under the robot is free
    back = room.origin[1] + int(np.argmax(grid[:, column])) * room.resolution  # wall's back face
    mcl = MonteCarloLocalization.for_robot(room, load_robot("pioneer3dx"), seed=1)
    field = getattr(mcl.field, table)
    sigma = 0.05 if table == "sharp" else SEARCH_SIGMA
    z_hit, z_rand = mcl.field.z_hit, mcl.field.z_rand
    robot = np.array([[2.0, 2.0, -math.pi / 2]])  # facing the bottom wall
    edge = room.origin[1]
    for beyond in np.linspace(0.0, 3.0 * sigma, 6)[1:]:
        end = edge - beyond
        score = float(mcl.field.score(robot, np.array([2.0 - end]), np.zeros(1), field)[0])
        distance = back - end
        expected = math.log(z_hit * math.exp(-(distance**2) / (2 * sigma**2)) + z_rand)
        assert score == pytest.approx(expected, abs=0.03), beyond
