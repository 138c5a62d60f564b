"""Localization scenarios on any world: tracking a tour from a known start, and the global
search ("find") from a wrong belief, at random free places, while the robot drives a little.

In the lab the robot drives the lab's tour (the figures in ``docs/results.md`` come from it);
on any other map it wanders slowly through free space, steered by an operator who watches it
(the simulated laser, the truth), keeping off walls. Each trial returns plain numbers.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from freelook.config import RobotConfig, load_error_model, load_robot
from freelook.estimation import MonteCarloLocalization
from freelook.experiments._faults import simulated_robot
from freelook.geometry import wrap_angle
from freelook.hardware.sim import SimulatedRobot
from freelook.link import VelocityCommand
from freelook.maps import FreeSpace, World, load_world

__all__ = [
    "LAB_TOUR",
    "MapTimings",
    "TourLog",
    "localization_trial",
    "map_timings",
    "relocalization_trial",
    "settle_time",
]

# a tour of the lab's left hall, clear of the crate, the box and the pillar
LAB_TOUR = ((3.0, 3.0), (9.5, 3.2), (9.5, 7.0), (7.0, 10.5), (1.2, 10.5), (1.0, 6.5))
#: Room around the robot's swing circle at a random start, m.
START_MARGIN = 0.3
WANDER_SPEED = 0.3  # m/s: "slow driving"

_WORLDS: dict[str, World] = {}


def _world(name: str) -> World:
    if name not in _WORLDS:
        _WORLDS[name] = load_world(name)
    return _WORLDS[name]


@dataclass
class TourLog:
    times: list[float]  # s since the drive began
    errors: list[float]  # m, robot's pose against the truth
    heading_errors: list[float]  # degrees
    trusted: list[bool]  # whether the robot trusted its pose (no global search running)
    distance: float = 0.0  # m driven (true)
    waypoints: int = 0  # waypoints reached (the lab tour)


class _Tour:
    """The lab tour from waypoint ``first``, steered by the true pose."""

    def __init__(self, first: int) -> None:
        self.target = first
        self.reached = 0

    def command(self, robot: SimulatedRobot) -> VelocityCommand:
        truth = robot.sim.ground_truth
        waypoint = LAB_TOUR[self.target % len(LAB_TOUR)]
        if math.hypot(waypoint[0] - truth.x, waypoint[1] - truth.y) < 0.4:
            self.target += 1
            self.reached += 1
            waypoint = LAB_TOUR[self.target % len(LAB_TOUR)]
        bearing = wrap_angle(math.atan2(waypoint[1] - truth.y, waypoint[0] - truth.x) - truth.theta)
        speed = 0.4 * max(0.0, math.cos(bearing))
        return VelocityCommand(speed, float(np.clip(1.5 * bearing, -0.6, 0.6)))


class _Wander:
    """Slow driving through free space: ahead while the way is clear, bending toward open
    room; turning on the spot (one way until clear) in front of a wall, or where the way
    leads off the building's floor (out through a gap in an ARIA map's walls)."""

    def __init__(
        self, rng: np.random.Generator, world: World, floor: npt.NDArray[np.bool_]
    ) -> None:
        self.rng = rng
        self.world = world
        self.floor = floor
        self.turn = 0.0
        self.bias = float(rng.uniform(-0.15, 0.15))
        self.reached = 0

    def command(self, robot: SimulatedRobot) -> VelocityCommand:
        frame = robot.sim.latest_laser
        laser = robot.sim.laser
        if frame is None or laser is None:
            return VelocityCommand(0.0, 0.0)
        angles, ranges = laser.angles, frame.ranges
        front = float(ranges[np.abs(angles) < math.radians(35)].min())
        left = float(np.mean(np.minimum(ranges[angles > math.radians(20)], 4.0)))
        right = float(np.mean(np.minimum(ranges[angles < -math.radians(20)], 4.0)))
        truth = robot.sim.ground_truth
        on_floor = all(
            self._on_floor(truth.x + d * math.cos(truth.theta), truth.y + d * math.sin(truth.theta))
            for d in (0.5, 1.0)
        )
        if on_floor and front > 1.0 and (self.turn == 0.0 or front > 1.6):
            self.turn = 0.0
            omega = float(np.clip(0.3 * (left - right) + self.bias, -0.4, 0.4))
            return VelocityCommand(WANDER_SPEED, omega)
        if self.turn == 0.0:
            self.turn = 0.6 if left >= right else -0.6
            self.bias = float(self.rng.uniform(-0.15, 0.15))
        return VelocityCommand(0.0, self.turn)

    def _on_floor(self, x: float, y: float) -> bool:
        i, j = self.world.cell_of(x, y)
        rows, cols = self.world.shape
        return 0 <= i < rows and 0 <= j < cols and bool(self.floor[i, j])


def _drive(
    robot: SimulatedRobot, driver: _Tour | _Wander, seconds: float, sample: float = 0.5
) -> TourLog:
    """Drive for ``seconds``, logging the robot's own pose error every ``sample`` seconds."""
    period = robot.config.link.operator_tx_spacing
    log = TourLog([], [], [], [])
    start = robot.now()
    next_sample = sample
    last = robot.sim.ground_truth
    while robot.now() - start < seconds:
        robot.send(driver.command(robot))
        robot.run_for(period)
        truth = robot.sim.ground_truth
        log.distance += math.hypot(truth.x - last.x, truth.y - last.y)
        last = truth
        if robot.now() - start >= next_sample:
            next_sample += sample
            pose = robot.core.estimator.pose
            log.times.append(robot.now() - start)
            log.errors.append(math.hypot(truth.x - pose[0], truth.y - pose[1]))
            log.heading_errors.append(abs(math.degrees(wrap_angle(truth.theta - pose[2]))))
            log.trusted.append(robot.core.estimator.pose_trusted)
    log.waypoints = driver.reached
    return log


def settle_time(log: TourLog, within: float = 0.05, degrees: float = 2.0) -> float | None:
    """The driving time after which the pose stays within ``within`` m and ``degrees`` for
    the rest of the run (None if it does not)."""
    settled: float | None = None
    for t, e, h in zip(log.times, log.errors, log.heading_errors, strict=True):
        if e >= within or h >= degrees:
            settled = None
        elif settled is None:
            settled = t
    return settled


def localization_trial(seed: int, duration: float = 180.0) -> TourLog:
    """Monte Carlo localization from a known start (placed by hand: the error model's placing
    error off), driving the lab tour on the Pioneer's error model."""
    config = load_robot("pioneer3dx")
    truth = load_error_model(config.name).draw(seed)
    pose = (*LAB_TOUR[0], 0.0)
    robot = simulated_robot(
        config, _world("lab"), seed=seed, pose=pose, believed_pose=truth.believed(pose), truth=truth
    )
    return _drive(robot, _Tour(1), duration)


def relocalization_trial(
    seed: int,
    duration: float = 20.0,
    start: tuple[float, float, float] | None = None,
    world: str = "lab",
) -> tuple[float | None, TourLog]:
    """From a wrong believed pose, the global search ("find"), then driving a little.

    In the lab the true start is a random point of the tour (or ``start``, on the tour's
    first leg) and the robot drives the tour; elsewhere it is a random free place inside the
    building where the robot fits with room to spare (or ``start``), and the robot wanders.
    The believed pose is random anywhere free. Returns :func:`settle_time` and the log.
    """
    config = load_robot("pioneer3dx")
    the_world = _world(world)
    rng = np.random.default_rng(seed)
    if world == "lab":
        first = 1 if start is not None else int(rng.integers(len(LAB_TOUR)))
        a, b = LAB_TOUR[first - 1], LAB_TOUR[first]
        share = float(rng.uniform(0.2, 0.8))
        pose = start or (
            a[0] + share * (b[0] - a[0]),
            a[1] + share * (b[1] - a[1]),
            math.atan2(b[1] - a[1], b[0] - a[0]) + float(rng.normal(0.0, 0.3)),
        )
        believed = (
            float(rng.uniform(1.0, 17.0)),
            float(rng.uniform(1.0, 12.5)),
            float(rng.uniform(-math.pi, math.pi)),
        )
        driver: _Tour | _Wander = _Tour(first)
    else:
        pose, believed = _random_poses(the_world, config, rng, start)
        floor = FreeSpace(the_world).mask(config.footprint.swing_radius)
        driver = _Wander(rng, the_world, floor)
    robot = simulated_robot(
        config,
        the_world,
        seed=seed,
        pose=pose,
        believed_pose=believed,
        truth=load_error_model(config.name).draw(seed),
    )
    robot.core.estimator.global_localization()
    log = _drive(robot, driver, duration)
    return settle_time(log), log


def _random_poses(
    world: World,
    config: RobotConfig,
    rng: np.random.Generator,
    start: tuple[float, float, float] | None,
) -> tuple[tuple[float, float, float], tuple[float, float, float]]:
    """(a true start, a wrong belief): random free places inside, random headings."""
    space = FreeSpace(world)
    radius = config.footprint.swing_radius + START_MARGIN
    (x, y), (bx, by) = space.sample(rng, radius, 2)
    pose = start or (x, y, float(rng.uniform(-math.pi, math.pi)))
    return pose, (bx, by, float(rng.uniform(-math.pi, math.pi)))


@dataclass(frozen=True, slots=True)
class MapTimings:
    """What a large map costs before the robot can localize in it, s (wall clock)."""

    area: float  # m², the grid's extent
    cells: int
    load: float
    likelihood_field: float
    first_search_update: float


def map_timings(world: str, seed: int = 0) -> MapTimings:
    """Load ``world``, build its likelihood field, start a global search (its free space) and
    score its first scan."""
    config = load_robot("pioneer3dx")
    t0 = time.perf_counter()
    the_world = load_world(world)
    t1 = time.perf_counter()
    mcl = MonteCarloLocalization.for_robot(the_world, config, seed=seed)
    t2 = time.perf_counter()
    rng = np.random.default_rng(seed)
    pose, _ = _random_poses(the_world, config, rng, None)
    robot = simulated_robot(
        config, the_world, seed=seed, pose=pose, believed_pose=pose, use_localization=False
    )
    robot.run_for(0.2)
    frame = robot.sim.latest_laser
    assert frame is not None
    t3 = time.perf_counter()
    mcl.global_init()  # finds the cells a search may start in (the map's free space)
    mcl.update(frame.ranges, force=True)
    t4 = time.perf_counter()
    x0, x1, y0, y1 = the_world.extent
    return MapTimings(
        (x1 - x0) * (y1 - y0), the_world.shape[0] * the_world.shape[1], t1 - t0, t2 - t1, t4 - t3
    )
