"""The map layer's wall points lie on the map's walls, where a ray from the robot meets them;
those the sensors see through are left out, as the safety layer's numpy statements of the
sensors' tests (``safety.reference``) leave them."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.geometry import Pose
from freelook.hal import RangeScan
from freelook.maps import load_world
from freelook.safety import MapLayer
from safety import reference


@pytest.mark.parametrize("pose", [Pose(3.0, 3.0, 0.3), Pose(9.2, 6.0, -2.0), Pose(15.0, 11.0, 3.1)])
def test_wall_points_lie_where_each_ray_first_meets_a_wall(pose: Pose) -> None:
    world = load_world("lab")
    grid = world.obstacles()
    layer = MapLayer(world, reach=4.0)
    points = layer.wall_points(pose)
    assert len(points) > 10
    c, s = math.cos(pose.theta), math.sin(pose.theta)
    for px, py in points:
        distance = math.hypot(px, py)
        assert distance < 4.0
        # in the map frame, a step on along the ray is inside a wall, and the way there is free
        dx, dy = (c * px - s * py) / distance, (s * px + c * py) / distance
        x, y = pose.x + c * px - s * py, pose.y + s * px + c * py
        assert grid[world.cell_of(x + 0.02 * dx, y + 0.02 * dy)]
        for share in np.linspace(0.0, 1.0, 20, endpoint=False):
            back = share * (distance - 0.06)
            assert not grid[world.cell_of(pose.x + back * dx, pose.y + back * dy)]


def _laser(bearings: np.ndarray, ranges: np.ndarray, origin: tuple[float, float]) -> RangeScan:
    n = len(bearings)
    return RangeScan(0.0, ranges, bearings, np.full(n, origin[0]), np.full(n, origin[1]), 30.0)


def _sonar(rng: np.random.Generator, n: int) -> RangeScan:
    return RangeScan(
        0.0,
        rng.uniform(0.0, 5.0, n),
        rng.uniform(-math.pi, math.pi, n),
        rng.normal(0.0, 0.2, n),
        rng.normal(0.0, 0.2, n),
        5.0,
    )


def _same(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and bool(np.array_equal(a.view(np.int64), b.view(np.int64)))


def _unseen_walls_numpy(
    layer: MapLayer, pose: Pose, laser: RangeScan | None, sonar: RangeScan | None, half: float
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The wall points, those the sensors see through in numpy, and those within a few ulps
    of a beam's rounding edge or a cone's side (where the two may differ)."""
    walls = layer.wall_points(pose)
    absent = np.zeros(len(walls), dtype=bool)
    near = np.zeros(len(walls), dtype=bool)
    if laser is not None and min(len(laser.bearings), len(laser.ranges)) >= 2:
        origin = (float(laser.origin_x[0]), float(laser.origin_y[0]))
        absent |= reference.seen_through(walls, laser.bearings, laser.ranges, origin)
        near |= reference.near_beam_edge(walls, laser.bearings, origin)
    if sonar is not None:
        cones = (sonar.origin_x, sonar.origin_y, sonar.bearings, sonar.ranges)
        absent |= reference.in_sonar_cones(walls, cones, half)
        near |= reference.near_cone_side(walls, cones, half)
    return walls, absent, near


def _agrees(
    got: np.ndarray,
    layer: MapLayer,
    pose: Pose,
    laser: RangeScan | None,
    sonar: RangeScan | None,
    half: float,
) -> bool:
    """``got`` is the wall points the numpy tests keep, in order, but for walls within a few
    ulps of an edge (either answer): returns whether one such wall decided differently."""
    walls, absent, near = _unseen_walls_numpy(layer, pose, laser, sonar, half)
    if _same(got, walls[~absent]):
        return False
    # each wall kept is one of the walls, in order; they differ only where near an edge
    rows = [int(np.flatnonzero(np.all(walls == point, axis=1))[0]) for point in got]
    kept = np.zeros(len(walls), dtype=bool)
    kept[rows] = True
    assert rows == sorted(rows)
    assert not ((kept == absent) & ~near).any()
    return True


def test_unseen_walls_are_the_three_calls_points() -> None:
    """The one compiled call gives the points of the wall cast, the laser's see-through and
    the sonar cones' tests, in order: with either sensor or none, standing still (no new
    cast) and moving, and with walls on a beam's rounding edge or a cone's side."""
    world = load_world("lab")
    layer = MapLayer(world, reach=5.0)
    rng = np.random.default_rng(7)
    free = np.argwhere(~world.obstacles())
    half_cone = math.radians(15.0)
    on_edge = 0
    pose = Pose(3.0, 3.0, 0.3)
    for trial in range(300):
        # a third move (a centimetre along x, or elsewhere), a third turn on the spot, a third
        # look again from where they stand
        if trial % 3 == 1 and trial % 2:
            pose = Pose(pose.x + 0.01, pose.y, pose.theta)
        elif trial % 3 == 1:
            row, col = free[rng.integers(len(free))]
            x = world.origin[0] + (col + rng.random()) * world.resolution
            y = world.origin[1] + (row + rng.random()) * world.resolution
            pose = Pose(float(x), float(y), pose.theta)
        elif trial % 3 == 2:
            pose = Pose(pose.x, pose.y, float(rng.uniform(-math.pi, math.pi)))
        walls = layer.wall_points(pose)
        beams = int(rng.integers(2, 200))
        step = float(rng.uniform(0.001, min(0.05, 6.0 / beams)))
        origin = (float(rng.normal(0.1, 0.05)), float(rng.normal(0.0, 0.05)))
        first = float(rng.uniform(-math.pi, math.pi - beams * step))
        sonar = _sonar(rng, int(rng.integers(0, 17)))
        if len(walls) and trial % 2:
            # a wall on the rounding edge between two beams, and one on a cone's side
            wall = walls[rng.integers(len(walls))]
            bearing = math.atan2(wall[1] - origin[1], wall[0] - origin[0])
            first = bearing - (int(rng.integers(0, beams - 1)) + 0.5) * step
            if len(sonar.ranges):
                wall = walls[rng.integers(len(walls))]
                j = int(rng.integers(len(sonar.ranges)))
                side = math.atan2(wall[1] - sonar.origin_y[j], wall[0] - sonar.origin_x[j])
                sonar.bearings[j] = side - half_cone * rng.choice([-1.0, 1.0])
                sonar.ranges[j] = 6.0
        ranges = rng.uniform(0.0, 8.0, beams)
        laser = _laser(first + step * np.arange(beams), ranges, origin)
        on_edge += int(reference.near_beam_edge(walls, laser.bearings, origin).any())
        for scan, cones in ((laser, sonar), (laser, None), (None, sonar), (None, None)):
            got = layer.unseen_walls(pose, scan, cones, half_cone)
            _agrees(got, layer, pose, scan, cones, half_cone)
    assert on_edge >= 50  # walls on the edges were met, not skipped


def test_unseen_walls_follow_each_reading_on_a_sensor_s_fixed_arrays_and_a_new_layout() -> None:
    """A laser and a sonar ring hand the same bearing and origin arrays every reading (their
    form for the compiled call is kept); another layout is taken up when it comes."""
    world = load_world("lab")
    layer = MapLayer(world, reach=5.0)
    rng = np.random.default_rng(3)
    half_cone = math.radians(15.0)
    for layout in range(4):
        bearings = np.linspace(-1.5 + 0.1 * layout, 1.5, 181 - 20 * layout)
        origin_x = np.full(len(bearings), 0.1 + 0.05 * layout)
        origin_y = np.full(len(bearings), 0.02 * layout)
        ring = _sonar(rng, 8 + 4 * layout)
        for _ in range(12):
            pose = Pose(
                float(rng.uniform(2, 16)), float(rng.uniform(2, 12)), float(rng.uniform(-3, 3))
            )
            ranges = rng.uniform(0.0, 8.0, len(bearings))
            laser = RangeScan(0.0, ranges, bearings, origin_x, origin_y, 30.0)
            sonar = RangeScan(
                0.0,
                rng.uniform(0.0, 5.0, len(ring.ranges)),
                ring.bearings,
                ring.origin_x,
                ring.origin_y,
                5.0,
            )
            got = layer.unseen_walls(pose, laser, sonar, half_cone)
            _agrees(got, layer, pose, laser, sonar, half_cone)


def test_unseen_walls_of_sensors_of_unusual_shape_are_the_three_calls_points() -> None:
    """Ranges and bearings of different lengths (a bearing without a range is no beam), one
    beam (none to see through), a sonar short of a reading: the three calls' points."""
    layer = MapLayer(load_world("lab"), reach=5.0)
    pose = Pose(3.0, 3.0, 0.3)
    rng = np.random.default_rng(3)
    for laser in (
        _laser(np.linspace(-1.5, 1.5, 181), rng.uniform(0, 8, 180), (0.1, 0.0)),
        _laser(np.linspace(-1.5, 1.5, 181), rng.uniform(0, 8, 182), (0.1, 0.0)),
        _laser(np.zeros(1), np.full(1, 8.0), (0.1, 0.0)),
    ):
        sonar = _sonar(rng, 8)
        short = sonar._replace(ranges=sonar.ranges[:7])
        for cones in (sonar, short):
            got = layer.unseen_walls(pose, laser, cones, 0.2)
            _agrees(got, layer, pose, laser, cones, 0.2)


def test_unseen_walls_follow_a_new_reach_from_the_same_pose() -> None:
    layer = MapLayer(load_world("lab"), reach=1.0)
    pose = Pose(3.0, 3.0, 0.3)
    near = layer.unseen_walls(pose, None, None, 0.2)
    layer.reach = 5.0  # a cast kept from the shorter reach would miss the walls beyond it
    got = layer.unseen_walls(pose, None, None, 0.2)
    assert _same(got, layer.wall_points(pose))
    assert len(got) > len(near)
