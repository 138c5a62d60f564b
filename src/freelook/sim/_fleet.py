"""Many robots of one description in one world, stepped together.

The vehicles' states are rows of one array, so every physics step between two laser events is
one compiled call for the whole fleet, and every laser event is one ray-cast call for all the
robots' beams. Robot i draws its noise from the same per-component streams a
:class:`~freelook.sim.Simulator` seeded with ``seeds[i]`` would, on the same virtual time line
(physics from t = 0 every ``physics_period``, laser scans every 1/rate from one period on), so
each robot of a fleet moves and scans exactly as that robot alone would.

With ``workers`` > 1 the lasers are cast on that many threads, each on its share of the
robots; the results do not depend on how many.

The robots do not see or touch each other: each drives and scans against the world's grid.
The fleet carries a drive and a laser; sonar, gyro and camera stay with the single-robot
simulator (the wheel distances an encoder would count are in :attr:`Fleet.wheel_distances`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import numba
import numpy as np
import numpy.typing as npt

from freelook.config import RobotConfig
from freelook.maps import World, cast_rays_from
from freelook.sim.vehicle import StateColumn as Col
from freelook.sim.vehicle import Vehicle, draws_noise, step_vehicles

__all__ = ["Fleet"]

_US = 1_000_000
_X, _Y, _THETA = Col.X, Col.Y, Col.THETA  # module constants: the kernel below reads them


@numba.njit(cache=True, nogil=True)
def _laser_rays(
    state: npt.NDArray[np.float64],
    mount_forward: float,
    mount_left: float,
    angles: npt.NDArray[np.float64],
    xs: npt.NDArray[np.float64],
    ys: npt.NDArray[np.float64],
    world_angles: npt.NDArray[np.float64],
) -> None:
    """Start point and world-frame angle of every beam of every robot (robot-major)."""
    beams = angles.shape[0]
    for i in range(state.shape[0]):
        x = state[i, _X]
        y = state[i, _Y]
        theta = state[i, _THETA]
        c = math.cos(theta)
        s = math.sin(theta)
        lx = x + c * mount_forward - s * mount_left
        ly = y + s * mount_forward + c * mount_left
        for k in range(beams):
            xs[i * beams + k] = lx
            ys[i * beams + k] = ly
            world_angles[i * beams + k] = angles[k] + theta


class Fleet:
    """N robots with one :class:`RobotConfig` in one :class:`World`, on one virtual clock."""

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        poses: Sequence[tuple[float, float, float]],
        seeds: Sequence[int] | None = None,
        physics_period: float = 0.005,
        workers: int = 1,
    ) -> None:
        """``workers`` > 1 casts the lasers on that many threads (one core each at best);
        :meth:`close` (or a ``with`` block) stops them."""
        if not poses:
            raise ValueError("a fleet needs at least one robot")
        if not 0 < physics_period <= 0.005:
            raise ValueError(f"physics period must be in (0, 5 ms], got {physics_period}")
        seeds = list(range(len(poses))) if seeds is None else list(seeds)
        if len(seeds) != len(poses):
            raise ValueError(f"{len(poses)} poses but {len(seeds)} seeds")
        self.config = config
        self.world = world
        n = len(poses)
        streams = [np.random.SeedSequence(seed).spawn(5) for seed in seeds]
        # the vehicles check their start poses and give the kernel its geometry; from here on
        # their rows of one state array are what moves
        vehicles = [
            Vehicle(config, world, np.random.default_rng(s[0]), pose)
            for s, pose in zip(streams, poses, strict=True)
        ]
        self._vehicle_rngs = [v.rng for v in vehicles]
        self._params = vehicles[0].params
        self._points = vehicles[0].points
        self._noisy = draws_noise(self._params)
        self._grid = world.obstacles()
        self.state = np.vstack([v.state_array for v in vehicles])
        self._physics_us = round(physics_period * _US)
        self.physics_period = physics_period
        self._now_us = 0
        self._next_physics_us = 0
        self._noise = np.zeros((n, 0))
        laser = config.laser
        self._laser_rngs = [np.random.default_rng(s[1]) for s in streams]
        self._laser_us = round(_US / laser.rate_hz) if laser is not None else 0
        self._next_laser_us = self._laser_us
        beams = laser.beams if laser is not None else 0
        half = math.radians(laser.fov_deg) / 2 if laser is not None else 0.0
        self.angles = np.linspace(-half, half, beams)
        self._xs = np.empty(n * beams)
        self._ys = np.empty(n * beams)
        self._world_angles = np.empty(n * beams)
        #: The newest scan of every robot (row i: robot i), range_max where nothing was hit.
        self.ranges = np.full((n, beams), laser.range_max if laser is not None else 0.0)
        #: When :attr:`ranges` was scanned (s); None before the first scan.
        self.scan_stamp: float | None = None
        self.scans = 0
        # the robots split into contiguous shares, one per ray-casting worker
        shares = np.array_split(np.arange(n), max(1, min(workers, n)))
        self._parts = [slice(s[0] * beams, (s[-1] + 1) * beams) for s in shares]
        self._pool = ThreadPoolExecutor(len(shares), "fleet-laser") if len(shares) > 1 else None

    def __len__(self) -> int:
        return int(self.state.shape[0])

    # -- commands ----------------------------------------------------------------------------

    def set_wheel_speeds(self, left: npt.ArrayLike, right: npt.ArrayLike) -> None:
        """Wheel (track) speed commands, m/s: one per robot, or one for all; clamped."""
        vmax = self.config.drive.max_wheel_speed
        self.state[:, Col.CMD_LEFT] = np.clip(left, -vmax, vmax)
        self.state[:, Col.CMD_RIGHT] = np.clip(right, -vmax, vmax)

    def set_robot_wheel_speeds(self, robot: int, left: float, right: float) -> None:
        """One robot's wheel (track) speed commands, m/s; clamped."""
        vmax = self.config.drive.max_wheel_speed
        self.state[robot, Col.CMD_LEFT] = min(vmax, max(-vmax, left))
        self.state[robot, Col.CMD_RIGHT] = min(vmax, max(-vmax, right))

    # -- state -------------------------------------------------------------------------------

    def now(self) -> float:
        return self._now_us / _US

    @property
    def poses(self) -> npt.NDArray[np.float64]:
        """(N, 3) ground-truth poses x, y, θ (a copy)."""
        return self.state[:, Col.X : Col.THETA + 1].copy()

    @property
    def wheel_distances(self) -> npt.NDArray[np.float64]:
        """(N, 2) distance each robot's left and right wheel surface travelled, m (a copy)."""
        return self.state[:, Col.LEFT_DISTANCE : Col.RIGHT_DISTANCE + 1].copy()

    @property
    def contacts(self) -> npt.NDArray[np.int64]:
        """Physics steps each robot ended against an obstacle."""
        return self.state[:, Col.CONTACTS].astype(np.int64)

    # -- time --------------------------------------------------------------------------------

    def _physics(self, steps: int) -> None:
        if self._noise.shape[1] < steps:
            self._noise = np.zeros((len(self), steps))
        if self._noisy:
            for i, rng in enumerate(self._vehicle_rngs):
                self._noise[i, :steps] = rng.standard_normal(steps)
        step_vehicles(
            self.state,
            self._params,
            self._grid,
            self._points,
            self._noise,
            steps,
            self.physics_period,
        )

    def _scan(self, now: float) -> None:
        laser = self.config.laser
        assert laser is not None
        _laser_rays(
            self.state,
            laser.mount_forward,
            laser.mount_left,
            self.angles,
            self._xs,
            self._ys,
            self._world_angles,
        )
        ranges = self._cast(laser.range_max).reshape(len(self), -1)
        if laser.noise_std > 0:
            # each robot's noise from its own stream, in beam order, added in one operation
            hits = ranges < laser.range_max
            counts = np.count_nonzero(hits, axis=1).tolist()
            noise = [
                rng.normal(0.0, laser.noise_std, count)
                for rng, count in zip(self._laser_rngs, counts, strict=True)
            ]
            ranges[hits] += np.concatenate(noise)
        np.clip(ranges, laser.range_min, laser.range_max, out=ranges)
        self.ranges = ranges
        self.scan_stamp = now
        self.scans += 1

    def _cast(self, range_max: float) -> npt.NDArray[np.float64]:
        """Every beam of every robot: one ray-cast call, or one per worker on its share of
        the robots (the kernel releases the GIL; each ray's result is the same either way)."""
        world = self.world

        def cast(part: slice) -> npt.NDArray[np.float64]:
            return cast_rays_from(
                self._grid,
                world.origin,
                world.resolution,
                self._xs[part],
                self._ys[part],
                self._world_angles[part],
                range_max,
            )

        if self._pool is None:
            return cast(slice(None))
        return np.concatenate(list(self._pool.map(cast, self._parts)))

    def close(self) -> None:
        """Stop the ray-casting workers (a fleet with one worker has none)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_until(self, t: float) -> None:
        """Advance to time ``t``: all physics steps up to each laser event in one call."""
        end = round(t * _US)
        while True:
            laser_due = self._next_laser_us if self._laser_us else end + 1
            horizon = min(laser_due, end)
            if self._next_physics_us <= horizon:
                steps = (horizon - self._next_physics_us) // self._physics_us + 1
                self._physics(steps)
                self._next_physics_us += steps * self._physics_us
            if laser_due > end:
                break
            self._scan(laser_due / _US)
            self._next_laser_us += self._laser_us
        self._now_us = max(self._now_us, end)

    def run_for(self, seconds: float) -> None:
        self.run_until(self._now_us / _US + seconds)
