"""A simulated robot: the simulator behind the HAL and the robot program on one runtime."""

from __future__ import annotations

from typing import TYPE_CHECKING

from freelook.config import RobotConfig
from freelook.hardware.sim._hal import simulated_hardware
from freelook.link import Message
from freelook.maps import World, choose_start, load_world
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

    The robot program sees the simulator only through the HAL, and its surroundings only
    through ``robot_map`` (by default the world's published map, loaded from its file; None:
    safety on the range sensors alone). Without ``pose`` the robot starts where
    :func:`freelook.maps.choose_start` puts it (the map's start, or the free place nearest the
    map's origin).
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
    ) -> None:
        """``background_localization`` runs the particle filter on a worker thread, off the
        control path (for real-time runtimes); lock-step runs keep it inline."""
        start = pose if pose is not None else choose_start(world, config.footprint)
        self.config = config
        self.world = world
        self.sim = Simulator(config, world, seed=seed, pose=start)
        self.hardware = simulated_hardware(self.sim, camera=camera, gyro=use_gyro)
        self.runtime: Runtime = runtime if runtime is not None else LockstepRuntime()
        self.sim.attach(self.runtime)
        self.map = published_map(world) if robot_map is _PUBLISHED else robot_map
        assert self.map is None or isinstance(self.map, World)
        self.program = RobotProgram(
            config,
            self.hardware,
            self.runtime,
            robot_map=self.map,
            start_pose=believed_pose or start,
            use_gyro=use_gyro,
            use_localization=use_localization,
            seed=seed,
            background_localization=background_localization,
        )
        self.sim.on_laser.append(self._on_laser)

    @property
    def core(self) -> RobotCore:
        return self.program.core

    @property
    def skipped_scans(self) -> int:
        return self.program.skipped_scans

    def _on_laser(self, stamp: float) -> None:
        self.program.scan_arrived(stamp)

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
) -> tuple[RobotServer, SimulatedRobot]:
    """A robot server over a simulated robot on the real-time runtime (``freelook robot
    --hardware sim`` and ``freelook sim``), starting at ``start`` (checked: a
    :class:`freelook.errors.WorldError` if the robot does not fit there) or where
    :func:`freelook.maps.choose_start` puts it."""
    runtime = RealtimeRuntime()
    robot = SimulatedRobot(
        config,
        world,
        seed=seed,
        pose=choose_start(world, config.footprint, start),
        runtime=runtime,
        camera=options.camera,
        background_localization=True,
        robot_map=robot_map,
    )
    return RobotServer(robot.program, runtime, options, recorder), robot
