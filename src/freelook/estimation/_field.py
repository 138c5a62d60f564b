"""The likelihood field of a laser beam's end point on a map (Thrun et al.'s likelihood-field
model), tabulated, and the scoring of poses against it."""

from __future__ import annotations

import math
from typing import ClassVar, NamedTuple

import numba
import numpy as np
import numpy.typing as npt

from freelook.estimation._kernels import (
    TableFrame,
    log_weights,
    log_weights_split,
    scatter_order,
)
from freelook.maps import World, distance_to_background, grid_key, interpolate_linear
from freelook.runtime import PARALLEL_POOL

__all__ = ["FIELD_MARGIN", "FIELD_UPSAMPLE", "SEARCH_SIGMA", "FieldTable", "LikelihoodField"]

_Array = npt.NDArray[np.float64]
_Table = npt.NDArray[np.float32]
_TableKey = tuple[object, ...]

FIELD_UPSAMPLE = 4  # likelihood-field cells per map cell (each way)
SEARCH_SIGMA = 0.25  # m, the blurred field of a global search's first, coarse stage
# a table reaches this many of its hit sigmas beyond the map's edge, each edge cell carried on
# outwards: a map drawn to its outer walls (the lab's) has them in its edge cells, and a beam
# that ends a few centimetres into such a wall must score as deep in a wall, not as an end
# point off the map (a cliff at the edge cells' centres that made the true pose fit worse than
# a look-alike); a free edge stays free, so a map with room around its walls gains no wall
# beyond them (a second face there pulled poses 10 cm outwards on triangle.map)
FIELD_MARGIN = 4.0
_BAND = 64  # rows of a field computed at a time
_KEPT = 4  # tables kept for other fields: a map's sharp and blurred ones, for two maps
SPLIT_PARTICLES = 8000  # clouds this large are scored on every core (a global search's)
# poses drawn uniformly over the map are scored sorted by heading and place
_SCATTER_CELL = 0.5  # m, side of a place (larger on a map of more than _SCATTER_PLACES of them)
_SCATTER_PLACES = 4096  # bounds the sort's buckets on a large map


def signed_distance(grid: npt.NDArray[np.bool_], resolution: float) -> _Array:
    """Distance from each cell centre to the nearest obstacle face: positive in free space,
    negative inside obstacles, so the interpolated field is zero on the face itself (an
    unsigned field would peak inside the wall and pull the pose off it)."""
    half = resolution / 2
    distance: _Array = np.where(
        grid,
        half - distance_to_background(grid) * resolution,
        distance_to_background(~grid) * resolution - half,
    )
    return distance


class FieldTable(NamedTuple):
    """A tabulated log-likelihood field and where it lies on the map."""

    values: _Table
    #: the map coordinates of the table's first corner, a cell's side and the score of an end
    #: point beyond the outer cell centres
    frame: TableFrame


class LikelihoodField:
    """A map's tabulated log-likelihood of a beam end, sharp and blurred, and the scoring of
    poses on either.

    The sharp table is tabulated on a grid :data:`FIELD_UPSAMPLE` times finer than the map's:
    interpolating the likelihood between map cell centres (±half a cell from a face, where it
    is equal) would leave a flat band a cell wide around every wall, and beam noise would then
    pull the pose about a centimetre away from thin walls; the signed distance interpolates
    exactly, the likelihood not. The blurred table (a pose 20 cm and a few degrees off still
    fits, so a search's cloud gathers in the right basin before it sharpens) is built when the
    first search needs it, on the map's own grid: its peak is half a metre wide.

    Tables are shared by every field on the same map content (the trials of an experiment,
    one after another, each load their map anew); a shared table is never written.
    """

    #: tables by (map content, resolution, upsampling, sigma, z_hit, z_rand), the oldest first
    _tables: ClassVar[dict[_TableKey, FieldTable]] = {}

    def __init__(self, world: World, range_max: float, sigma_hit: float, z_hit: float) -> None:
        self.world = world
        self.z_hit = z_hit
        self.z_rand = (1.0 - z_hit) / range_max
        self.outside = float(math.log(self.z_rand))  # an end point beyond the table's centres
        rows, cols = world.obstacles().shape
        self.sharp = self._build(sigma_hit, FIELD_UPSAMPLE)
        self._coarse: FieldTable | None = None
        width, height = cols * world.resolution, rows * world.resolution
        cell = max(_SCATTER_CELL, math.sqrt(width * height / _SCATTER_PLACES))
        # the map in places (side, count each way), for sorting uniform candidates
        self._places = (cell, math.ceil(width / cell - 1e-9), math.ceil(height / cell - 1e-9))

    @classmethod
    def forget_tables(cls) -> None:
        """Drop the shared tables (the next field builds its own)."""
        cls._tables.clear()

    @property
    def coarse(self) -> FieldTable:
        """The blurred table, built on first use."""
        if self._coarse is None:
            self._coarse = self._build(SEARCH_SIGMA, 1)
        return self._coarse

    @property
    def coarse_built(self) -> bool:
        return self._coarse is not None

    def _build(self, sigma: float, up: int) -> FieldTable:
        """The log-likelihood of a beam end for hit noise ``sigma``, on a grid ``up`` times
        finer than the map's (each way) reaching :data:`FIELD_MARGIN` sigmas beyond the map
        (its edge cells carried on outwards: a wall drawn in them goes on, a free edge stays
        free); a table built for this map before is shared.

        A band of rows at a time: each cell is computed exactly as a whole-grid pass would,
        with float64 intermediates of a few rows instead of several full grids.
        """
        world = self.world
        z_hit, z_rand = self.z_hit, self.z_rand
        key = (grid_key(world.obstacles()), world.resolution, up, sigma, z_hit, z_rand)
        cached = self._tables.get(key)
        if cached is not None:
            return cached
        margin = math.ceil(FIELD_MARGIN * sigma / world.resolution - 1e-9)  # map cells
        grid = np.pad(world.obstacles(), margin, mode="edge")
        distance = signed_distance(grid, world.resolution)
        rows, cols = grid.shape
        r = (np.arange(rows * up) + 0.5) / up - 0.5
        c = (np.arange(cols * up) + 0.5) / up - 0.5
        table = np.empty((r.size, c.size), dtype=np.float32)
        for lo in range(0, r.size, _BAND):
            band = slice(lo, lo + _BAND)
            fine = interpolate_linear(distance, *np.meshgrid(r[band], c, indexing="ij"))
            table[band] = np.log(z_hit * np.exp(-(fine**2) / (2 * sigma**2)) + z_rand)
        corner = margin * world.resolution
        frame = (world.origin[0] - corner, world.origin[1] - corner, world.resolution / up)
        built = FieldTable(table, (*frame, self.outside))
        if len(self._tables) >= _KEPT:
            del self._tables[next(iter(self._tables))]
        self._tables[key] = built
        return built

    def score(
        self,
        poses: _Array,
        bx: _Array,
        by: _Array,
        table: FieldTable,
        out: _Array | None = None,
        scattered: bool = False,
    ) -> _Array:
        """Each pose's summed beam log-likelihood on ``table`` (:attr:`sharp` or
        :attr:`coarse`), into ``out`` when given; ``bx, by``: the beams' end points in the
        robot frame.

        ``scattered``: the poses are spread over the whole map (uniform candidates), so they
        are visited sorted by heading and place (the same scores: each pose's beams are summed
        in order whatever the order of the poses). A large cloud is split across cores.
        """
        if out is None:
            out = np.empty(len(poses))
        values, frame = table
        if scattered:
            ox, oy = self.world.origin
            order = scatter_order(poses, float(ox), float(oy), self._places)
        else:
            order = np.arange(len(poses))
        cores = numba.get_num_threads()
        if len(poses) >= SPLIT_PARTICLES and cores >= 2:
            with PARALLEL_POOL:  # numba's pool takes one parallel call at a time
                log_weights_split(poses, order, (bx, by), values, frame, out, cores)
        else:
            log_weights(poses, order, (bx, by), values, frame, out)
        return out
