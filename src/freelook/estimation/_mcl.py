"""Monte Carlo localization with a likelihood-field laser model (Thrun et al., AMCL-style).

The map's likelihood field is tabulated once (:class:`LikelihoodField`), so a sensor update is
a lookup per particle and beam. Updates are motion-triggered (like AMCL's update_min_d /
update_min_a), and so is the motion model: odometry steps are composed between updates and
sampled once, when the next scan is weighed. Low-variance resampling runs when the effective
sample size drops. :meth:`~GlobalSearch.global_init` recovers from a wrong pose
(:mod:`freelook.estimation._search`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.config import EstimationConfig, RobotConfig
from freelook.estimation._field import LikelihoodField
from freelook.estimation._kernels import compile_kernels, move, reweight, systematic
from freelook.estimation._search import SEARCH_STILL_UPDATES, GlobalSearch, SearchPhase
from freelook.geometry import wrap_angle
from freelook.maps import World

__all__ = ["MonteCarloLocalization", "PoseEstimate", "SearchPhase"]

_Array = npt.NDArray[np.float64]

ROUGHEN_XY = 0.003  # m
ROUGHEN_THETA = math.radians(0.1)
# while searching, each resampling spreads the copies wider, so a cloud that settled near (not
# on) the true pose keeps climbing the likelihood instead of starving around its first guess
SEARCH_ROUGHEN_XY = 0.03  # m
SEARCH_ROUGHEN_THETA = math.radians(1.0)


@dataclass(frozen=True, slots=True)
class PoseEstimate:
    x: float
    y: float
    theta: float
    std_xy: float
    std_theta: float


class MonteCarloLocalization(GlobalSearch):
    """Particle filter on a world's map; poses in the map frame."""

    def __init__(
        self,
        world: World,
        config: EstimationConfig,
        beam_angles: _Array,
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
        compile_kernels()
        self.rng = np.random.default_rng(seed)
        self.beam_angles = np.asarray(beam_angles, dtype=np.float64)
        self.mount = laser_mount
        self.range_max = range_max
        self.temperature = temperature
        self.alphas = alphas
        self.field = LikelihoodField(world, range_max, sigma_hit, z_hit)
        n = config.mcl_particles
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
        self._start_searching(world, room, n)

    @classmethod
    def for_robot(cls, world: World, robot: RobotConfig, seed: int = 0) -> MonteCarloLocalization:
        """The filter for a robot's laser: its beams, mount and range from the description."""
        laser = robot.laser
        if laser is None:
            raise ValueError(f"robot {robot.name!r} has no laser to localize with")
        half = math.radians(laser.fov_deg) / 2
        fp = robot.footprint
        fan = np.linspace(-half, half, laser.beams)
        # the sideways skid as the robot's drive has it (a skid-steer's default if not given)
        estimation = robot.estimation.model_copy(
            update={"mcl_lateral_noise": robot.lateral_skid_noise}
        )
        return cls(
            world,
            estimation,
            fan + laser.yaw if laser.yaw_deg else fan,
            (laser.mount_forward, laser.mount_left),
            laser.range_max,
            seed=seed,
            room=max(0.0, min(fp.width / 2, fp.length / 2 - abs(fp.center_forward))),
        )

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
        move(self.particles, noise, rot1, trans, rot2, spread)
        lateral = (self.config.mcl_lateral_noise or 0.0) * abs(dtheta)
        if lateral > 0.0:
            # a skid-steer's body slides sideways as it turns, which rotate–translate–rotate
            # cannot express: blur each particle across its mean heading over the step
            side = self.rng.standard_normal(len(self.particles)) * lateral
            mid = self.particles[:, 2] - 0.5 * dtheta
            self.particles[:, 0] -= side * np.sin(mid)
            self.particles[:, 1] += side * np.cos(mid)

    def update(
        self,
        ranges: _Array,
        force: bool = False,
        beams: tuple[_Array, _Array, _Array] | None = None,
    ) -> bool:
        """Weight by the scan when moved enough, or when ``force``-d (a search standing still:
        at most :data:`SEARCH_STILL_UPDATES` times from one place); returns whether an update
        happened. ``beams``: each range's bearing and origin (x, y) in the robot frame, as
        the scan says (a ROS scan's own layout, or several lasers'); None: the description's
        fan (:attr:`beam_angles` from :attr:`mount`)."""
        cfg = self.config
        moved = self._moved_d >= cfg.mcl_update_min_d or self._moved_a >= math.radians(
            cfg.mcl_update_min_a_deg
        )
        if not moved:
            # a search standing still sees one view again and again: after a few updates more
            # of it only narrows the cloud onto what it has already seen, so a search that has
            # not ended waits for motion
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
        if beams is None:
            b = self.beam_angles[pick]
            bx = self.mount[0] + r * np.cos(b)
            by = self.mount[1] + r * np.sin(b)
        else:
            b = beams[0][pick]
            bx = beams[1][pick] + r * np.cos(b)
            by = beams[2][pick] + r * np.sin(b)
        if self._phase is SearchPhase.SCREENING:  # the poses are drawn afresh, where they fit
            self._pending = (0.0, 0.0, 0.0)
            self._phase = SearchPhase.COARSE
            self._screen_candidates(bx, by)
            self._moved_d = self._moved_a = 0.0
            self.updates += 1
            return True
        self._apply_motion()
        coarse = self._phase is SearchPhase.COARSE
        table = self.field.coarse if coarse else self.field.sharp
        self.field.score(self.particles, bx, by, table, self._logw)
        temperature = 10.0 * self.temperature if self.searching else self.temperature
        self.fit = reweight(self._logw, self.weights, temperature) / len(r)
        self._moved_d = self._moved_a = 0.0
        self.updates += 1
        if self._follow(bx, by, coarse):
            return True
        if 1.0 / float(np.sum(self.weights**2)) < 0.5 * len(self.weights):
            self._resample()
        return True

    def _resample(self, count: int | None = None) -> None:
        n = len(self.weights) if count is None else count
        indices = np.empty(n, dtype=np.int64)
        systematic(self.weights, self.rng.random(), indices)
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
