"""A simulated robot on a runtime: simulator + hardware adapters + robot core, wired together."""

from __future__ import annotations

from freelook.config import RobotConfig
from freelook.link._messages import Message
from freelook.robot._core import RobotCore
from freelook.robot._sim_hal import simulated_hardware
from freelook.runtime import LockstepRuntime
from freelook.sim import LaserFrame, Simulator
from freelook.sim._simulator import Runtime
from freelook.sim.world import World

__all__ = ["SimulatedRobot"]


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
    ) -> None:
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

    def _step(self, now: float) -> None:
        self.core.step(now)

    def _on_laser(self, frame: LaserFrame) -> None:
        self.core.on_scan(frame.stamp)

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
