"""Many robots of one description in one world, stepped together.

The vehicles' states are rows of one array, and advancing the fleet to a time is one compiled
call: every robot's physics steps and laser scans up to then, the same kernels the
single-robot vehicle and laser run. Robot i draws its noise from the same per-component
streams a :class:`~freelook.sim.Simulator` seeded with ``seeds[i]`` would (drawn ahead in
blocks, read in order), on the same virtual time line (physics from t = 0 every
``physics_period``, laser scans every 1/rate from one period on), so each robot of a fleet
moves and scans exactly as that robot alone would.

With ``workers`` > 1 that call runs on that many threads, each on its share of the robots;
the results do not depend on how many.

Each robot may differ from the description by its own error model draw (``truths``): its
physics, its laser's true mount and its bad returns, as its own simulator would run them; the
bad returns are drawn for the newest scan after each advance, as a single simulator read after
each advance draws them.

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

from freelook.config import PhysicalTruth, RobotConfig
from freelook.maps import World, clearance_of, unit_vectors
from freelook.sim.sensors import NormalsAhead, laser_params, laser_scan, spoil_returns
from freelook.sim.vehicle import StateColumn as Col
from freelook.sim.vehicle import Vehicle, draws_noise, step_vehicles

__all__ = ["Fleet"]

_US = 1_000_000
_X, _Y, _THETA = Col.X, Col.Y, Col.THETA  # module constants: the kernel below reads them


@numba.njit(cache=True, nogil=True)
def _advance(
    state: npt.NDArray[np.float64],
    robots: tuple[int, int],
    params: npt.NDArray[np.float64],
    grid: npt.NDArray[np.bool_],
    points: npt.NDArray[np.float64],
    motion_noise: npt.NDArray[np.float64],
    motion_at: npt.NDArray[np.int64],
    schedule: npt.NDArray[np.int64],
    dt: float,
    clearance: npt.NDArray[np.float32],
    world: tuple[float, float, float],
    lasers: npt.NDArray[np.float64],
    units: npt.NDArray[np.float64],
    beam_noise: npt.NDArray[np.float64],
    beam_at: npt.NDArray[np.int64],
    ranges: npt.NDArray[np.float64],
) -> None:
    """Robots ``robots[0]`` to ``robots[1]`` (exclusive) through ``schedule``: that many physics
    steps before each laser scan, the last entry's steps followed by none.

    A robot's physics and scans are those of :class:`~freelook.sim.vehicle.Vehicle` and
    :class:`~freelook.sim.sensors.Laser`: the same kernels on the same numbers (its own row
    of ``params``, of ``lasers`` and of ``units``), its standard normals read in order from its
    rows of ``motion_noise`` and ``beam_noise``, from ``motion_at[i]`` and ``beam_at[i]``
    (advanced here). ``ranges[i]`` ends as its last scan.
    """
    scans = schedule.shape[0] - 1
    for i in range(robots[0], robots[1]):
        row = state[i : i + 1]
        for event in range(scans + 1):
            steps = schedule[event]
            if steps > 0:
                at = motion_at[i]
                step_vehicles(
                    row, params[i], grid, clearance, points, motion_noise[i : i + 1, at:], steps, dt
                )
                if motion_noise.shape[1] > 0:
                    motion_at[i] = at + steps
            if event == scans:
                break
            pose = (row[0, _X], row[0, _Y], row[0, _THETA])
            laser = (lasers[i, 0], lasers[i, 1], lasers[i, 2], lasers[i, 3], lasers[i, 4])
            beam_at[i] = laser_scan(
                clearance, world, pose, laser, units[i], beam_noise[i], beam_at[i], ranges[i]
            )


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
        truths: Sequence[PhysicalTruth | None] | None = None,
    ) -> None:
        """``truths``: each robot's physical robot when it differs from ``config`` (an error
        model's draw; None: as described). ``workers`` > 1 steps the robots on that many
        threads (one core each at best); :meth:`close` (or a ``with`` block) stops them."""
        if not poses:
            raise ValueError("a fleet needs at least one robot")
        if not 0 < physics_period <= 0.005:
            raise ValueError(f"physics period must be in (0, 5 ms], got {physics_period}")
        seeds = list(range(len(poses))) if seeds is None else list(seeds)
        if len(seeds) != len(poses):
            raise ValueError(f"{len(poses)} poses but {len(seeds)} seeds")
        truths = [None] * len(poses) if truths is None else list(truths)
        if len(truths) != len(poses):
            raise ValueError(f"{len(poses)} poses but {len(truths)} physical robots")
        self.config = config
        self.world = world
        n = len(poses)
        # a Simulator's streams: 0 the vehicle, 1 the laser, 5 the bad returns
        streams = [np.random.SeedSequence(seed).spawn(6) for seed in seeds]
        # the vehicles check their start poses and give the kernel its geometry; from here on
        # their rows of one state array are what moves
        vehicles = [
            Vehicle(config, world, np.random.default_rng(s[0]), pose, truth)
            for s, pose, truth in zip(streams, poses, truths, strict=True)
        ]
        self.truths = truths
        self._params = np.vstack([v.params for v in vehicles])
        self._points = vehicles[0].points
        self._grid = world.obstacles()
        self._clearance = clearance_of(self._grid)
        self._world = (world.origin[0], world.origin[1], world.resolution)
        self.state = np.vstack([v.state_array for v in vehicles])
        self._physics_us = round(physics_period * _US)
        self.physics_period = physics_period
        self._now_us = 0
        self._next_physics_us = 0
        noisy = any(draws_noise(p) for p in self._params)
        self._motion_noise = NormalsAhead([v.rng for v in vehicles], noisy)
        laser = config.laser
        described = laser_params(laser) if laser is not None else (0.0, 0.0, 0.0, 0.0, 0.0)
        self._lasers = np.array([described] * n)
        for i, truth in enumerate(truths):
            if truth is not None:  # where the laser really sits
                self._lasers[i, 0] += truth.laser_forward
                self._lasers[i, 1] += truth.laser_left
        self._bad_returns = [
            np.random.default_rng(s[5]) if t is not None and laser is not None else None
            for s, t in zip(streams, truths, strict=True)
        ]
        laser_rngs = [np.random.default_rng(s[1]) for s in streams]
        self._beam_noise = NormalsAhead(laser_rngs, laser is not None and laser.noise_std > 0)
        self._laser_us = round(_US / laser.rate_hz) if laser is not None else 0
        self._next_laser_us = self._laser_us
        beams = laser.beams if laser is not None else 0
        half = math.radians(laser.fov_deg) / 2 if laser is not None else 0.0
        fan = np.linspace(-half, half, beams)
        self.angles = fan + laser.yaw if laser is not None and laser.yaw_deg else fan
        yaws = [t.laser_yaw if t is not None else 0.0 for t in truths]
        self._units = np.stack(
            [unit_vectors(self.angles + yaw if yaw else self.angles) for yaw in yaws]
        )
        #: The newest scan of every robot (row i: robot i), range_max where nothing was hit;
        #: written in place by each step (copy a row to keep it).
        self.ranges = np.full((n, beams), laser.range_max if laser is not None else 0.0)
        #: When :attr:`ranges` was scanned (s); None before the first scan.
        self.scan_stamp: float | None = None
        self.scans = 0
        # the robots split into contiguous shares, one per worker
        shares = np.array_split(np.arange(n), max(1, min(workers, n)))
        self._shares = [range(int(share[0]), int(share[-1]) + 1) for share in shares]
        self._pool = ThreadPoolExecutor(len(shares), "fleet") if len(shares) > 1 else None

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

    def _schedule(self, end: int) -> npt.NDArray[np.int64]:
        """Physics steps before each laser event up to ``end`` (µs), then after the last; the
        clocks move on to ``end``."""
        schedule = []
        while True:
            laser_due = self._next_laser_us if self._laser_us else end + 1
            horizon = min(laser_due, end)
            steps = 0
            if self._next_physics_us <= horizon:
                steps = (horizon - self._next_physics_us) // self._physics_us + 1
                self._next_physics_us += steps * self._physics_us
            schedule.append(steps)
            if laser_due > end:
                return np.array(schedule, dtype=np.int64)
            self.scan_stamp = laser_due / _US
            self._next_laser_us += self._laser_us

    def _advance(self, robots: range, schedule: npt.NDArray[np.int64]) -> None:
        """One share of the robots through ``schedule`` (the kernel releases the GIL, and so
        does drawing normals: shares run side by side)."""
        scans = len(schedule) - 1
        self._motion_noise.top_up(robots, int(schedule.sum()))
        self._beam_noise.top_up(robots, scans * len(self.angles))
        _advance(
            self.state,
            (robots.start, robots.stop),
            self._params,
            self._grid,
            self._points,
            self._motion_noise.rows,
            self._motion_noise.at,
            schedule,
            self.physics_period,
            self._clearance,
            self._world,
            self._lasers,
            self._units,
            self._beam_noise.rows,
            self._beam_noise.at,
            self.ranges,
        )

    def close(self) -> None:
        """Stop the worker threads (a fleet with one worker has none)."""
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    def __enter__(self) -> Fleet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run_until(self, t: float) -> None:
        """Advance to time ``t``: each robot's physics steps and laser scans in one compiled
        call per worker."""
        end = round(t * _US)
        schedule = self._schedule(end)
        scans = len(schedule) - 1
        self._motion_noise.fit(int(schedule.sum()))
        self._beam_noise.fit(scans * len(self.angles))
        if self._pool is None:
            self._advance(self._shares[0], schedule)
        else:
            list(self._pool.map(self._advance, self._shares, [schedule] * len(self._shares)))
        if scans and self.config.laser is not None:
            for i, rng in enumerate(self._bad_returns):
                truth = self.truths[i]
                if rng is not None and truth is not None:
                    spoil_returns(self.ranges[i], truth, self.config.laser, rng)
        self.scans += scans
        self._now_us = max(self._now_us, end)

    def run_for(self, seconds: float) -> None:
        self.run_until(self._now_us / _US + seconds)
