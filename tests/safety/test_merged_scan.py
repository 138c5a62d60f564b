"""A scan of two lasers merged (a front and a rear one): every beam gives its point, and the
sweep tests (the map layer's seen-through walls, the telemetry's fan) take the first laser's
sweep alone, never reading the rear laser's beams as more beams of the front one."""

from __future__ import annotations

import math

import numpy as np

from freelook.geometry import Pose
from freelook.hal import RangeScan
from freelook.maps import load_world
from freelook.safety import MapLayer


def _scans() -> tuple[RangeScan, RangeScan]:
    """The front laser alone (181 beams over ±90°, each seeing something 0.1 m off) and the
    front and a rear laser merged (the rear one's beams reach 30 m: through every wall)."""
    front = np.linspace(-math.pi / 2, math.pi / 2, 181)
    rear = math.pi + np.linspace(-math.pi / 2, math.pi / 2, 181)
    near, far = np.full(181, 0.1), np.full(181, 30.0)
    alone = RangeScan(1.0, near, front, np.full(181, 0.2), np.zeros(181), 30.0)
    merged = RangeScan(
        1.0,
        np.concatenate((near, far)),
        np.concatenate((front, rear)),
        np.concatenate((np.full(181, 0.2), np.full(181, -0.2))),
        np.zeros(362),
        30.0,
        sweep=181,
    )
    return alone, merged


def test_every_beam_of_merged_lasers_gives_its_point() -> None:
    alone, merged = _scans()
    assert alone.sweep_beams == 181
    assert merged.sweep_beams == 181
    merged = merged._replace(ranges=np.concatenate((merged.ranges[:181], np.full(181, 1.0))))
    points = merged.points()
    assert len(points) == 362
    # the rear laser's half-circle, 1 m round its own origin behind
    assert np.allclose(np.hypot(points[181:, 0] + 0.2, points[181:, 1]), 1.0)
    assert np.all(points[181:, 0] <= -0.2 + 1e-9)


def test_the_map_layer_drops_only_the_walls_the_first_laser_sees_through() -> None:
    world = load_world("lab")
    layer = MapLayer(world, reach=4.0)
    pose = Pose(3.0, 3.0, 0.3)
    alone, merged = _scans()
    walls = layer.unseen_walls(pose, alone, None, 0.0)
    assert len(walls) > 10
    # the rear beams read as beams 181… of the front sweep would see through the walls behind
    assert np.array_equal(layer.unseen_walls(pose, merged, None, 0.0), walls)
