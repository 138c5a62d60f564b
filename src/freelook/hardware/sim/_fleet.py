"""A simulated fleet: N robot programs, each behind its own HAL, on one batched simulator.

:class:`freelook.sim.Fleet` steps every robot's physics and laser together; each robot's
program sees only its own row through the hardware interfaces (drive, wheel encoders, laser)
and runs its own control cycle and link session. One stepping job moves the fleet to the
wall clock and hands each program its new scan. The fleet models a drive and a laser:
sonar, gyro, pan-tilt and camera stay with the single-robot simulator, so a fleet robot
steers on its odometry and laser (no localization filter, to keep N robots affordable).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from freelook.config import RobotConfig, physical_robot
from freelook.errors import WorldError
from freelook.hal import DriveCommand, DriveKind, EncoderSample, RangeScan, RobotHardware
from freelook.link import ZenohBus
from freelook.maps import World, choose_start
from freelook.robot import RobotProgram, RobotServer, ServerOptions
from freelook.runtime import MonotonicClock, RealtimeRuntime
from freelook.sim import Fleet
from freelook.sim.sensors import WheelEncoders

__all__ = ["SimulatedFleet", "fleet_starts"]

STEP_PERIOD = 0.01  # s between the fleet's steps to the wall clock


class _Drive:
    """A fleet robot has wheels only: it reads the track speeds (a holonomic one, its twist's
    forward speed and turn rate on its track)."""

    def __init__(self, fleet: Fleet, robot: int) -> None:
        self._fleet, self._robot = fleet, robot
        self._half_track = fleet.config.drive.track_width / 2
        self._holonomic = fleet.config.drive.kind == "holonomic"

    @property
    def kind(self) -> DriveKind:
        return self._fleet.config.drive.kind

    def command(self, command: DriveCommand) -> None:
        left, right = command.v_left, command.v_right
        if self._holonomic:
            turn = command.omega * self._half_track
            left, right = command.v - turn, command.v + turn
        self._fleet.set_robot_wheel_speeds(self._robot, left, right)


class _Laser:
    name = "laser"

    def __init__(self, fleet: Fleet, robot: int) -> None:
        laser = fleet.config.laser
        assert laser is not None
        self._fleet, self._robot = fleet, robot
        self._bearings = fleet.angles.copy()
        self._ox = np.full(len(self._bearings), laser.mount_forward)
        self._oy = np.full(len(self._bearings), laser.mount_left)
        self._range_max = laser.range_max

    def latest(self) -> RangeScan | None:
        stamp = self._fleet.scan_stamp
        if stamp is None:
            return None
        ranges = self._fleet.ranges[self._robot].copy()
        return RangeScan(stamp, ranges, self._bearings, self._ox, self._oy, self._range_max)


class _Encoders:
    def __init__(self, fleet: Fleet, robot: int) -> None:
        drive = fleet.config.drive
        self._fleet, self._robot = fleet, robot
        self._counter = WheelEncoders(drive.encoder_counts_per_rev, drive.wheel_diameter)

    @property
    def counts_per_rev(self) -> int:
        return self._counter.counts_per_rev

    @property
    def wheel_diameter(self) -> float:
        return self._counter.wheel_diameter

    def latest(self) -> EncoderSample:
        left, right = self._fleet.wheel_distances[self._robot]
        return EncoderSample(self._fleet.now(), *self._counter.update(float(left), float(right)))


def fleet_starts(
    world: World, config: RobotConfig, count: int, spacing: float = 1.2
) -> list[tuple[float, float, float]]:
    """``count`` start poses where the robot fits: the map's start, then the free places on a
    grid ``spacing`` apart around it, nearest first (a :class:`WorldError` when too few)."""
    first = choose_start(world, config.footprint)
    x0, y0, theta = first
    starts = [first]
    x_lo, x_hi, y_lo, y_hi = world.extent
    reach = int(max(x_hi - x_lo, y_hi - y_lo) / spacing) + 1
    cells = sorted(
        ((i, j) for i in range(-reach, reach + 1) for j in range(-reach, reach + 1) if i or j),
        key=lambda c: (c[0] ** 2 + c[1] ** 2, c),
    )
    for i, j in cells:
        if len(starts) == count:
            break
        pose = (x0 + i * spacing, y0 + j * spacing, theta)
        if not (x_lo < pose[0] < x_hi and y_lo < pose[1] < y_hi):
            continue
        try:
            starts.append(choose_start(world, config.footprint, pose))
        except WorldError:
            continue
    if len(starts) < count:
        raise WorldError(f"{world.name}: room for {len(starts)} robots, not {count}")
    return starts


class SimulatedFleet:
    """N robots of one description in one world, each a robot program served on a link.

    ``options(i)`` gives robot ``i``'s server options (its listen URL names it); ``bus``: a
    Zenoh session the robots share (for ``zenoh://`` URLs). With ``error_model`` each robot
    is its error model's draw for its seed (``seed + i``) and its program is told where it was
    put, not where it stands (robots without a model run as described). Run with :meth:`run`.
    """

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        count: int,
        options: Callable[[int], ServerOptions],
        *,
        seed: int = 0,
        bus: ZenohBus | None = None,
        robot_map: World | None = None,
        starts: Sequence[tuple[float, float, float]] | None = None,
        error_model: bool = True,
    ) -> None:
        if count < 1:
            raise ValueError(f"a fleet needs at least one robot, got {count}")
        poses = list(starts) if starts is not None else fleet_starts(world, config, count)
        self.config = config
        self.starts = poses
        seeds = [seed + i for i in range(count)]
        truths = [physical_robot(config, s) if error_model else None for s in seeds]
        self.fleet = Fleet(config, world, poses, seeds=seeds, truths=truths)
        clock = MonotonicClock()  # one time line for the fleet and every program
        self.stepper = RealtimeRuntime()
        self.stepper.clock = clock
        self.stepper.add_periodic("fleet.step", STEP_PERIOD, self._step)
        self.servers: list[RobotServer] = []
        for i, (pose, truth) in enumerate(zip(poses, truths, strict=True)):
            runtime = RealtimeRuntime()
            runtime.clock = clock
            hardware = RobotHardware(
                drive=_Drive(self.fleet, i),
                encoders=_Encoders(self.fleet, i),
                laser=_Laser(self.fleet, i) if config.laser is not None else None,
            )
            program = RobotProgram(
                config,
                hardware,
                runtime,
                robot_map=robot_map,
                start_pose=truth.believed(pose) if truth is not None else pose,
                use_gyro=False,
                use_localization=False,
                seed=seed + i,
            )
            self.servers.append(RobotServer(program, runtime, options(i), bus=bus))

    def _step(self, now: float) -> None:
        # each program takes its scans from its laser's HAL interface in its own cycle
        self.fleet.run_until(now)

    async def ready(self) -> None:
        """Wait until every robot listens."""
        await asyncio.gather(*(server.ready.wait() for server in self.servers))

    async def run(self) -> None:
        """Step the fleet and serve every robot until cancelled."""
        tasks = [asyncio.create_task(self.stepper.run(), name="fleet")]
        tasks += [asyncio.create_task(s.run(), name=f"robot {i}") for i, s in enumerate(self)]
        try:
            done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
            for task in done:
                task.result()
        finally:
            self.stepper.stop()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.fleet.close()

    def __iter__(self) -> Iterator[RobotServer]:
        return iter(self.servers)

    def __len__(self) -> int:
        return len(self.servers)
