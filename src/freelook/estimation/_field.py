"""The likelihood field of a laser beam's end point on a map (Thrun et al.'s likelihood-field
model), tabulated, and the scoring of poses against it."""

from __future__ import annotations

import math
from typing import ClassVar

import numba
import numpy as np
import numpy.typing as npt

from freelook.estimation._kernels import log_weights, log_weights_split, scatter_order
from freelook.maps import World, distance_to_background, grid_key, interpolate_linear
from freelook.runtime import PARALLEL_POOL

__all__ = ["FIELD_UPSAMPLE", "SEARCH_SIGMA", "LikelihoodField"]

_Array = npt.NDArray[np.float64]
_Table = npt.NDArray[np.float32]
_TableKey = tuple[object, ...]

FIELD_UPSAMPLE = 4  # likelihood-field cells per map cell (each way)
SEARCH_SIGMA = 0.25  # m, the blurred field of a global search's first, coarse stage
_BAND = 64  # rows of a field computed at a time
_KEPT = 4  # tables kept for other fields: a map's sharp and blurred ones, for two maps
SPLIT_PARTICLES = 8000  # clouds this large are scored on every core (a global search's)
# poses drawn uniformly over the map are scored sorted by heading and place
_SCATTER_CELL = 0.5  # m, side of a place (larger on a map of more than _SCATTER_PLACES of them)
_SCATTER_PLACES = 4096  # bounds the sort's buckets on a large map


def signed_distance(world: World) -> _Array:
    """Distance from each cell centre to the nearest obstacle face: positive in free space,
    negative inside obstacles, so the interpolated field is zero on the face itself (an
    unsigned field would peak inside the wall and pull the pose off it)."""
    grid = world.obstacles()
    half = world.resolution / 2
    distance: _Array = np.where(
        grid,
        half - distance_to_background(grid) * world.resolution,
        distance_to_background(~grid) * world.resolution - half,
    )
    return distance


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
    _tables: ClassVar[dict[_TableKey, _Table]] = {}

    def __init__(self, world: World, range_max: float, sigma_hit: float, z_hit: float) -> None:
        self.world = world
        self.z_hit = z_hit
        self.z_rand = (1.0 - z_hit) / range_max
        self.outside = float(math.log(self.z_rand))  # an end point beyond the table's centres
        rows, cols = world.obstacles().shape
        self._map_cols = cols
        self.sharp = self._build(sigma_hit, FIELD_UPSAMPLE)
        self._coarse: _Table | None = None
        width, height = cols * world.resolution, rows * world.resolution
        cell = max(_SCATTER_CELL, math.sqrt(width * height / _SCATTER_PLACES))
        # the map in places (side, count each way), for sorting uniform candidates
        self._places = (cell, math.ceil(width / cell - 1e-9), math.ceil(height / cell - 1e-9))

    @classmethod
    def forget_tables(cls) -> None:
        """Drop the shared tables (the next field builds its own)."""
        cls._tables.clear()

    @property
    def coarse(self) -> _Table:
        """The blurred table, built on first use."""
        if self._coarse is None:
            self._coarse = self._build(SEARCH_SIGMA, 1)
        return self._coarse

    @property
    def coarse_built(self) -> bool:
        return self._coarse is not None

    def _build(self, sigma: float, up: int) -> _Table:
        """The log-likelihood of a beam end for hit noise ``sigma``, on a grid ``up`` times
        finer than the map's (each way); a table built for this map before is shared.

        A band of rows at a time: each cell is computed exactly as a whole-grid pass would,
        with float64 intermediates of a few rows instead of several full grids.
        """
        grid = self.world.obstacles()
        z_hit, z_rand = self.z_hit, self.z_rand
        key = (grid_key(grid), self.world.resolution, up, sigma, z_hit, z_rand)
        cached = self._tables.get(key)
        if cached is not None:
            return cached
        distance = signed_distance(self.world)
        rows, cols = grid.shape
        r = (np.arange(rows * up) + 0.5) / up - 0.5
        c = (np.arange(cols * up) + 0.5) / up - 0.5
        table = np.empty((r.size, c.size), dtype=np.float32)
        for lo in range(0, r.size, _BAND):
            band = slice(lo, lo + _BAND)
            fine = interpolate_linear(distance, *np.meshgrid(r[band], c, indexing="ij"))
            table[band] = np.log(z_hit * np.exp(-(fine**2) / (2 * sigma**2)) + z_rand)
        if len(self._tables) >= _KEPT:
            del self._tables[next(iter(self._tables))]
        self._tables[key] = table
        return table

    def score(
        self,
        poses: _Array,
        bx: _Array,
        by: _Array,
        table: _Table,
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
        ox, oy = self.world.origin
        side = self.world.resolution / (table.shape[1] // self._map_cols)  # a table cell's
        frame = (float(ox), float(oy), side, self.outside)
        if scattered:
            order = scatter_order(poses, float(ox), float(oy), self._places)
        else:
            order = np.arange(len(poses))
        cores = numba.get_num_threads()
        if len(poses) >= SPLIT_PARTICLES and cores >= 2:
            with PARALLEL_POOL:  # numba's pool takes one parallel call at a time
                log_weights_split(poses, order, (bx, by), table, frame, out, cores)
        else:
            log_weights(poses, order, (bx, by), table, frame, out)
        return out
