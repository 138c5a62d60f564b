"""The world a simulated robot lives in: an occupancy grid plus coloured solid objects.

Grid convention (shared by the simulator, the camera, localization and safety): cell
``occupancy[i, j]`` covers ``x ∈ [ox + j·res, ox + (j+1)·res)`` and
``y ∈ [oy + i·res, oy + (i+1)·res)``; row index grows with y (not image order). Loaders flip
image-ordered formats (PGM) on the way in.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = ["KeepOut", "Place", "World", "WorldObject"]


@dataclass(frozen=True, slots=True)
class WorldObject:
    """A solid box or cylinder standing on the floor; it blocks motion, laser and view.

    A ``movable`` one (a box a gripper can lift) is no part of the obstacle grid: the
    simulator's arm carries it and the camera draws it where it is.
    """

    name: str
    shape: Literal["box", "cylinder"]
    x: float
    y: float
    height: float
    color: tuple[int, int, int]
    size_x: float = 0.0  # box: extent along its own x axis, m
    size_y: float = 0.0  # box: extent along its own y axis, m
    yaw: float = 0.0  # box: rotation, rad
    radius: float = 0.0  # cylinder
    temperature: float | None = None  # °C, seen by thermal cameras; None: the room's
    movable: bool = False

    def contains(
        self, x: npt.NDArray[np.float64], y: npt.NDArray[np.float64]
    ) -> npt.NDArray[np.bool_]:
        """Whether the points (x, y) lie inside the object's footprint."""
        dx, dy = x - self.x, y - self.y
        if self.shape == "cylinder":
            return np.asarray(dx * dx + dy * dy <= self.radius * self.radius)
        c, s = math.cos(self.yaw), math.sin(self.yaw)
        u = c * dx + s * dy
        v = -s * dx + c * dy
        return np.asarray((np.abs(u) <= self.size_x / 2) & (np.abs(v) <= self.size_y / 2))


@dataclass(frozen=True, slots=True)
class Place:
    """A named pose on the map: the robot's home, a dock or a goal (ARIA cairns)."""

    name: str
    kind: Literal["home", "dock", "goal"]
    x: float
    y: float
    theta: float | None = None  # rad, when the map gives a heading


@dataclass(frozen=True, slots=True)
class KeepOut:
    """A place the robot must not enter: a forbidden line or a forbidden area (a polygon).

    The robot's safety layer treats its outline as an obstacle; from inside an area the
    robot may always drive out.
    """

    name: str
    kind: Literal["line", "area"]
    vertices: tuple[tuple[float, float], ...]  # line: its two ends; area: corners in order

    def segments(self) -> list[tuple[float, float, float, float]]:
        """The outline as (x1, y1, x2, y2) segments (a line is one, an area closes)."""
        v = self.vertices
        if self.kind == "line":
            return [(v[0][0], v[0][1], v[1][0], v[1][1])]
        return [(*v[k], *v[(k + 1) % len(v)]) for k in range(len(v))]

    def contains(self, x: float, y: float) -> bool:
        """Whether (x, y) lies inside an area (never for a line)."""
        if self.kind == "line":
            return False
        inside = False
        v = self.vertices
        for k in range(len(v)):
            (x1, y1), (x2, y2) = v[k], v[(k + 1) % len(v)]
            if (y1 > y) != (y2 > y) and x < x1 + (y - y1) * (x2 - x1) / (y2 - y1):
                inside = not inside
        return inside


@dataclass(frozen=True, slots=True)
class World:
    """Walls as an occupancy grid, objects as a list; see the module docstring for axes."""

    name: str
    occupancy: npt.NDArray[np.bool_]  # walls only, shape (rows, cols), row index grows with y
    resolution: float  # m per cell
    origin: tuple[float, float]  # world (x, y) of the corner of cell (0, 0)
    objects: tuple[WorldObject, ...] = ()
    wall_height: float = 2.0
    #: Suggested start pose (x, y, θ) for a robot: the one the map declares (see
    #: ``start_from``), else the map's origin; :func:`freelook.maps.choose_start` moves an
    #: undeclared start to the nearest free place a robot fits.
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    #: What :func:`freelook.maps.load_world` loaded it from (a built-in name or a path); ""
    #: for a world built in memory. A robot loads its own map from the same source.
    source: str = ""
    #: Where ``start`` comes from ("the world's start", "the RobotHome cairn", …); "" when
    #: the map declares no start.
    start_from: str = ""
    #: Named places: the robot's home, docks and goals.
    places: tuple[Place, ...] = ()
    #: Forbidden lines and areas the robot keeps out of.
    keep_out: tuple[KeepOut, ...] = ()
    #: Cells that are neither free nor occupied (a ROS map's unknown); None: all known.
    unknown: npt.NDArray[np.bool_] | None = field(default=None, repr=False, compare=False)
    _obstacles: npt.NDArray[np.bool_] | None = field(default=None, repr=False, compare=False)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.occupancy.shape[0]), int(self.occupancy.shape[1]))

    @property
    def extent(self) -> tuple[float, float, float, float]:
        """(x_min, x_max, y_min, y_max) of the grid in metres."""
        rows, cols = self.shape
        ox, oy = self.origin
        return (ox, ox + cols * self.resolution, oy, oy + rows * self.resolution)

    def obstacles(self) -> npt.NDArray[np.bool_]:
        """Walls plus every fixed object rasterised into the grid (computed once, cached)."""
        if self._obstacles is not None:
            return self._obstacles
        grid = self.occupancy.copy()
        if self.objects:
            rows, cols = self.shape
            xs = self.origin[0] + (np.arange(cols) + 0.5) * self.resolution
            ys = self.origin[1] + (np.arange(rows) + 0.5) * self.resolution
            gx, gy = np.meshgrid(xs, ys)
            for obj in self.objects:
                if not obj.movable:
                    grid |= obj.contains(gx, gy)
        grid.setflags(write=False)
        object.__setattr__(self, "_obstacles", grid)
        return grid

    def known_free(self) -> npt.NDArray[np.bool_]:
        """Cells known to be free: not an obstacle, not unknown."""
        free = ~self.obstacles()
        if self.unknown is not None:
            free &= ~self.unknown
        return free

    def cell_of(self, x: float, y: float) -> tuple[int, int]:
        """(row, col) of the cell holding world point (x, y); may lie outside the grid."""
        return (
            math.floor((y - self.origin[1]) / self.resolution),
            math.floor((x - self.origin[0]) / self.resolution),
        )

    def is_free(self, x: float, y: float) -> bool:
        """Whether (x, y) is inside the grid and not an obstacle."""
        i, j = self.cell_of(x, y)
        rows, cols = self.shape
        return 0 <= i < rows and 0 <= j < cols and not bool(self.obstacles()[i, j])
