"""Operator-side path planning: the thesis ellipse placed clear of the map, clicked waypoints."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.control import ellipse_points
from freelook.maps import World, distance_to_background

__all__ = ["Clearance", "PlannedPath", "ellipse_from", "waypoint_path"]

WAYPOINT_SPEED = 0.25  # m/s along clicked waypoints

#: (t, x, y, periodic): time-stamped points a tracker follows
PlannedPath = tuple[list[float], list[float], list[float], bool]


class Clearance:
    """Distance to the nearest obstacle of a map (computed once per map)."""

    def __init__(self, world: World | None) -> None:
        self.world = world
        self._distance: npt.NDArray[np.float64] | None = None

    def of_path(self, xs: list[float], ys: list[float]) -> float:
        """Smallest distance from the path to an obstacle (inf without a map; 0 off it)."""
        world = self.world
        if world is None:
            return math.inf
        if self._distance is None:
            self._distance = distance_to_background(~world.obstacles()) * world.resolution
        assert self._distance is not None
        worst = math.inf
        rows, cols = world.shape
        for x, y in zip(xs, ys, strict=True):
            i, j = world.cell_of(x, y)
            inside = 0 <= i < rows and 0 <= j < cols
            worst = min(worst, float(self._distance[i, j]) if inside else 0.0)
        return worst


def ellipse_from(pose: tuple[float, float, float], clearance: Clearance) -> PlannedPath:
    """The thesis ellipse starting at the robot, tangent to its heading, turning left or
    right: whichever keeps farther from the map's obstacles."""
    t, ex, ey = ellipse_points(101)
    best: tuple[float, list[float], list[float]] | None = None
    for side in (1.0, -1.0):  # centre to the left (counter-clockwise) or to the right
        rot = pose[2] - side * math.pi / 2
        c, s = math.cos(rot), math.sin(rot)
        cx, cy = pose[0] - c * 1.8, pose[1] - s * 1.8
        xs = [cx + c * x - s * side * y for x, y in zip(ex, ey, strict=True)]
        ys = [cy + s * x + c * side * y for x, y in zip(ex, ey, strict=True)]
        score = clearance.of_path(xs, ys)
        if best is None or score > best[0]:
            best = (score, xs, ys)
    assert best is not None
    return [float(v) for v in t], best[1], best[2], True


def waypoint_path(
    pose: tuple[float, float, float], waypoints: tuple[tuple[float, float], ...]
) -> PlannedPath:
    """From the robot through the clicked points at a steady walking pace."""
    pts = [(pose[0], pose[1]), *waypoints]
    if len(pts) < 3:
        pts.insert(1, ((pts[0][0] + pts[-1][0]) / 2, (pts[0][1] + pts[-1][1]) / 2))
    distances = np.concatenate([[0.0], np.cumsum(np.hypot(*np.diff(np.array(pts).T)))])
    t = [float(d) / WAYPOINT_SPEED for d in distances]
    return t, [p[0] for p in pts], [p[1] for p in pts], False
