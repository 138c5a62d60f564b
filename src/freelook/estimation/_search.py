"""Monte Carlo localization's global search: recovery from a wrong pose, in stages.

The first scan picks the cloud from many uniform candidates; a blurred field gathers it into a
few places; each place is refined on the scan and the sharp field decides between them; before
the search ends, the best other places of the map are refined alike, and any that fit about as
well keep it going. :class:`SearchPhase` names these stages.
"""

from __future__ import annotations

import math
from enum import Enum
from typing import ClassVar, NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import EstimationConfig
from freelook.estimation._field import LikelihoodField
from freelook.geometry import wrap_angles
from freelook.maps import FreeSpace, World, grid_key

__all__ = ["SEARCH_STILL_UPDATES", "GlobalSearch", "SearchPhase"]

_Array = npt.NDArray[np.float64]
_Cells = tuple[npt.NDArray[np.int32], npt.NDArray[np.int32]]

SEARCH_CANDIDATES = 10  # candidates per particle scored on a search's first scan
SCREEN_BEAMS = 12  # beams, spread over the scan, every uniform candidate is first scored on
SCREEN_KEEP = 0.3  # share of the candidates, the best on those beams, scored on all of them
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


class _Place(NamedTuple):
    """A place the cloud has gathered in: its mean pose, weight, spread and particles."""

    x: float
    y: float
    theta: float
    share: float  # of the cloud's weight
    spread: float  # m, standard deviation of the position
    members: npt.NDArray[np.bool_]


def best(scores: _Array, count: int) -> npt.NDArray[np.int64]:
    """The indices of the ``count`` best ``scores``, in order: those of
    ``np.argpartition(-scores, count - 1)[:count]``, sorted. When no other score ties the
    ``count``-th best, they are simply all the scores at least as good as it; a tie there is
    left to ``argpartition``, which decides which of the tied scores it keeps."""
    worse = -scores
    kth = np.partition(worse, count - 1)[count - 1]
    kept = np.flatnonzero(worse <= kth)
    if len(kept) == count:
        return kept
    ranked: npt.NDArray[np.int64] = np.sort(np.argpartition(worse, count - 1)[:count])
    return ranked


def mean_pose(poses: _Array, weights: _Array) -> tuple[float, float, float]:
    """Weighted mean pose (circular mean heading); ``weights`` need not sum to one."""
    total = float(weights.sum())
    x = float(np.dot(weights, poses[:, 0])) / total
    y = float(np.dot(weights, poses[:, 1])) / total
    s = float(np.dot(weights, np.sin(poses[:, 2])))
    c = float(np.dot(weights, np.cos(poses[:, 2])))
    return x, y, math.atan2(s, c)


class GlobalSearch:
    """The global search of a particle filter (:class:`MonteCarloLocalization` is one): its
    stages, over the filter's cloud, on the filter's likelihood field."""

    #: cells a robot can stand on, by (map content, room), the oldest first
    _possible: ClassVar[dict[tuple[object, ...], npt.NDArray[np.bool_]]] = {}

    world: World
    config: EstimationConfig
    field: LikelihoodField
    rng: np.random.Generator
    temperature: float
    particles: _Array
    weights: _Array
    fit: float
    _logw: _Array
    _moved_d: float
    _moved_a: float
    _pending: tuple[float, float, float]

    def _start_searching(self, world: World, room: float, particles: int) -> None:
        """The search's own state, none running: ``room`` is how far the robot's reference
        point stays from any obstacle (poses are drawn only where that much room is)."""
        self._room = room
        self._free_cells: _Cells | None = None  # where a search draws poses, found when needed
        rows, cols = world.obstacles().shape
        # the map in whole metres (each way), for grouping particles into places
        self._metres = (
            math.ceil(cols * world.resolution - 1e-9),
            math.ceil(rows * world.resolution - 1e-9),
        )
        self._search_size = min(20_000, 10 * particles)  # a search's particles, before it gathers
        self._phase = SearchPhase.TRACKING
        self._global_updates = 0
        self._still_updates = 0  # forced updates of a search since the robot last moved
        self._poor_fits = 0
        self._verify = 0
        self.challenges = 0  # rival places that kept a search going

    def _resample(self, count: int | None = None) -> None:
        raise NotImplementedError  # the filter's

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

    def _follow(self, bx: _Array, by: _Array, coarse: bool) -> bool:
        """After a scan has weighed the cloud: the search's next step (or, tracking, a search
        when the scans keep fitting poorly). True when it reshaped the cloud."""
        if coarse:
            places = self._gathered_places()
            if places is None:
                return False
            self._phase = SearchPhase.SHARP
            self._sharpen(places, bx, by)
            return True
        if not (self._phase is SearchPhase.SHARP or self._verify > 0):
            self._poor_fits = self._poor_fits + 1 if self.fit < SEARCH_MIN_FIT else 0
            if self._poor_fits >= TRACKING_LOST_AFTER:
                self.global_init()
                return True
            return False
        self._global_updates += 1
        self._verify -= int(self._phase is not SearchPhase.SHARP)
        place = self._main_place()
        collapsed = place.share >= PLACE_SHARE and place.spread < 0.1
        self._poor_fits = self._poor_fits + 1 if collapsed and self.fit < SEARCH_MIN_FIT else 0
        if self._poor_fits >= SEARCH_RESTART_AFTER:
            # settled on a place whose map does not match the scan (a look-alike corner of the
            # map fits for a while, then stops fitting): search afresh
            self.global_init()
            return True
        if not (
            self._phase is SearchPhase.SHARP
            and self._global_updates >= SEARCH_FINE_UPDATES
            and collapsed
            and self._poor_fits == 0
        ):
            return False
        refined, rivals = self._contest(bx, by, place)
        if len(rivals):
            self._admit(rivals)
            return True
        # the search ends on its main place, refined on this scan; stragglers elsewhere go
        self._phase = SearchPhase.TRACKING
        self._verify = SEARCH_VERIFY_UPDATES
        self.particles = refined
        self.weights = np.full(len(refined), 1.0 / len(refined))
        self._resample(self.config.mcl_particles)
        return True

    def _free(self) -> _Cells:
        """The (rows, columns) of the cells a search draws poses in: known free, ``room`` from
        any obstacle, inside the building (an ARIA map's grid also covers the ground around
        it); every free cell if none qualifies."""
        if self._free_cells is None:
            world, room = self.world, self._room
            grid = world.obstacles()
            key = (grid_key(grid), grid_key(world.known_free()), room)
            possible = self._possible.get(key)
            if possible is None:
                possible = FreeSpace(world).mask(room) if room > 0 else world.known_free()
                if not possible.any():
                    possible = ~grid
                if len(self._possible) >= 8:  # a few maps at a time; the oldest goes
                    del self._possible[next(iter(self._possible))]
                self._possible[key] = possible
            rows, cols = np.nonzero(possible)
            self._free_cells = (rows.astype(np.int32), cols.astype(np.int32))
        return self._free_cells

    def _uniform_poses(self, n: int) -> _Array:
        rows, cols = self._free()
        pick = self.rng.integers(0, len(rows), n)
        res = self.world.resolution
        poses = np.empty((n, 3))
        poses[:, 0] = self.world.origin[0] + (cols[pick] + self.rng.random(n)) * res
        poses[:, 1] = self.world.origin[1] + (rows[pick] + self.rng.random(n)) * res
        poses[:, 2] = self.rng.uniform(-math.pi, math.pi, n)
        return poses

    def _screen_candidates(self, bx: _Array, by: _Array) -> None:
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
        self, candidates: _Array, bx: _Array, by: _Array
    ) -> tuple[npt.NDArray[np.int64], _Array]:
        """The uniform candidates worth scoring on the whole scan (their indices, in order),
        and those scores on the coarse field.

        Every candidate is first scored on :data:`SCREEN_BEAMS` beams spread over the scan,
        and only the best :data:`SCREEN_KEEP` of them on the rest: most uniform poses fit
        nothing, and a few beams tell so. From 20 random lab poses, every candidate within
        20 cm and 4° of the robot was kept (63 of 63). The few beams are scored in the
        candidates' own order: for a dozen lookups each, sorting them by place costs more
        than it wins back.
        """
        field, table = self.field, self.field.coarse
        beams = len(bx)
        if beams <= SCREEN_BEAMS:
            return np.arange(len(candidates)), field.score(candidates, bx, by, table)
        first = np.zeros(beams, dtype=bool)
        first[np.linspace(0, beams - 1, SCREEN_BEAMS).astype(np.int64)] = True
        part = field.score(candidates, bx[first], by[first], table)
        kept = best(part, max(1, int(SCREEN_KEEP * len(candidates))))
        rest = field.score(candidates[kept], bx[~first], by[~first], table, scattered=True)
        return kept, part[kept] + rest

    def _cells(self, poses: _Array) -> npt.NDArray[np.int64]:
        """Each pose's 1 m × 1 m cell of the map (poses off the map join the edge)."""
        size_x, size_y = self._metres
        ix = np.clip(np.floor(poses[:, 0] - self.world.origin[0]), 0, size_x - 1)
        iy = np.clip(np.floor(poses[:, 1] - self.world.origin[1]), 0, size_y - 1)
        cells: npt.NDArray[np.int64] = (iy * size_x + ix).astype(np.int64)
        return cells

    def _gathered_places(self) -> _Array | None:
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
        chosen = [np.flatnonzero(cells == cell) for cell in heaviest]
        return np.array([self.particles[i[np.argmax(self._logw[i])]] for i in chosen])

    def _sharpen(self, seeds: _Array, bx: _Array, by: _Array) -> None:
        """Start the sharp stage with every gathered place refined on this scan, in equal shares.

        The coarse field tells look-alike places apart slowly, the sharp one quickly, but only
        between places whose particles sit within centimetres of their best pose: a place
        that happened to be sampled sparsely would lose to a worse place sampled densely.
        The stage holds the configured count, as tracking does: ten copies of each refined
        pose would be no more places.
        """
        groups, _ = self._refine(seeds, bx, by)
        self.particles = groups.reshape(-1, 3)
        self.weights = np.full(len(self.particles), 1.0 / len(self.particles))
        self._resample(self.config.mcl_particles)

    def _main_place(self) -> _Place:
        """The heaviest place in the cloud: every particle within :data:`PLACE_RADIUS` and
        :data:`PLACE_ANGLE` of the centre of the 1 m cell holding the most weight."""
        p, w = self.particles, self.weights
        cells = self._cells(self.particles)
        inside = cells == int(np.argmax(np.bincount(cells, weights=w)))
        cx, cy, ct = mean_pose(p[inside], w[inside])
        members = (np.hypot(p[:, 0] - cx, p[:, 1] - cy) < PLACE_RADIUS) & (
            np.abs(wrap_angles(p[:, 2] - ct)) < PLACE_ANGLE
        )
        x, y, theta = mean_pose(p[members], w[members])
        share = float(w[members].sum())
        spread = math.sqrt(
            float(np.dot(w[members], (p[members, 0] - x) ** 2 + (p[members, 1] - y) ** 2)) / share
        )
        return _Place(x, y, theta, share, spread, members)

    def _contest(self, bx: _Array, by: _Array, place: _Place) -> tuple[_Array, _Array]:
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
        rivals: _Array = groups[1:][passed].reshape(-1, 3)
        return groups[0], rivals

    def _refine(self, seeds: _Array, bx: _Array, by: _Array) -> tuple[_Array, _Array]:
        """Each seed pose refined on the sharp field by shrinking rounds of keep-the-best.

        Returns the refined poses, :data:`RIVAL_PARTICLES` per seed, and each seed's best score.
        """
        k = len(seeds)
        poses = np.repeat(seeds, RIVAL_PARTICLES, axis=0)
        keep = RIVAL_PARTICLES // 8
        sharp = self.field.sharp
        for spread in RIVAL_ROUNDS:
            poses[:, :2] += self.rng.normal(0.0, spread, (len(poses), 2))
            poses[:, 2] += self.rng.normal(0.0, spread, len(poses))  # 1 rad per metre of spread
            score = self.field.score(poses, bx, by, sharp).reshape(k, RIVAL_PARTICLES)
            chosen = np.argsort(-score, axis=1)[:, :keep]
            groups = poses.reshape(k, RIVAL_PARTICLES, 3)
            kept = np.take_along_axis(groups, chosen[:, :, None], axis=1)
            poses = np.repeat(kept, RIVAL_PARTICLES // keep, axis=1).reshape(-1, 3)
        score = self.field.score(poses, bx, by, sharp).reshape(k, RIVAL_PARTICLES)
        return poses.reshape(k, RIVAL_PARTICLES, 3), score.max(axis=1)

    def _admit(self, rivals: _Array) -> None:
        """Hand a share of the cloud to rival places; the sharp field then decides."""
        n = len(self.particles)
        m = int(RIVAL_SHARE * n)
        self._resample(n)
        self.particles[self.rng.permutation(n)[:m]] = rivals[self.rng.integers(0, len(rivals), m)]
        self._global_updates = 0
        self.challenges += 1
