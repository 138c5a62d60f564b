"""A simulated robot on a runtime: simulator + hardware adapters + robot core, wired together."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor, wait

from freelook.config import RobotConfig
from freelook.link._messages import Message
from freelook.maps import World
from freelook.robot._core import LocalizationResult, RobotCore
from freelook.robot._sim_hal import simulated_hardware
from freelook.runtime import LockstepRuntime
from freelook.sim import LaserFrame, Simulator
from freelook.sim._simulator import Runtime

__all__ = ["SimulatedRobot"]

log = logging.getLogger(__name__)


class SimulatedRobot:
    """The whole robot program against the simulator, on a lock-step runtime by default."""

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
    ) -> None:
        """``background_localization`` runs the particle filter on a worker thread, off the
        control path (for real-time runtimes: a global search's first scans take longer than
        a control period); lock-step runs keep it inline and deterministic."""
        start = pose if pose is not None else world.start
        self.config = config
        self.world = world
        self.sim = Simulator(config, world, seed=seed, pose=start)
        self.hardware = simulated_hardware(self.sim, camera=camera, gyro=use_gyro)
        self.core = RobotCore(
            config,
            self.hardware,
            world,
            start_pose=believed_pose or start,
            use_gyro=use_gyro,
            use_localization=use_localization,
            seed=seed,
        )
        self.runtime: Runtime = runtime if runtime is not None else LockstepRuntime()
        self.sim.attach(self.runtime)
        # the control cycle runs just after the sensors of the same instant
        self.runtime.add_periodic(
            "robot.control",
            config.link.control_period,
            self._step,
            phase=config.link.control_period,
        )
        self.sim.on_laser.append(self._on_laser)
        self._localizer = (
            ThreadPoolExecutor(1, thread_name_prefix="localization")
            if background_localization
            else None
        )
        self._localizing: Future[LocalizationResult | None] | None = None
        self.skipped_scans = 0  # scans that came while the filter was busy

    def _step(self, now: float) -> None:
        if self._localizing is not None and self._localizing.done():
            finished, self._localizing = self._localizing, None
            try:
                result = finished.result()
            except Exception:
                log.exception("localization failed")
            else:
                if result is not None:
                    self.core.apply_localization(result)
        self.core.step(now)
        if self._localizer is not None and self._localizing is None:
            # after the cycle's odometry: the newest scan pairs with the odometry of its time
            job = self.core.localization_job(now)
            if job is not None:
                self._localizing = self._localizer.submit(self.core.localize, job)

    def _on_laser(self, frame: LaserFrame) -> None:
        if self._localizer is None:
            self.core.on_scan(frame.stamp)
        elif self._localizing is not None:
            self.skipped_scans += 1

    def wait_for_localization(self, timeout: float | None = None) -> None:
        """Block until the running background localization job is done (its result lands in
        the next control cycle): lock-step runs outpace a worker thread otherwise."""
        if self._localizing is not None:
            wait([self._localizing], timeout)

    def close(self) -> None:
        """Wait for a running localization job and stop its worker."""
        if self._localizer is not None:
            self._localizer.shutdown(wait=True)

    def now(self) -> float:
        return self.runtime.now()

    def send(self, message: Message, station: int = 0) -> list[Message]:
        """Deliver one message to the robot program now."""
        return self.core.handle(message, self.runtime.now(), station)

    def run_for(self, seconds: float) -> None:
        """Advance a lock-step runtime (real-time runtimes advance by themselves)."""
        if not isinstance(self.runtime, LockstepRuntime):
            raise TypeError("run_for needs the lock-step runtime")
        self.runtime.run_for(seconds)
