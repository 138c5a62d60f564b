"""A simulated robot: the simulator behind the HAL and the robot program on one runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freelook.config import PhysicalTruth, RobotConfig
from freelook.errors import WorldError
from freelook.hardware.sim._hal import simulated_hardware
from freelook.link import Message
from freelook.maps import MapDifferences, World, choose_start, load_world
from freelook.robot import RobotCore, RobotProgram, RobotServer, ServerOptions
from freelook.runtime import LockstepRuntime, RealtimeRuntime, Runtime
from freelook.sim import Simulator

if TYPE_CHECKING:  # recording (mcap and its schemas) loads only when a recorder is given
    from freelook.record import BackgroundRecorder

__all__ = ["SimulatedRobot", "published_map", "simulated_server"]

_PUBLISHED = object()


def published_map(world: World) -> World | None:
    """The map a robot in ``world`` is given: loaded again from the file the world came from,
    as a real robot loads its map file (None for a world built in memory)."""
    return load_world(world.source) if world.source else None


class SimulatedRobot:
    """The whole robot program against the simulator, on a lock-step runtime by default.

    The robot program sees the simulator only through the HAL (its laser scans too: it takes
    the newest in its own control cycle, as it would from a real scanner's driver), and its
    surroundings only through ``robot_map`` (by default the world's published map, loaded
    from its file; None: safety on the range sensors alone). ``config`` is what the program
    believes; ``truth`` is the physical robot the simulator runs when it differs (an error
    model's draw, :meth:`freelook.config.ErrorModel.draw`). ``pose`` is where the robot truly
    starts and ``believed_pose`` where its program is told it starts (None: told exactly).
    Without ``pose`` the robot starts where :func:`freelook.maps.choose_start` puts it (the
    map's start, or the free place nearest the map's origin).
    """

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        *,
        seed: int = 0,
        pose: tuple[float, float, float] | None = None,
        use_gyro: bool = True,
        use_localization: bool = True,
        camera: bool = False,
        runtime: Runtime | None = None,
        believed_pose: tuple[float, float, float] | None = None,
        background_localization: bool = False,
        robot_map: World | object | None = _PUBLISHED,
        truth: PhysicalTruth | None = None,
        differences: MapDifferences | None = None,
    ) -> None:
        """``differences``: what the world holds that the map does not show, and how far the
        map file is off (its offset moves whatever map the robot is given).
        ``background_localization`` runs the particle filter on a worker thread, off the
        control path (for real-time runtimes); lock-step runs keep it inline."""
        if truth is not None and believed_pose is None:
            raise ValueError(
                "a simulated robot that differs from its description is told where it starts: "
                "pass believed_pose (e.g. truth.believed(pose))"
            )
        start = pose if pose is not None else choose_start(world, config.footprint)
        self.config = config
        self.world = world
        self.truth = truth
        self.sim = Simulator(
            config, world, seed=seed, pose=start, truth=truth, differences=differences
        )
        self.hardware = simulated_hardware(self.sim, camera=camera, gyro=use_gyro)
        self.runtime: Runtime = runtime if runtime is not None else LockstepRuntime()
        self.sim.attach(self.runtime)
        given = published_map(world) if robot_map is _PUBLISHED else robot_map
        assert given is None or isinstance(given, World)
        self.map = given if given is None else self.sim.differences.robot_map(given)
        self.program = RobotProgram(
            config,
            self.hardware,
            self.runtime,
            robot_map=self.map,
            start_pose=believed_pose if believed_pose is not None else start,
            use_gyro=use_gyro,
            use_localization=use_localization,
            seed=seed,
            background_localization=background_localization,
        )

    @property
    def core(self) -> RobotCore:
        return self.program.core

    @property
    def skipped_scans(self) -> int:
        return self.program.skipped_scans

    def wait_for_localization(self, timeout: float | None = None) -> None:
        self.program.wait_for_localization(timeout)

    def close(self) -> None:
        self.program.close()

    def now(self) -> float:
        return self.runtime.now()

    def send(self, message: Message, station: int = 0) -> list[Message]:
        """Deliver one message to the robot program now."""
        return self.program.send(message, station)

    def run_for(self, seconds: float) -> None:
        """Advance a lock-step runtime (real-time runtimes advance by themselves)."""
        if not isinstance(self.runtime, LockstepRuntime):
            raise TypeError("run_for needs the lock-step runtime")
        self.runtime.run_for(seconds)


def simulated_server(
    config: RobotConfig,
    world: World,
    options: ServerOptions,
    *,
    seed: int = 0,
    robot_map: World | object | None = _PUBLISHED,
    recorder: BackgroundRecorder | None = None,
    start: tuple[float, float, float] | None = None,
    truth: PhysicalTruth | None = None,
) -> tuple[RobotServer, SimulatedRobot]:
    """A robot server over a simulated robot on the real-time runtime (``freelook robot
    --hardware sim`` and ``freelook sim``), starting at ``start`` (checked: a
    :class:`freelook.errors.WorldError` if the robot does not fit there) or where
    :func:`freelook.maps.choose_start` puts it. With ``truth`` (an error model's draw) the
    simulated robot differs from ``config`` and stands where it was put give or take the
    model's placing error, while its program is told the place it was put."""
    runtime = RealtimeRuntime()
    told = choose_start(world, config.footprint, start)
    pose = told if truth is None else _placed(config, world, told, truth)
    robot = SimulatedRobot(
        config,
        world,
        seed=seed,
        pose=pose,
        believed_pose=told,
        truth=truth,
        runtime=runtime,
        camera=options.camera,
        background_localization=True,
        robot_map=robot_map,
    )
    return RobotServer(robot.program, runtime, options, recorder), robot


def _placed(
    config: RobotConfig,
    world: World,
    told: tuple[float, float, float],
    truth: PhysicalTruth,
) -> tuple[float, float, float]:
    """Where a robot put down by hand at ``told`` really stands (``told`` itself when the
    placing error would put it into an obstacle)."""
    dx, dy, dth = truth.start_offset
    pose = (told[0] + dx, told[1] + dy, told[2] + dth)
    try:
        choose_start(world, config.footprint, pose)
    except WorldError:
        return told
    return pose
