"""What real maps carry beyond walls: ARIA cairns (home, docks, goals, forbidden lines and
areas), ROS map_server's modes, negation, thresholds and turned origins — and where a robot
starts on a map that declares no start. Every map here is made by the test."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from freelook.config import load_robot
from freelook.errors import WorldError
from freelook.maps import FreeSpace, choose_start, footprint_free, load_world

FOOTPRINT = load_robot("pioneer3dx").footprint


def _aria(tmp_path: Path, cairns: list[str], lines: list[tuple[int, ...]], name: str = "m") -> Path:
    text = ["2D-Map", "LineMinPos: 0 0", "LineMaxPos: 10000 10000", *cairns, "LINES"]
    text += [" ".join(str(v) for v in line) for line in lines]
    text.append("DATA")
    path = tmp_path / f"{name}.map"
    path.write_text("\n".join(text) + "\n")
    return path


BOX = [(0, 0, 8000, 0), (8000, 0, 8000, 5000), (8000, 5000, 0, 5000), (0, 5000, 0, 0)]


def test_aria_cairns_become_places_and_keep_out_areas(tmp_path: Path) -> None:
    path = _aria(
        tmp_path,
        [
            "MapInfo: GoalType Name=Charger",
            'Cairn: RobotHome 2000 1500 90 "" ICON "home"',
            'Cairn: Goal 3000 1000 0.000000 "" ICON "Goal 1"',
            'Cairn: GoalWithHeading 4000 1000 -45 "" ICON "Lobby door"',
            'Cairn: Dock 5000 1000 180 "" ICON "dock"',
            'Cairn: Charger 6000 1000 0 "" ICON "plug"',
            'Cairn: ForbiddenLine 6000 0 0.0 "" ICON "gate" 6000 0 6000 5000',
            'Cairn: ForbiddenArea 0 0 90.0 "" ICON "pit" 1000 -3000 2000 -2000',
            'Cairn: SectorType 0 0 0 "" ICON "ignored" 0 0 1000 1000',
        ],
        BOX,
    )
    world = load_world(path)
    assert world.start == pytest.approx((2.0, 1.5, math.pi / 2))
    assert world.start_from == "the map's RobotHome cairn"
    places = {p.name: p for p in world.places}
    assert places["Goal 1"].kind == "goal"
    assert places["Goal 1"].theta is None
    assert places["Lobby door"].theta == pytest.approx(math.radians(-45))
    assert places["dock"].kind == "dock"
    assert places["plug"].kind == "goal"  # a goal type the map declares
    gate, pit = world.keep_out
    assert gate.kind == "line"
    assert gate.vertices == ((6.0, 0.0), (6.0, 5.0))
    # ARIA turns an area's rectangle by the cairn's heading about the map's origin
    assert pit.kind == "area"
    assert np.allclose(pit.vertices, [(3.0, 1.0), (3.0, 2.0), (2.0, 2.0), (2.0, 1.0)])
    assert pit.contains(2.5, 1.5)
    assert not pit.contains(1.5, 1.5)
    assert not gate.contains(6.0, 1.0)
    assert len(pit.segments()) == 4
    assert len(gate.segments()) == 1


def test_a_dock_is_the_start_when_there_is_no_home(tmp_path: Path) -> None:
    path = _aria(tmp_path, ['Cairn: Dock 5000 1000 180 "" ICON "dock"'], BOX)
    world = load_world(path)
    assert world.start == pytest.approx((5.0, 1.0, math.pi))
    assert "Dock" in world.start_from


@pytest.mark.parametrize(
    ("cairn", "message"),
    [
        ('Cairn: Goal 1 2 "" ICON', r"line 4: Cairn: expected TYPE X Y TH"),
        ('Cairn: Goal one 2 0 "" ICON "g"', r"line 4: Cairn Goal: expected numbers"),
        ('Cairn: ForbiddenLine 0 0 0 "" ICON "g"', r"line 4: Cairn ForbiddenLine: expected FROM"),
        ('Cairn: Goal 0 0 0 "" ICON "unclosed', r"line 4: No closing quotation"),
    ],
)
def test_bad_cairns_name_the_line(tmp_path: Path, cairn: str, message: str) -> None:
    path = _aria(tmp_path, [cairn], BOX)
    with pytest.raises(WorldError, match=message):
        load_world(path)


def test_the_start_is_the_nearest_free_place_inside_when_the_origin_is_on_a_wall(
    tmp_path: Path,
) -> None:
    # a building whose corner is the map's origin; a stray echo far to the south-west makes
    # the grid cover open ground outside, nearer the origin than any room inside
    lines = [*BOX, (1200, 0, 1200, 3000)]  # a wall close by inside the building, too
    path = _aria(tmp_path, [], lines)
    text = path.read_text().replace("DATA\n", "DATA\n-5000 -5000\n")
    path.write_text(text)
    world = load_world(path)
    assert world.start_from == ""
    x, y, theta = choose_start(world, FOOTPRINT)
    assert 0.0 < x < 8.0
    assert 0.0 < y < 5.0
    space = FreeSpace(world)
    radius = FOOTPRINT.swing_radius + 0.2
    assert space.fits(x, y, radius)
    assert space.inside(x, y)
    assert footprint_free(world, FOOTPRINT, (x, y, theta))
    # nothing inside is nearer the origin and fits
    xs, ys = np.meshgrid(np.arange(0.05, 8, 0.05), np.arange(0.05, 5, 0.05))
    for px, py in zip(xs.ravel(), ys.ravel(), strict=True):
        if math.hypot(px, py) < math.hypot(x, y) - 0.08:
            assert not space.fits(px, py, radius)


def test_a_start_on_a_wall_is_a_clear_error(tmp_path: Path) -> None:
    path = _aria(tmp_path, ['Cairn: RobotHome 0 2000 0 "" ICON ""'], BOX)
    world = load_world(path)
    with pytest.raises(
        WorldError,
        match=r"start pose \(0\.00 m, 2\.00 m, 0°\) from the map's "
        r"RobotHome cairn .* --start X,Y,THETA",
    ):
        choose_start(world, FOOTPRINT)
    with pytest.raises(WorldError, match=r"from the requested start"):
        choose_start(world, FOOTPRINT, (7.9, 2.5, 0.0))
    assert choose_start(world, FOOTPRINT, (4.0, 2.5, 0.3)) == (4.0, 2.5, 0.3)


def test_random_free_places_lie_inside_and_fit(tmp_path: Path) -> None:
    world = load_world(_aria(tmp_path, [], BOX))
    space = FreeSpace(world)
    places = space.sample(np.random.default_rng(3), 0.5, 40)
    assert len(places) == 40
    for x, y in places:
        assert 0.5 < x < 7.5
        assert 0.5 < y < 4.5


# ------------------------------------------------------------------------------ ROS maps


def _ros(tmp_path: Path, image: np.ndarray, **meta: object) -> Path:
    """A map_server map: ``image`` in image row order (row 0 at the top)."""
    suffix = ".png" if image.ndim == 3 else ".pgm"
    picture = tmp_path / f"map{suffix}"
    if suffix == ".pgm":
        h, w = image.shape
        picture.write_bytes(f"P5\n{w} {h}\n255\n".encode() + image.astype(np.uint8).tobytes())
    else:
        Image.fromarray(image.astype(np.uint8), "RGBA").save(picture)
    fields = {
        "image": picture.name,
        "resolution": 0.1,
        "origin": [0.0, 0.0, 0.0],
        "negate": 0,
        "occupied_thresh": 0.65,
        "free_thresh": 0.196,
    }
    fields.update(meta)
    yaml_path = tmp_path / "map.yaml"
    yaml_path.write_text("".join(f"{k}: {v}\n" for k, v in fields.items()))
    return yaml_path


# shades across the thresholds: occ = 1 − shade/255 → 0 (white) … 1 (black)
SHADES = np.array([[0, 80, 89, 90, 150, 205, 206, 254, 255]])


def test_trinary_thresholds_as_map_server(tmp_path: Path) -> None:
    world = load_world(_ros(tmp_path, SHADES))
    occ = 1 - SHADES[0] / 255
    assert world.unknown is not None
    assert list(world.occupancy[0]) == list(occ > 0.65)
    free = occ < 0.196
    assert list(~world.occupancy[0] & ~world.unknown[0]) == list(free)
    assert list(world.unknown[0]) == list(~free & ~(occ > 0.65))


def test_negate_swaps_black_and_white(tmp_path: Path) -> None:
    world = load_world(_ros(tmp_path, SHADES, negate=1))
    occ = SHADES[0] / 255
    assert list(world.occupancy[0]) == list(occ > 0.65)
    assert world.unknown is not None
    assert list(~world.occupancy[0] & ~world.unknown[0]) == list(occ < 0.196)


def test_raw_mode_takes_values_as_they_are(tmp_path: Path) -> None:
    image = np.array([[0, 50, 100, 101, 255]])
    world = load_world(_ros(tmp_path, image, mode="raw", negate=1))  # raw ignores negate
    assert list(world.occupancy[0]) == [False, False, True, False, False]
    assert world.unknown is not None
    assert list(world.unknown[0]) == [False, True, False, True, True]


def test_scale_mode_makes_transparent_pixels_unknown(tmp_path: Path) -> None:
    rgba = np.zeros((1, 4, 4))
    rgba[0, :, :3] = [[0, 0, 0], [255, 255, 255], [150, 150, 150], [255, 255, 255]]
    rgba[0, :, 3] = [255, 255, 255, 0]
    world = load_world(_ros(tmp_path, rgba, mode="scale"))
    assert list(world.occupancy[0]) == [True, False, False, False]
    assert world.unknown is not None
    assert list(world.unknown[0]) == [False, False, True, True]  # in between; transparent


def test_rows_flip_and_a_turned_origin_turns_the_map(tmp_path: Path) -> None:
    image = np.full((4, 6), 254)
    image[0, 5] = 0  # top right pixel: the far corner from the origin
    flat = load_world(_ros(tmp_path, image, origin=[-1.0, 2.0, 0.0]))
    assert flat.origin == pytest.approx((-1.0, 2.0))
    assert flat.obstacles()[3, 5]
    assert flat.obstacles().sum() == 1
    assert not flat.is_free(-1.0 + 0.55, 2.0 + 0.35)
    turned = load_world(_ros(tmp_path, image, origin=[-1.0, 2.0, math.pi / 2]))
    # turned a quarter about the origin: x along the image becomes y, its top becomes −x
    assert turned.shape == (6, 4)
    assert turned.origin == pytest.approx((-1.4, 2.0))
    assert not turned.is_free(-1.0 - 0.35, 2.0 + 0.55)
    assert turned.obstacles().sum() == 1
    assert turned.unknown is not None
    assert not turned.unknown.any()


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"negate": 2}, r"negate: expected 0 or 1"),
        ({"mode": "fancy"}, r"mode: expected trinary, scale or raw"),
        ({"origin": [0, 0]}, r"origin: expected \[x, y, yaw\]"),
        ({"resolution": "fine"}, r"resolution: expected a number"),
        ({"free_thresh": 0.9}, r"expected 0 ≤ free_thresh ≤ occupied_thresh ≤ 1"),
        ({"resolution": 0}, r"resolution: expected > 0"),
    ],
)
def test_bad_map_server_fields_are_named(
    tmp_path: Path, meta: dict[str, object], message: str
) -> None:
    with pytest.raises(WorldError, match=message):
        load_world(_ros(tmp_path, SHADES, **meta))


def test_missing_threshold_is_named(tmp_path: Path) -> None:
    path = _ros(tmp_path, SHADES)
    path.write_text(path.read_text().replace("free_thresh: 0.196\n", ""))
    with pytest.raises(WorldError, match=r"map\.yaml: free_thresh: missing required key"):
        load_world(path)
