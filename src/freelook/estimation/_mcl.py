"""Monte Carlo localization with a likelihood-field laser model (Thrun et al., AMCL-style).

The map's distance transform is computed once into a table of per-beam log-likelihoods
(a Gaussian around obstacles mixed with a uniform floor), so a sensor update is a gather per
particle and beam — compiled; a global search's large cloud is split across cores, and its
uniform candidates are scored sorted by heading and place, so their lookups stay local. Updates
are motion-triggered (like AMCL's update_min_d / update_min_a), and so is the motion model:
odometry steps are composed between updates and sampled once, when the next scan is weighed.
Low-variance resampling runs when the effective sample size drops.

:meth:`global_init` recovers from a wrong pose in stages: the first scan picks the cloud from
many uniform candidates; a blurred field gathers it into a few places; each place is refined on
the scan and the sharp field decides between them; before the search ends, the best other
places of the map are refined alike, and any that fit about as well keep it going.
:class:`SearchPhase` names these stages.
"""

from __future__ import annotations

import functools
import math
import threading
from dataclasses import dataclass
from enum import Enum
from typing import NamedTuple

import numba
import numpy as np
import numpy.typing as npt

from freelook.config import EstimationConfig, RobotConfig
from freelook.estimation._lookup import LANES, lookup_lanes
from freelook.geometry import wrap_angle, wrap_angles
from freelook.maps import (
    FreeSpace,
    World,
    distance_to_background,
    grid_key,
    interpolate_linear,
)

__all__ = ["MonteCarloLocalization", "PoseEstimate", "SearchPhase"]

_SPLIT_LOCK = threading.Lock()

FIELD_UPSAMPLE = 4  # likelihood-field cells per map cell (each way)
_FIELD_BAND = 64  # rows of the likelihood field computed at a time
SPLIT_PARTICLES = 8000  # clouds this large are scored on every core (a global search's)
# poses drawn uniformly over the map are scored in an order that keeps the table lookups local:
# sorted by heading and place, then all beams of a chunk of neighbours before the next chunk
SCATTER_HEADINGS = 64  # heading bins
SCATTER_CELL = 0.5  # m, side of a place (larger on a map of more than SCATTER_PLACES of them)
SCATTER_PLACES = 4096  # bounds the sort's buckets (× SCATTER_HEADINGS) on a large map
SCATTER_CHUNK = 128  # poses scored together, beam by beam (whole groups of LANES)
ROUGHEN_XY = 0.003  # m
ROUGHEN_THETA = math.radians(0.1)
# while searching, each resampling spreads the copies wider, so a cloud that settled near (not
# on) the true pose keeps climbing the likelihood instead of starving around its first guess
SEARCH_ROUGHEN_XY = 0.03  # m
SEARCH_ROUGHEN_THETA = math.radians(1.0)
SEARCH_CANDIDATES = 10  # candidates per particle scored on a search's first scan
SCREEN_BEAMS = 12  # beams, spread over the scan, every uniform candidate is first scored on
SCREEN_KEEP = 0.3  # share of the candidates, the best on those beams, scored on all of them
SEARCH_SIGMA = 0.25  # m, likelihood field of a search's first, coarse stage
SEARCH_FINE_UPDATES = 3  # updates on the sharp field before a search may end
SEARCH_MIN_FIT = -1.0  # mean log-likelihood per beam that ends a search (a good fit: ≈ −0.2)
SEARCH_RESTART_AFTER = 8  # updates with a settled cloud and a poor fit before searching afresh
SEARCH_VERIFY_UPDATES = 60  # after a search, updates during which a poor fit restarts it
SEARCH_STILL_UPDATES = 30  # forced updates of a search on the view from one place, at most
# a tracking cloud whose scans keep fitting poorly follows a wrong pose (a wrong start, a kidnap):
# after this many poor updates in a row the filter searches the whole map
TRACKING_LOST_AFTER = 12
# before a search ends, the best other places of the map are refined on the same scan; one that
# fits nearly as well as the winner joins the cloud and the search goes on until one place wins
RIVAL_CANDIDATES = 4  # uniform candidates per search particle scored for rival places
RIVAL_PLACES = 24  # distinct places (1 m, 45° cells) refined per challenge
RIVAL_PARTICLES = 256  # particles refining each place
RIVAL_ROUNDS = (0.08, 0.04, 0.02, 0.01, 0.005)  # m, spread of each refinement round
RIVAL_MARGIN = 0.05  # mean log-likelihood per beam within which a rival keeps the search going
RIVAL_SHARE = 0.3  # share of the cloud handed to the rivals that passed
# a search's stages end on the places the cloud has gathered in, not on its overall spread: a
# look-alike place holding a few per cent of the weight keeps the spread wide for seconds, and
# the coarse field tells look-alikes apart far more slowly than the sharp one
GATHER_CELLS = 8  # the coarse stage ends when this many 1 m cells hold PLACE_SHARE
PLACE_RADIUS = 0.75  # m, around the heaviest 1 m cell's centre
PLACE_ANGLE = math.radians(45.0)
PLACE_SHARE = 0.9  # weight the main place must hold for a search to end


class SearchPhase(Enum):
    """Where the filter stands in a global search; each stage leads to the next, in order.

    A poor fit in the sharp stage (or soon after it) starts the search afresh from screening.
    """

    TRACKING = "tracking"  # no search: the cloud follows one pose on the sharp field
    SCREENING = "screening"  # the next scan picks the cloud from many uniform candidates
    COARSE = "coarse"  # the blurred field gathers the cloud into a few places
    SHARP = "sharp"  # the places refined, the sharp field decides; rivals are tried before it ends


@dataclass(frozen=True, slots=True)
class PoseEstimate:
    x: float
    y: float
    theta: float
    std_xy: float
    std_theta: float


class _Place(NamedTuple):
    """A place the cloud has gathered in: its mean pose, weight, spread and particles."""

    x: float
    y: float
    theta: float
    share: float  # of the cloud's weight
    spread: float  # m, standard deviation of the position
    members: npt.NDArray[np.bool_]


def _best(scores: npt.NDArray[np.float64], count: int) -> npt.NDArray[np.int64]:
    """The indices of the ``count`` best ``scores``, in order: those of
    ``np.argpartition(-scores, count - 1)[:count]``, sorted. When no other score ties the
    ``count``-th best, they are simply all the scores at least as good as it (already in
    order, no sort of tens of thousands of indices); a tie there is left to ``argpartition``,
    which decides which of the tied scores it keeps."""
    worse = -scores
    kth = np.partition(worse, count - 1)[count - 1]
    kept = np.flatnonzero(worse <= kth)
    if len(kept) == count:
        return kept
    ranked: npt.NDArray[np.int64] = np.sort(np.argpartition(worse, count - 1)[:count])
    return ranked


def _mean_pose(
    poses: npt.NDArray[np.float64], weights: npt.NDArray[np.float64]
) -> tuple[float, float, float]:
    """Weighted mean pose (circular mean heading); ``weights`` need not sum to one."""
    total = float(weights.sum())
    x = float(np.dot(weights, poses[:, 0])) / total
    y = float(np.dot(weights, poses[:, 1])) / total
    s = float(np.dot(weights, np.sin(poses[:, 2])))
    c = float(np.dot(weights, np.cos(poses[:, 2])))
    return x, y, math.atan2(s, c)


@numba.njit(cache=True, nogil=True)
def _log_weights(
    particles: npt.NDArray[np.float64],
    bx: npt.NDArray[np.float64],
    by: npt.NDArray[np.float64],
    table: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    outside: float,
    out: npt.NDArray[np.float64],
) -> None:
    """Each particle's summed beam log-likelihood on ``table`` (beam end points ``bx, by``).

    Beam by beam across all particles: one beam's end points from a cloud fall in a small
    patch of the table, so the lookups stay in cache (particle by particle was twice as slow).
    Eight particles are looked up at once (:func:`lookup_lanes`: the same scores, in half the
    time of one at a time).
    """
    rows, cols = table.shape
    inv = 1.0 / resolution
    n = particles.shape[0]
    wide = -(-n // LANES) * LANES  # whole groups of lanes; the padding's scores are dropped
    c, s, gx0, gy0 = np.zeros(wide), np.zeros(wide), np.zeros(wide), np.zeros(wide)
    total = np.zeros(wide)
    for p in range(n):
        c[p] = math.cos(particles[p, 2])
        s[p] = math.sin(particles[p, 2])
        # table coordinates relative to cell centres
        gx0[p] = (particles[p, 0] - ox) * inv - 0.5
        gy0[p] = (particles[p, 1] - oy) * inv - 0.5
    for k in range(bx.shape[0]):
        ax = bx[k] * inv
        ay = by[k] * inv
        for p in range(0, wide, LANES):
            # bilinear interpolation between cell centres: the field is continuous, so a beam
            # ending on a wall face scores the same from either side of the wall
            lookup_lanes(total, gx0, gy0, c, s, p, ax, ay, table, rows, cols, outside)
    for p in range(n):
        out[p] = total[p]


@numba.njit(cache=True, nogil=True, parallel=True)
def _log_weights_split(
    particles: npt.NDArray[np.float64],
    bx: npt.NDArray[np.float64],
    by: npt.NDArray[np.float64],
    table: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    outside: float,
    out: npt.NDArray[np.float64],
    parts: int,
) -> None:
    """:func:`_log_weights` on ``parts`` slices of the cloud at once, one per core."""
    n = particles.shape[0]
    size = (n + parts - 1) // parts
    for part in numba.prange(parts):
        lo = part * size
        hi = min(n, lo + size)
        _log_weights(particles[lo:hi], bx, by, table, ox, oy, resolution, outside, out[lo:hi])


@numba.njit(cache=True, nogil=True)
def _scatter_order(
    particles: npt.NDArray[np.float64],
    ox: float,
    oy: float,
    cell: float,
    nx: int,
    ny: int,
) -> npt.NDArray[np.int64]:
    """The particles' indices sorted by heading bin, then place (``cell`` squares, row, then
    column), all in one counting sort; a pose off the map counts to the edge place."""
    n = particles.shape[0]
    buckets = SCATTER_HEADINGS * ny * nx
    key = np.empty(n, dtype=np.int64)
    start = np.zeros(buckets + 1, dtype=np.int64)
    for p in range(n):
        col = min(max(math.floor((particles[p, 0] - ox) / cell), 0), nx - 1)
        row = min(max(math.floor((particles[p, 1] - oy) / cell), 0), ny - 1)
        heading = math.floor(particles[p, 2] / (2.0 * math.pi) * SCATTER_HEADINGS)
        key[p] = ((heading % SCATTER_HEADINGS) * ny + row) * nx + col
        start[key[p] + 1] += 1
    for b in range(buckets):
        start[b + 1] += start[b]
    order = np.empty(n, dtype=np.int64)
    for p in range(n):
        order[start[key[p]]] = p
        start[key[p]] += 1
    return order


@numba.njit(cache=True, nogil=True)
def _log_weights_ordered(
    particles: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    bx: npt.NDArray[np.float64],
    by: npt.NDArray[np.float64],
    table: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    outside: float,
    out: npt.NDArray[np.float64],
) -> None:
    """:func:`_log_weights` of the particles ``order`` lists, visited in that order, into their
    places in ``out`` (the others are left alone).

    Each particle's beams are summed in the same order with the same arithmetic, so every
    score is the same to the bit. Uniform candidates spread their lookups over the whole table
    (cache- and TLB-miss bound); scored a chunk of neighbours at a time, beam by beam, the
    lookups of one beam and the next fall in nearby patches.
    """
    rows, cols = table.shape
    inv = 1.0 / resolution
    n = order.shape[0]
    wide = -(-n // LANES) * LANES  # whole groups of lanes; the padding's scores are dropped
    c, s, gx0, gy0 = np.zeros(wide), np.zeros(wide), np.zeros(wide), np.zeros(wide)
    total = np.zeros(wide)
    for q in range(n):
        p = order[q]
        c[q] = math.cos(particles[p, 2])
        s[q] = math.sin(particles[p, 2])
        gx0[q] = (particles[p, 0] - ox) * inv - 0.5
        gy0[q] = (particles[p, 1] - oy) * inv - 0.5
    for lo in range(0, wide, SCATTER_CHUNK):
        hi = min(wide, lo + SCATTER_CHUNK)
        for k in range(bx.shape[0]):
            ax = bx[k] * inv
            ay = by[k] * inv
            for q in range(lo, hi, LANES):
                lookup_lanes(total, gx0, gy0, c, s, q, ax, ay, table, rows, cols, outside)
    for q in range(n):
        out[order[q]] = total[q]


@numba.njit(cache=True, nogil=True, parallel=True)
def _log_weights_ordered_split(
    particles: npt.NDArray[np.float64],
    order: npt.NDArray[np.int64],
    bx: npt.NDArray[np.float64],
    by: npt.NDArray[np.float64],
    table: npt.NDArray[np.float32],
    ox: float,
    oy: float,
    resolution: float,
    outside: float,
    out: npt.NDArray[np.float64],
    parts: int,
) -> None:
    """:func:`_log_weights_ordered` on ``parts`` slices of ``order`` at once, one per core."""
    n = order.shape[0]
    size = (n + parts - 1) // parts
    for part in numba.prange(parts):
        lo = part * size
        hi = min(n, lo + size)
        _log_weights_ordered(
            particles, order[lo:hi], bx, by, table, ox, oy, resolution, outside, out
        )


@numba.njit(cache=True, nogil=True)
def _move(
    particles: npt.NDArray[np.float64],
    noise: npt.NDArray[np.float64],
    rot1: float,
    trans: float,
    rot2: float,
    spread: tuple[float, float, float],
) -> None:
    """Move each particle by rotate–translate–rotate, each step blurred by its own noise."""
    for p in range(particles.shape[0]):
        heading = particles[p, 2] + rot1 - noise[p, 0] * spread[0]
        step = trans - noise[p, 1] * spread[1]
        particles[p, 0] += step * math.cos(heading)
        particles[p, 1] += step * math.sin(heading)
        particles[p, 2] = heading + rot2 - noise[p, 2] * spread[2]


@numba.njit(cache=True, nogil=True)
def _reweight(
    scores: npt.NDArray[np.float64], weights: npt.NDArray[np.float64], temperature: float
) -> float:
    """Multiply the weights by the tempered likelihoods, normalise in place; returns the
    weighted mean score."""
    n = weights.shape[0]
    top = -np.inf
    for p in range(n):
        weights[p] = scores[p] / temperature + math.log(max(weights[p], 1e-300))
        top = max(top, weights[p])
    total = 0.0
    for p in range(n):
        weights[p] = math.exp(weights[p] - top)
        total += weights[p]
    mean = 0.0
    for p in range(n):
        weights[p] /= total
        mean += weights[p] * scores[p]
    return mean


@numba.njit(cache=True, nogil=True)
def _systematic(weights: npt.NDArray[np.float64], start: float, out: npt.NDArray[np.int64]) -> None:
    """Low-variance resampling: for evenly spaced positions ``(start + k) / len(out)``, the
    index where the running sum of ``weights`` first reaches each (one pass, both sorted)."""
    count = out.shape[0]
    last = weights.shape[0] - 1
    i = 0
    running = weights[0]
    for k in range(count):
        position = (start + k) / count
        while running < position and i < last:
            i += 1
            running += weights[i]
        out[k] = i


@functools.cache
def _compile_kernels() -> None:
    """Compile (or load from numba's cache) the tracking kernels now, on tiny inputs.

    The first call of each would otherwise compile it there and then, up to a few seconds on
    a fresh install, in the middle of a running robot's first localization. The split and
    sorted scorers wait for the first global search: loading the split one starts numba's pool
    of worker threads (a tracking robot has no use for them), and a real-time robot localizes
    off its control path, so a first search that compiles them is late, not the robot.
    """
    poses = np.zeros((4, 3))
    scores = np.zeros(4)
    table = np.zeros((4, 4), dtype=np.float32)
    beams = np.zeros(2)
    _log_weights(poses, beams, beams, table, 0.0, 0.0, 1.0, 0.0, scores)
    _move(poses, np.zeros((4, 3)), 0.0, 0.0, 0.0, (0.0, 0.0, 0.0))
    _reweight(scores, np.full(4, 0.25), 1.0)
    _systematic(np.full(4, 0.25), 0.5, np.empty(4, dtype=np.int64))


_POSSIBLE: dict[tuple[object, ...], npt.NDArray[np.bool_]] = {}


def _possible_cells(world: World, room: float) -> npt.NDArray[np.bool_]:
    """Cells a robot can stand on: known free, ``room`` from any obstacle, inside the building
    (an ARIA map's grid also covers the ground around it); every free cell if none qualifies.
    Computed once per map (by content: each trial of an experiment loads its map anew)."""
    grid = world.obstacles()
    key = (grid_key(grid), grid_key(world.known_free()), room)
    possible = _POSSIBLE.get(key)
    if possible is None:
        possible = FreeSpace(world).mask(room) if room > 0 else world.known_free()
        if not possible.any():
            possible = ~grid
        if len(_POSSIBLE) >= 8:  # a few maps at a time; the oldest goes
            del _POSSIBLE[next(iter(_POSSIBLE))]
        _POSSIBLE[key] = possible
    return possible


def _signed_distance(world: World) -> npt.NDArray[np.float64]:
    """Distance from each cell centre to the nearest obstacle face: positive in free space,
    negative inside obstacles, so the interpolated field is zero on the face itself (an
    unsigned field would peak inside the wall and pull the pose off it)."""
    grid = world.obstacles()
    half = world.resolution / 2
    distance: npt.NDArray[np.float64] = np.where(
        grid,
        half - distance_to_background(grid) * world.resolution,
        distance_to_background(~grid) * world.resolution - half,
    )
    return distance


#: likelihood tables by (map content, its resolution, upsampling, sigma, z_hit, z_rand): many
#: filters on one map (trials of an experiment, one after another) build each table once; never
#: written (left writeable: numba compiles a read-only array's kernels anew)
_TABLES: dict[tuple[object, ...], npt.NDArray[np.float32]] = {}


class MonteCarloLocalization:
    """Particle filter on a world's map; poses in the map frame."""

    def __init__(
        self,
        world: World,
        config: EstimationConfig,
        beam_angles: npt.NDArray[np.float64],
        laser_mount: tuple[float, float],
        range_max: float,
        seed: int = 0,
        sigma_hit: float = 0.05,
        z_hit: float = 0.9,
        temperature: float = 3.0,
        alphas: tuple[float, float, float, float] = (0.05, 0.02, 0.05, 0.02),
        room: float = 0.0,
    ) -> None:
        """``room``: how far the robot's reference point stays from any obstacle; a global
        search draws its poses only where that much room is, inside the building."""
        self.world = world
        self.config = config
        _compile_kernels()
        self.rng = np.random.default_rng(seed)
        self.beam_angles = np.asarray(beam_angles, dtype=np.float64)
        self.mount = laser_mount
        self.range_max = range_max
        self.temperature = temperature
        self.alphas = alphas
        rows, cols = world.obstacles().shape
        # the log-likelihood is tabulated on a finer grid than the map's: interpolating it
        # between map cell centres (±half a cell from a face, where it is equal) would leave a
        # flat band a cell wide around every wall, and beam noise then pulls the pose ~1 cm
        # away from thin walls; the signed distance interpolates exactly, the likelihood not
        up = FIELD_UPSAMPLE
        self._map_cols = cols
        self._z_hit = z_hit
        self._z_rand = (1.0 - z_hit) / range_max
        self._table = self._log_field(sigma_hit, up)
        # a global search first scores against a blurred field (a pose 20 cm and a few degrees
        # off still fits, so the cloud gathers in the right basin before it sharpens); built
        # when the first search needs it, a tracking robot never does. It is tabulated on the
        # map's own grid: its peak is half a metre wide, so the flat band a cell wide that
        # interpolation leaves at a wall face changes nothing, and a table 16 times smaller
        # stays in cache while a search scores its uniform candidates all over the map
        self._coarse: npt.NDArray[np.float32] | None = None
        self._outside = float(math.log(self._z_rand))
        self._room = room
        # where a search draws poses: the cells' rows and columns
        self._free_cells: tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]] | None = None
        # the map in whole metres (each way), for grouping particles into places
        self._metres = (
            math.ceil(cols * world.resolution - 1e-9),
            math.ceil(rows * world.resolution - 1e-9),
        )
        # the map in places (side, count each way), for sorting uniform candidates
        width, height = cols * world.resolution, rows * world.resolution
        cell = max(SCATTER_CELL, math.sqrt(width * height / SCATTER_PLACES))
        self._scatter_places = (
            cell,
            math.ceil(width / cell - 1e-9),
            math.ceil(height / cell - 1e-9),
        )
        n = config.mcl_particles
        self._search_size = min(20_000, 10 * n)  # a search's particles, before it gathers
        self.particles = np.zeros((n, 3))
        self.weights = np.full(n, 1.0 / n)
        self._logw = np.empty(n)
        self._noise = np.empty((n, 3))  # the motion model's draws, reused from step to step
        self._moved_d = math.inf
        self._moved_a = math.inf
        # the odometry since the last update, composed, not yet applied to the particles
        self._pending = (0.0, 0.0, 0.0)
        self.updates = 0
        self.fit = 0.0  # mean log-likelihood per beam at the last update
        self._phase = SearchPhase.TRACKING
        self._global_updates = 0
        self._still_updates = 0  # forced updates of a search since the robot last moved
        self._poor_fits = 0
        self._verify = 0
        self.challenges = 0  # rival places that kept a search going

    def _log_field(self, sigma: float, up: int) -> npt.NDArray[np.float32]:
        """The log-likelihood of a beam end for hit noise ``sigma``, on a grid ``up`` times
        finer than the map's (each way).

        A band of rows at a time: each cell is computed exactly as a whole-grid pass would,
        but the float64 intermediates stay a few MB instead of several full grids (which the
        allocator would keep for the rest of the run). A table built for this map before (by
        another filter) is shared.
        """
        grid = self.world.obstacles()
        z_hit, z_rand = self._z_hit, self._z_rand
        key = (grid_key(grid), self.world.resolution, up, sigma, z_hit, z_rand)
        cached = _TABLES.get(key)
        if cached is not None:
            return cached
        distance = _signed_distance(self.world)
        rows, cols = grid.shape
        r = (np.arange(rows * up) + 0.5) / up - 0.5
        c = (np.arange(cols * up) + 0.5) / up - 0.5
        table = np.empty((r.size, c.size), dtype=np.float32)
        for lo in range(0, r.size, _FIELD_BAND):
            band = slice(lo, lo + _FIELD_BAND)
            fine = interpolate_linear(distance, *np.meshgrid(r[band], c, indexing="ij"))
            table[band] = np.log(z_hit * np.exp(-(fine**2) / (2 * sigma**2)) + z_rand)
        if len(_TABLES) >= 4:  # a map's fine and blurred tables, for two maps; the oldest goes
            del _TABLES[next(iter(_TABLES))]
        _TABLES[key] = table
        return table

    @property
    def _coarse_table(self) -> npt.NDArray[np.float32]:
        if self._coarse is None:
            self._coarse = self._log_field(SEARCH_SIGMA, 1)
        return self._coarse

    @classmethod
    def for_robot(cls, world: World, robot: RobotConfig, seed: int = 0) -> MonteCarloLocalization:
        """The filter for a robot's laser: its beams, mount and range from the description."""
        laser = robot.laser
        if laser is None:
            raise ValueError(f"robot {robot.name!r} has no laser to localize with")
        half = math.radians(laser.fov_deg) / 2
        fp = robot.footprint
        return cls(
            world,
            robot.estimation,
            np.linspace(-half, half, laser.beams),
            (laser.mount_forward, laser.mount_left),
            laser.range_max,
            seed=seed,
            room=max(0.0, min(fp.width / 2, fp.length / 2 - abs(fp.center_forward))),
        )

    # -- initialisation ----------------------------------------------------------------------

    def initialize(
        self, x: float, y: float, theta: float, std_xy: float = 0.1, std_theta: float = 0.05
    ) -> None:
        n = len(self.particles)
        self.particles[:, 0] = x + self.rng.normal(0, std_xy, n)
        self.particles[:, 1] = y + self.rng.normal(0, std_xy, n)
        self.particles[:, 2] = theta + self.rng.normal(0, std_theta, n)
        self.weights.fill(1.0 / n)
        self._moved_d = self._moved_a = math.inf
        self._pending = (0.0, 0.0, 0.0)

    def global_init(self) -> None:
        """Spread particles uniformly over free space (recovery from a wrong pose).

        Ten times the usual count (at most 20,000) and a flatter likelihood search the whole
        map; once the cloud has gathered in a few places (the sharp stage) it holds the
        configured count again.
        """
        n = self._search_size
        self.particles = self._uniform_poses(n)
        self.weights = np.full(n, 1.0 / n)
        self._logw = np.empty(n)
        self._phase = SearchPhase.SCREENING
        self._global_updates = 0
        self._poor_fits = 0
        self._verify = 0
        self._moved_d = self._moved_a = math.inf
        self._pending = (0.0, 0.0, 0.0)  # the new poses are drawn anywhere: no motion to add

    @property
    def _free(self) -> tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]:
        """The (rows, columns) of the cells a search draws poses in (found when the first
        search needs them; two flat arrays, which a draw indexes 1.6 times as fast as the
        rows of one two-column array)."""
        if self._free_cells is None:
            possible = _possible_cells(self.world, self._room)
            rows, cols = np.nonzero(possible)
            self._free_cells = (rows.astype(np.int32), cols.astype(np.int32))  # int32: fit
        return self._free_cells

    def _uniform_poses(self, n: int) -> npt.NDArray[np.float64]:
        rows, cols = self._free
        pick = self.rng.integers(0, len(rows), n)
        res = self.world.resolution
        poses = np.empty((n, 3))
        poses[:, 0] = self.world.origin[0] + (cols[pick] + self.rng.random(n)) * res
        poses[:, 1] = self.world.origin[1] + (rows[pick] + self.rng.random(n)) * res
        poses[:, 2] = self.rng.uniform(-math.pi, math.pi, n)
        return poses

    def _screen_candidates(self, bx: npt.NDArray[np.float64], by: npt.NDArray[np.float64]) -> None:
        """A search's first scan picks its particles from many uniform candidates.

        Twenty thousand poses leave most places of a hall with no particle within a few
        degrees of the truth, and a look-alike place that happens to be sampled better wins;
        scoring ten times as many once puts particles in every place that fits.
        """
        n = len(self.particles)
        candidates = self._uniform_poses(SEARCH_CANDIDATES * n)
        kept, logw = self._screened(candidates, bx, by)
        logw /= 10.0 * self.temperature
        w = np.exp(logw - logw.max())
        self.weights = w / w.sum()
        self.particles = candidates[kept]
        self._resample(n)

    def _screened(
        self,
        candidates: npt.NDArray[np.float64],
        bx: npt.NDArray[np.float64],
        by: npt.NDArray[np.float64],
    ) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]:
        """The uniform candidates worth scoring on the whole scan (their indices, in order),
        and those scores on the coarse field.

        Every candidate is first scored on :data:`SCREEN_BEAMS` beams spread over the scan,
        and only the best :data:`SCREEN_KEEP` of them on the rest: most uniform poses fit
        nothing, and a few beams tell so (2.3 times fewer lookups). From 20 random lab poses,
        every candidate within 20 cm and 4° of the robot was kept (63 of 63).

        The few beams are scored in the candidates' own order: sorting them by place costs a
        random gather and scatter per candidate, more than a dozen lookups each win back
        (200,000 candidates in the lab, 17.3 ms sorted, 10.9 ms not; sorted won only from 48
        beams on, and by at most a tenth on tables up to 32 MB).
        """
        beams = len(bx)
        if beams <= SCREEN_BEAMS:
            return np.arange(len(candidates)), self._score(candidates, bx, by, self._coarse_table)
        first = np.zeros(beams, dtype=bool)
        first[np.linspace(0, beams - 1, SCREEN_BEAMS).astype(np.int64)] = True
        part = self._score(candidates, bx[first], by[first], self._coarse_table)
        kept = _best(part, max(1, int(SCREEN_KEEP * len(candidates))))
        rest = self._score(
            candidates[kept], bx[~first], by[~first], self._coarse_table, scattered=True
        )
        return kept, part[kept] + rest

    def _score(
        self,
        poses: npt.NDArray[np.float64],
        bx: npt.NDArray[np.float64],
        by: npt.NDArray[np.float64],
        table: npt.NDArray[np.float32],
        out: npt.NDArray[np.float64] | None = None,
        scattered: bool = False,
    ) -> npt.NDArray[np.float64]:
        """Each pose's summed beam log-likelihood on ``table`` (into ``out`` when given).

        ``scattered``: the poses are spread over the whole map (uniform candidates), so they
        are scored sorted by heading and place (the same scores, sooner).
        """
        if out is None:
            out = np.empty(len(poses))
        ox, oy = self.world.origin
        res = self.world.resolution / (table.shape[1] // self._map_cols)  # a table cell's side
        outside = self._outside
        cores = numba.get_num_threads()
        split = len(poses) >= SPLIT_PARTICLES and cores >= 2
        if scattered:
            order = _scatter_order(poses, ox, oy, *self._scatter_places)
            if split:
                with _SPLIT_LOCK:
                    _log_weights_ordered_split(
                        poses, order, bx, by, table, ox, oy, res, outside, out, cores
                    )
            else:
                _log_weights_ordered(poses, order, bx, by, table, ox, oy, res, outside, out)
        elif split:
            # numba's default thread pool takes one parallel call at a time
            with _SPLIT_LOCK:
                _log_weights_split(poses, bx, by, table, ox, oy, res, outside, out, cores)
        else:
            _log_weights(poses, bx, by, table, ox, oy, res, outside, out)
        return out

    def _cells(self, poses: npt.NDArray[np.float64]) -> npt.NDArray[np.int64]:
        """Each pose's 1 m × 1 m cell of the map (poses off the map join the edge)."""
        size_x, size_y = self._metres
        ix = np.clip(np.floor(poses[:, 0] - self.world.origin[0]), 0, size_x - 1)
        iy = np.clip(np.floor(poses[:, 1] - self.world.origin[1]), 0, size_y - 1)
        cells: npt.NDArray[np.int64] = (iy * size_x + ix).astype(np.int64)
        return cells

    def _gathered_places(self) -> npt.NDArray[np.float64] | None:
        """The best particle of each place the cloud has gathered in (None if not yet).

        The coarse stage is done when :data:`GATHER_CELLS` 1 m cells hold
        :data:`PLACE_SHARE` of the weight.
        """
        cells = self._cells(self.particles)
        weight = np.bincount(cells, weights=self.weights)
        heaviest = np.argsort(weight)[-GATHER_CELLS:]
        heaviest = heaviest[weight[heaviest] > 0]
        if float(weight[heaviest].sum()) < PLACE_SHARE:
            return None
        best = [np.flatnonzero(cells == cell) for cell in heaviest]
        return np.array([self.particles[i[np.argmax(self._logw[i])]] for i in best])

    def _sharpen(
        self,
        seeds: npt.NDArray[np.float64],
        bx: npt.NDArray[np.float64],
        by: npt.NDArray[np.float64],
    ) -> None:
        """Start the sharp stage with every gathered place refined on this scan, in equal shares.

        The coarse field tells look-alike places apart slowly, the sharp one quickly, but only
        between places whose particles sit within centimetres of their best pose: a place
        that happened to be sampled sparsely would lose to a worse place sampled densely.

        The places are at most :data:`GATHER_CELLS` × :data:`RIVAL_PARTICLES` refined poses, so
        the stage holds the configured count, as tracking does: 20,000 particles would be ten
        copies of each, no more places (on the five real maps the 100 searches settled as
        they did with 20,000, with a tenth of the lookups).
        """
        groups, _ = self._refine(seeds, bx, by)
        self.particles = groups.reshape(-1, 3)
        self.weights = np.full(len(self.particles), 1.0 / len(self.particles))
        self._resample(self.config.mcl_particles)

    def _main_place(self) -> _Place:
        """The heaviest place in the cloud.

        The 1 m cell holding the most weight gives a centre; the place is every particle within
        :data:`PLACE_RADIUS` and :data:`PLACE_ANGLE` of it.
        """
        p, w = self.particles, self.weights
        cells = self._cells(self.particles)
        inside = cells == int(np.argmax(np.bincount(cells, weights=w)))
        cx, cy, ct = _mean_pose(p[inside], w[inside])
        members = (np.hypot(p[:, 0] - cx, p[:, 1] - cy) < PLACE_RADIUS) & (
            np.abs(wrap_angles(p[:, 2] - ct)) < PLACE_ANGLE
        )
        x, y, theta = _mean_pose(p[members], w[members])
        share = float(w[members].sum())
        spread = math.sqrt(
            float(np.dot(w[members], (p[members, 0] - x) ** 2 + (p[members, 1] - y) ** 2)) / share
        )
        return _Place(x, y, theta, share, spread, members)

    def _contest(
        self, bx: npt.NDArray[np.float64], by: npt.NDArray[np.float64], place: _Place
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """The main place refined on this scan, and the poses elsewhere that explain it as well.

        Standing still (or in a look-alike place) the search sees one view many times; if the
        true place lost its particles early, the cloud settles on the look-alike. So before
        the search ends, the best places among fresh uniform candidates and the cloud's own
        best particle are refined alike on the sharp field; the places that come within
        :data:`RIVAL_MARGIN` of the main place are returned as rivals (empty if none).
        """
        members = np.flatnonzero(place.members)
        own = self.particles[members[np.argmax(self._logw[members])]]
        candidates = self._uniform_poses(RIVAL_CANDIDATES * self._search_size)
        far = (np.hypot(candidates[:, 0] - place.x, candidates[:, 1] - place.y) > 0.5) | (
            np.abs(wrap_angles(candidates[:, 2] - place.theta)) > math.radians(30)
        )
        candidates = candidates[far]
        kept, coarse = self._screened(candidates, bx, by)
        candidates = candidates[kept]
        # the best candidate of each 1 m × 1 m × 45° cell, then the best cells
        octant = np.floor((candidates[:, 2] + math.pi) / (math.pi / 4)).astype(np.int64) % 8
        cells = self._cells(candidates) * 8 + octant
        order = np.argsort(-coarse)
        _, first = np.unique(cells[order], return_index=True)
        seeds = np.vstack([own, candidates[order[np.sort(first)][:RIVAL_PLACES]]])
        groups, fits = self._refine(seeds, bx, by)
        own_fit = max(fits[0], float(self._logw[members].max()))
        passed = fits[1:] > own_fit - RIVAL_MARGIN * len(bx)
        rivals: npt.NDArray[np.float64] = groups[1:][passed].reshape(-1, 3)
        return groups[0], rivals

    def _refine(
        self,
        seeds: npt.NDArray[np.float64],
        bx: npt.NDArray[np.float64],
        by: npt.NDArray[np.float64],
    ) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each seed pose refined on the sharp field by shrinking rounds of keep-the-best.

        Returns the refined poses, :data:`RIVAL_PARTICLES` per seed, and each seed's best score.
        """
        k = len(seeds)
        poses = np.repeat(seeds, RIVAL_PARTICLES, axis=0)
        keep = RIVAL_PARTICLES // 8
        for spread in RIVAL_ROUNDS:
            poses[:, :2] += self.rng.normal(0.0, spread, (len(poses), 2))
            poses[:, 2] += self.rng.normal(0.0, spread, len(poses))  # 1 rad per metre of spread
            score = self._score(poses, bx, by, self._table).reshape(k, RIVAL_PARTICLES)
            best = np.argsort(-score, axis=1)[:, :keep]
            groups = poses.reshape(k, RIVAL_PARTICLES, 3)
            chosen = np.take_along_axis(groups, best[:, :, None], axis=1)
            poses = np.repeat(chosen, RIVAL_PARTICLES // keep, axis=1).reshape(-1, 3)
        score = self._score(poses, bx, by, self._table).reshape(k, RIVAL_PARTICLES)
        return poses.reshape(k, RIVAL_PARTICLES, 3), score.max(axis=1)

    def _admit(self, rivals: npt.NDArray[np.float64]) -> None:
        """Hand a share of the cloud to rival places; the sharp field then decides."""
        n = len(self.particles)
        m = int(RIVAL_SHARE * n)
        self._resample(n)
        self.particles[self.rng.permutation(n)[:m]] = rivals[self.rng.integers(0, len(rivals), m)]
        self._global_updates = 0
        self.challenges += 1

    # -- filter ------------------------------------------------------------------------------

    def predict(self, dx: float, dy: float, dtheta: float) -> None:
        """Odometry increment in the robot frame at the start of the step.

        The increments are composed and the motion model is sampled once, with their sum,
        just before the next update weighs the particles (AMCL's way): between updates no
        measurement looks at the particles, and a robot standing still moves none of them.
        """
        if abs(dx) < 1e-9 and abs(dy) < 1e-9 and abs(dtheta) < 1e-9:
            return
        px, py, pth = self._pending
        c, s = math.cos(pth), math.sin(pth)
        self._pending = (px + c * dx - s * dy, py + s * dx + c * dy, wrap_angle(pth + dtheta))
        self._moved_d += math.hypot(dx, dy)
        self._moved_a += abs(dtheta)

    def _apply_motion(self) -> None:
        """Move the particles by the odometry since the last update (sample_motion_model)."""
        dx, dy, dtheta = self._pending
        self._pending = (0.0, 0.0, 0.0)
        trans = math.hypot(dx, dy)
        if trans < 1e-9 and abs(dtheta) < 1e-9:
            return
        rot1 = math.atan2(dy, dx) if trans > 1e-4 else 0.0
        if trans > 1e-4 and abs(wrap_angle(rot1)) > math.pi / 2:  # driving backwards
            rot1 = wrap_angle(rot1 + math.pi)
            trans = -trans
        rot2 = wrap_angle(dtheta - rot1)
        a1, a2, a3, a4 = self.alphas
        spread = (
            math.sqrt(a1 * rot1**2 + a2 * trans**2),
            math.sqrt(a3 * trans**2 + a4 * (rot1**2 + rot2**2)),
            math.sqrt(a1 * rot2**2 + a2 * trans**2),
        )
        if self._noise.shape != self.particles.shape:
            self._noise = np.empty_like(self.particles)
        noise = self.rng.standard_normal(out=self._noise)  # the draws of a fresh (n, 3) array
        _move(self.particles, noise, rot1, trans, rot2, spread)

    def update(self, ranges: npt.NDArray[np.float64], force: bool = False) -> bool:
        """Weight by the scan when moved enough, or when ``force``-d (a search standing still:
        at most :data:`SEARCH_STILL_UPDATES` times from one place); returns whether an update
        happened."""
        cfg = self.config
        moved = self._moved_d >= cfg.mcl_update_min_d or self._moved_a >= math.radians(
            cfg.mcl_update_min_a_deg
        )
        if not moved:
            # a search standing still sees one view again and again: after a few updates more
            # of it only narrows the cloud onto what it has already seen (and costs an update
            # of up to 20,000 particles each time), so a search that has not ended waits for motion
            if not force or (self.searching and self._still_updates >= SEARCH_STILL_UPDATES):
                return False
            self._still_updates += 1
        else:
            self._still_updates = 0
        valid = np.flatnonzero((ranges < self.range_max * 0.999) & (ranges > 0.02))
        if len(valid) == 0:
            return False
        pick = valid[np.linspace(0, len(valid) - 1, min(cfg.mcl_beams, len(valid))).astype(int)]
        r = ranges[pick]
        b = self.beam_angles[pick]
        bx = self.mount[0] + r * np.cos(b)
        by = self.mount[1] + r * np.sin(b)
        if self._phase is SearchPhase.SCREENING:  # the poses are drawn afresh, where they fit
            self._pending = (0.0, 0.0, 0.0)
            self._phase = SearchPhase.COARSE
            self._screen_candidates(bx, by)
            self._moved_d = self._moved_a = 0.0
            self.updates += 1
            return True
        self._apply_motion()
        coarse = self._phase is SearchPhase.COARSE
        self._score(
            self.particles, bx, by, self._coarse_table if coarse else self._table, self._logw
        )
        temperature = 10.0 * self.temperature if self.searching else self.temperature
        self.fit = _reweight(self._logw, self.weights, temperature) / len(r)
        self._moved_d = self._moved_a = 0.0
        self.updates += 1
        if coarse:
            places = self._gathered_places()
            if places is not None:
                self._phase = SearchPhase.SHARP
                self._sharpen(places, bx, by)
                return True
        elif self._phase is SearchPhase.SHARP or self._verify > 0:
            self._global_updates += 1
            self._verify -= int(self._phase is not SearchPhase.SHARP)
            place = self._main_place()
            collapsed = place.share >= PLACE_SHARE and place.spread < 0.1
            self._poor_fits = self._poor_fits + 1 if collapsed and self.fit < SEARCH_MIN_FIT else 0
            if self._poor_fits >= SEARCH_RESTART_AFTER:
                # settled on a place whose map does not match the scan (a look-alike corner
                # of the map fits for a while, then stops fitting): search afresh
                self.global_init()
                return True
            if (
                self._phase is SearchPhase.SHARP
                and self._global_updates >= SEARCH_FINE_UPDATES
                and collapsed
                and self._poor_fits == 0
            ):
                refined, rivals = self._contest(bx, by, place)
                if len(rivals):
                    self._admit(rivals)
                    return True
                # the search ends on its main place, refined on this scan; stragglers elsewhere
                # are dropped
                self._phase = SearchPhase.TRACKING
                self._verify = SEARCH_VERIFY_UPDATES
                self.particles = refined
                self.weights = np.full(len(refined), 1.0 / len(refined))
                self._resample(self.config.mcl_particles)
                return True
        else:
            self._poor_fits = self._poor_fits + 1 if self.fit < SEARCH_MIN_FIT else 0
            if self._poor_fits >= TRACKING_LOST_AFTER:
                self.global_init()
                return True
        if 1.0 / float(np.sum(self.weights**2)) < 0.5 * len(self.weights):
            self._resample()
        return True

    @property
    def phase(self) -> SearchPhase:
        """The stage of the global search, :attr:`SearchPhase.TRACKING` when none runs."""
        return self._phase

    @property
    def fits_poorly(self) -> bool:
        """Whether the last update's scan fitted the map poorly (a wrong pose, or clutter)."""
        return self.fit < SEARCH_MIN_FIT

    @property
    def searching(self) -> bool:
        """Whether a global search is still running (its estimate is not yet a pose)."""
        return self._phase is not SearchPhase.TRACKING

    def _resample(self, count: int | None = None) -> None:
        n = len(self.weights) if count is None else count
        indices = np.empty(n, dtype=np.int64)
        _systematic(self.weights, self.rng.random(), indices)
        self.particles = self.particles[indices]
        # roughening: copies of one particle spread a little, so the cloud keeps refining
        # instead of collapsing onto the few poses it happened to sample
        xy, theta = (
            (SEARCH_ROUGHEN_XY, SEARCH_ROUGHEN_THETA)
            if self.searching
            else (ROUGHEN_XY, ROUGHEN_THETA)
        )
        self.particles += self.rng.standard_normal((n, 3)) * np.array([xy, xy, theta])
        self.weights = np.full(n, 1.0 / n)
        if len(self._logw) != n:
            self._logw = np.empty(n)

    def estimate(self) -> PoseEstimate:
        w = self.weights
        x = float(np.dot(w, self.particles[:, 0]))
        y = float(np.dot(w, self.particles[:, 1]))
        s = float(np.dot(w, np.sin(self.particles[:, 2])))
        c = float(np.dot(w, np.cos(self.particles[:, 2])))
        theta = math.atan2(s, c)
        var_xy = float(np.dot(w, (self.particles[:, 0] - x) ** 2 + (self.particles[:, 1] - y) ** 2))
        resultant = min(1.0, math.hypot(s, c))
        std_theta = math.sqrt(max(0.0, -2.0 * math.log(max(resultant, 1e-12))))
        return PoseEstimate(x, y, theta, math.sqrt(var_xy), std_theta)
