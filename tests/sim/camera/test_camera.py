"""The first-person camera: objects where the projection says, walls at pinhole height."""

from __future__ import annotations

import colorsys
import math

import numpy as np
import pytest

from freelook.config import CameraConfig, load_robot
from freelook.link import decode_jpeg, encode_jpeg
from freelook.maps import World, WorldObject, load_world
from freelook.sim.camera import Camera

ROBOT = load_robot("pioneer3dx")
assert ROBOT.pan_tilt is not None
PAN_TILT = ROBOT.pan_tilt


def red_mask(image: np.ndarray) -> np.ndarray:
    r, g, b = (image[..., i].astype(int) for i in range(3))
    return (r > 120) & (g < 60) & (b < 60)


def test_red_object_appears_where_projected_and_not_when_turned_away() -> None:
    eod = load_world("eod")
    camera = Camera(CameraConfig(), PAN_TILT, eod)
    target = next(o for o in eod.objects if o.name == "suspicious object")
    x, y = target.x - 2.5, target.y  # 2.5 m west of it, facing east
    image = camera.render(x, y, 0.0)
    centre = camera.project(target.x, target.y, target.height / 2, x, y, 0.0)
    assert centre is not None
    u, v = round(centre[0]), round(centre[1])
    assert red_mask(image)[v - 3 : v + 4, u - 3 : u + 4].all()
    # red pixels only around the projected box
    rows, cols = np.nonzero(red_mask(image))
    assert abs(cols.mean() - centre[0]) < 25
    assert abs(rows.mean() - centre[1]) < 25
    turned = camera.render(x, y, 0.0, pan=math.pi)
    assert not red_mask(turned).any()
    assert camera.project(target.x, target.y, 0.1, x, y, 0.0, pan=math.pi) is None


def square_room(size: float = 10.0, objects: tuple[WorldObject, ...] = ()) -> World:
    res = 0.05
    n = round(size / res)
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    return World("room", grid, res, (0.0, 0.0), objects, wall_height=2.0)


def wall_span(column: np.ndarray) -> tuple[int, int]:
    """(first wall row, first skirting row) of one column.

    The ceiling is bluish (b > r); the wall is a bright warm grey; its skirting (below 0.1 m)
    is markedly darker, so its top edge is a sharp brightness drop.
    """
    r, b = column[:, 0].astype(int), column[:, 2].astype(int)
    top = int(np.flatnonzero(r > b)[0])
    brightness = column.astype(int).sum(axis=1)
    drops = np.flatnonzero(brightness[top + 1 :] < 0.8 * brightness[top:-1])
    return top, top + 1 + int(drops[0])


@pytest.mark.parametrize("distance", [6.0, 8.0])
def test_wall_height_matches_the_pinhole_projection(distance: float) -> None:
    room = square_room(20.0)
    camera = Camera(CameraConfig(), PAN_TILT, room)
    face = 20.0 - 0.05  # the east wall's face
    x = face - distance - PAN_TILT.mount_forward
    image = camera.render(x, 10.0, 0.0)
    top_px = camera.project(face, 10.0, 2.0, x, 10.0, 0.0)
    skirting_px = camera.project(face, 10.0, 0.1, x, 10.0, 0.0)
    assert top_px is not None
    assert skirting_px is not None
    top, skirting = wall_span(image[:, 320])
    assert top == pytest.approx(top_px[1], abs=1.5)
    assert skirting == pytest.approx(skirting_px[1], abs=1.5)
    # pinhole: 1.9 m of wall spans f·1.9/distance pixels
    assert skirting - top == pytest.approx(camera.focal * 1.9 / distance, abs=2)


def test_tilting_up_moves_the_horizon_down() -> None:
    camera = Camera(CameraConfig(), PAN_TILT, square_room())
    level = wall_span(camera.render(5.0, 5.0, 0.0)[:, 320])
    up = wall_span(camera.render(5.0, 5.0, 0.0, tilt=0.2)[:, 320])
    assert up[0] > level[0]
    assert up[1] > level[1]


def test_object_behind_a_wall_is_hidden() -> None:
    box = WorldObject("hidden", "box", 7.0, 5.0, 1.0, (230, 20, 20), 0.5, 0.5)
    room = square_room(objects=(box,))
    grid = room.occupancy.copy()
    grid[:, round(5.0 / 0.05)] = True  # a wall between camera and box
    walled = World("walled", grid, 0.05, (0.0, 0.0), (box,), 2.0)
    assert red_mask(Camera(CameraConfig(), PAN_TILT, room).render(2.0, 5.0, 0.0)).any()
    assert not red_mask(Camera(CameraConfig(), PAN_TILT, walled).render(2.0, 5.0, 0.0)).any()


def test_frames_are_deterministic_sized_and_encodable() -> None:
    config = CameraConfig(width=320, height=240, fov_deg=70)
    camera = Camera(config, PAN_TILT, load_world("lab"))
    a = camera.render(3.0, 3.0, 0.4, pan=0.2, tilt=-0.1)
    b = camera.render(3.0, 3.0, 0.4, pan=0.2, tilt=-0.1)
    assert a.shape == (240, 320, 3)
    assert a.dtype == np.uint8
    assert np.array_equal(a, b)
    left, right = camera.render_stereo(3.0, 3.0, 0.4)
    assert not np.array_equal(left, right)
    jpeg = encode_jpeg(a, 85)
    assert jpeg[:2] == b"\xff\xd8"
    assert np.abs(decode_jpeg(jpeg).astype(int) - a.astype(int)).mean() < 6


def _hue(rgb: np.ndarray) -> float:
    """The mean colour's hue, degrees."""
    r, g, b = (float(c) / 255 for c in rgb.reshape(-1, 3).mean(axis=0))
    return 360.0 * colorsys.rgb_to_hsv(r, g, b)[0]


def test_a_coloured_light_shifts_hue_and_the_sensor_adds_seeded_noise() -> None:
    """A warm light (red up, blue down) turns a yellow box's hue toward orange, which scaling
    all channels alike never does; the noise is σ levels, the same for the same seed."""
    yellow = WorldObject("box", "box", 3.0, 5.0, 1.0, (217, 199, 33), size_x=0.6, size_y=0.6)
    camera = Camera(CameraConfig(), PAN_TILT, square_room(objects=(yellow,)))
    centre = camera.project(3.0, 5.0, 0.5, 1.0, 5.0, 0.0)
    assert centre is not None
    u, v = round(centre[0]), round(centre[1])
    patch = np.s_[v - 4 : v + 5, u - 4 : u + 5]
    plain = camera.render(1.0, 5.0, 0.0)[patch]
    camera.brightness = 0.6
    dimmed = camera.render(1.0, 5.0, 0.0)[patch]
    assert _hue(dimmed) == pytest.approx(_hue(plain), abs=1.0)  # brightness alone: same hue
    camera.brightness, camera.tint = 1.0, (1.15, 1.0, 0.85)
    warm = camera.render(1.0, 5.0, 0.0)[patch]
    assert _hue(plain) - _hue(warm) > 5.0
    camera.tint, camera.noise = (1.0, 1.0, 1.0), 4.0
    camera.rng = np.random.default_rng(3)
    noisy = camera.render(1.0, 5.0, 0.0)
    camera.rng = np.random.default_rng(3)
    again = camera.render(1.0, 5.0, 0.0)
    np.testing.assert_array_equal(noisy, again)
    camera.noise = 0.0
    clean = camera.render(1.0, 5.0, 0.0).astype(float)
    inside = (clean > 10) & (clean < 245)  # away from the clipping
    assert np.std((noisy - clean)[inside]) == pytest.approx(4.0, rel=0.1)
