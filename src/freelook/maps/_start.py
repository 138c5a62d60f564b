"""Where a robot can start on a map: the map's own start if it declares one, else the free
place nearest the map's origin where the robot fits with a margin, inside the building.

"Inside" is judged as a laser would: from a place inside a building most directions meet a
wall within ``ENCLOSURE_RANGE``; outside it (an ARIA map's grid also covers the ground around
a building) half of them leave the map.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.config import FootprintConfig
from freelook.errors import WorldError
from freelook.maps._distance import distance_to_background
from freelook.maps._model import World
from freelook.maps._raycast import cast_rays, cast_rays_from

__all__ = ["FreeSpace", "choose_start", "footprint_free"]

#: Room a chosen start leaves around the robot's swing circle, m.
START_MARGIN = 0.2
ENCLOSURE_RANGE = 30.0
ENCLOSURE_SHARE = 0.75
_RAYS = np.linspace(-math.pi, math.pi, 72, endpoint=False)
_MAX_TRIES = 20_000


class FreeSpace:
    """The places of a map where a disc of a given radius fits, and which lie inside."""

    def __init__(self, world: World) -> None:
        self.world = world
        free = world.known_free()
        # distance from each cell centre to the nearest cell that is not known free, m; a
        # disc of radius r at a cell centre is clear when r + half a cell diagonal fits
        self.clearance = distance_to_background(free)
        self.clearance *= world.resolution
        self._slack = world.resolution * math.sqrt(0.5)
        self._walls = world.obstacles()

    def fits(self, x: float, y: float, radius: float) -> bool:
        """Whether a disc of ``radius`` around (x, y) covers only known-free cells."""
        i, j = self.world.cell_of(x, y)
        rows, cols = self.world.shape
        if not (0 <= i < rows and 0 <= j < cols):
            return False
        return bool(self.clearance[i, j] - self._slack >= radius)

    def inside(self, x: float, y: float) -> bool:
        """Whether most directions from (x, y) meet a wall within ``ENCLOSURE_RANGE``."""
        world = self.world
        ranges = cast_rays(
            self._walls, world.origin, world.resolution, x, y, _RAYS, ENCLOSURE_RANGE
        )
        return bool(np.mean(ranges < ENCLOSURE_RANGE) >= ENCLOSURE_SHARE)

    def mask(self, radius: float, step: float = 0.5) -> npt.NDArray[np.bool_]:
        """Cells where the disc fits and which lie inside (judged every ``step`` metres, the
        cells in between taking their block's answer)."""
        fits = self.clearance - self._slack >= radius
        res = self.world.resolution
        stride = max(1, round(step / res))
        rows, cols = fits.shape
        blocks = (-(-rows // stride), -(-cols // stride))
        padded = np.zeros((blocks[0] * stride, blocks[1] * stride), dtype=bool)
        padded[:rows, :cols] = fits
        any_fit = padded.reshape(blocks[0], stride, blocks[1], stride).any(axis=(1, 3))
        a, b = np.nonzero(any_fit)
        xs = self.world.origin[0] + (b * stride + stride / 2) * res
        ys = self.world.origin[1] + (a * stride + stride / 2) * res
        n = len(_RAYS)
        ranges = cast_rays_from(
            self._walls,
            self.world.origin,
            res,
            np.repeat(xs, n),
            np.repeat(ys, n),
            np.tile(_RAYS, len(xs)),
            ENCLOSURE_RANGE,
        ).reshape(-1, n)
        inside = np.zeros(blocks, dtype=bool)
        inside[a, b] = np.mean(ranges < ENCLOSURE_RANGE, axis=1) >= ENCLOSURE_SHARE
        spread = np.repeat(np.repeat(inside, stride, axis=0), stride, axis=1)[:rows, :cols]
        return np.asarray(fits & spread)

    def _cells(self, radius: float) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """World (x, y) of the centres of every cell where the disc fits."""
        i, j = np.nonzero(self.clearance - self._slack >= radius)
        res = self.world.resolution
        xs = np.asarray(self.world.origin[0] + (j + 0.5) * res, dtype=np.float64)
        ys = np.asarray(self.world.origin[1] + (i + 0.5) * res, dtype=np.float64)
        return xs, ys

    def nearest(self, x: float, y: float, radius: float) -> tuple[float, float] | None:
        """The place inside nearest (x, y) where the disc fits (None if there is none)."""
        xs, ys = self._cells(radius)
        order = np.argsort(np.hypot(xs - x, ys - y), kind="stable")
        fallback: tuple[float, float] | None = None
        for k in order[:_MAX_TRIES].tolist():
            place = (float(xs[k]), float(ys[k]))
            if fallback is None:
                fallback = place
            if self.inside(*place):
                return place
        return fallback  # an open map (no enclosing walls): the nearest place that fits

    def sample(
        self, rng: np.random.Generator, radius: float, count: int
    ) -> list[tuple[float, float]]:
        """``count`` random places inside where the disc fits (uniform over the free area)."""
        xs, ys = self._cells(radius)
        if len(xs) == 0:
            raise WorldError(f"{_label(self.world)}: no free place where {radius:.2f} m fits")
        places: list[tuple[float, float]] = []
        tries = 0
        while len(places) < count:
            k = int(rng.integers(len(xs)))
            place = (float(xs[k]), float(ys[k]))
            tries += 1
            if self.inside(*place) or tries > _MAX_TRIES:
                places.append(place)
        return places


def footprint_free(
    world: World, footprint: FootprintConfig, pose: tuple[float, float, float]
) -> bool:
    """Whether the robot's rectangle at ``pose`` (plus a quarter cell) covers no obstacle
    and no unknown cell."""
    x, y, theta = pose
    quarter = world.resolution / 4
    half_l = footprint.length / 2 + quarter
    half_w = footprint.width / 2 + quarter
    us = np.arange(-half_l, half_l + 1e-9, quarter) + footprint.center_forward
    vs = np.arange(-half_w, half_w + 1e-9, quarter)
    gu, gv = np.meshgrid(us, vs)
    c, s = math.cos(theta), math.sin(theta)
    px = x + c * gu - s * gv
    py = y + s * gu + c * gv
    i = np.floor((py - world.origin[1]) / world.resolution).astype(np.int64)
    j = np.floor((px - world.origin[0]) / world.resolution).astype(np.int64)
    rows, cols = world.shape
    if i.min() < 0 or j.min() < 0 or i.max() >= rows or j.max() >= cols:
        return False
    return bool(world.known_free()[i, j].all())


def choose_start(
    world: World,
    footprint: FootprintConfig,
    requested: tuple[float, float, float] | None = None,
    *,
    margin: float = START_MARGIN,
) -> tuple[float, float, float]:
    """The pose a robot starts at: ``requested`` if given, else the start the map declares,
    else the free place nearest the map's start (its origin) where the robot's swing circle
    fits with ``margin``.

    Raises :class:`freelook.errors.WorldError` naming the pose when a requested or declared
    start puts the robot on an obstacle, or when the map has no place the robot fits.
    """
    if requested is not None:
        _check(world, footprint, requested, "the requested start")
        return requested
    if world.start_from:
        _check(world, footprint, world.start, world.start_from)
        return world.start
    x, y, theta = world.start
    space = FreeSpace(world)
    radius = footprint.swing_radius + margin
    if space.fits(x, y, radius) and space.inside(x, y):
        return world.start
    place = space.nearest(x, y, radius)
    if place is None:
        raise WorldError(
            f"{_label(world)}: no free place where the robot fits (a circle of "
            f"{radius:.2f} m); give a start with --start X,Y,THETA"
        )
    return (place[0], place[1], theta)


def _check(
    world: World, footprint: FootprintConfig, pose: tuple[float, float, float], what: str
) -> None:
    if not footprint_free(world, footprint, pose):
        x, y, theta = pose
        raise WorldError(
            f"{_label(world)}: start pose ({x:.2f} m, {y:.2f} m, {math.degrees(theta):.0f}°) "
            f"from {what} puts the robot on an obstacle or off the known map; "
            "give a free one with --start X,Y,THETA (m, m, degrees)"
        )


def _label(world: World) -> str:
    return world.source or world.name
