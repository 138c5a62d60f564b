"""The assembled simulator: a vehicle and its sensors sampled at their own rates, and the arm
of a robot that has one (stepped with the vehicle, on the vehicle's pose).

Everything is driven through periodic jobs on a runtime (lock-step or real time); nothing here
reads the wall clock. One ``SeedSequence`` spawns an independent generator per component, so a
seed fixes every noise stream and adding a sensor does not shift the others.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import PhysicalTruth, RobotConfig
from freelook.maps import MapDifferences, World
from freelook.runtime import LockstepRuntime, Runtime
from freelook.sim.arm import SimulatedArm, objects_from_world
from freelook.sim.sensors import Laser, RateGyro, SonarRing, WheelEncoders, spoil_returns
from freelook.sim.vehicle import Vehicle, VehicleState

__all__ = ["ARM_PERIOD", "LaserFrame", "Runtime", "Simulator", "SonarFrame"]

MAX_CATCH_UP = 0.5  # s: the most a late physics firing catches up (a longer stall is lost)
#: s: the arm's step, every other 5 ms physics step (its joints lag by 50 ms and the robot
#: commands them every 20 ms; a 5 ms step would cost the simulator 13–16 % instead of 7 %)
ARM_PERIOD = 0.01


class LaserFrame(NamedTuple):
    stamp: float
    ranges: npt.NDArray[np.float64]


class SonarFrame(NamedTuple):
    stamp: float
    ranges: npt.NDArray[np.float64]


class Simulator:
    """Vehicle + laser + sonar + gyro + encoders (+ arm) for one robot in one world."""

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        seed: int = 0,
        pose: tuple[float, float, float] | None = None,
        physics_period: float = 0.005,
        truth: PhysicalTruth | None = None,
        differences: MapDifferences | None = None,
    ) -> None:
        """``config`` is the robot's description (what its program believes); ``truth`` the
        physical robot when it differs (an error model's draw, :class:`PhysicalTruth`): its
        wheels, track width, slip, gyro scale, where its laser really sits and its bad
        returns. Without ``truth`` the simulated robot is its description. ``world`` is the
        world as its map shows it; ``differences`` what stands there besides (furniture,
        people, a closed door: solid to all; glass: solid, but the laser sees through it)."""
        if not 0 < physics_period <= 0.005:
            raise ValueError(f"physics period must be in (0, 5 ms], got {physics_period}")
        self.config = config
        self.differences = differences if differences is not None else MapDifferences()
        mapped, world = world, self.differences.world(world)
        self.world = world
        self.truth = truth
        self.physics_period = physics_period
        streams = np.random.SeedSequence(seed).spawn(6)
        rngs = [np.random.default_rng(s) for s in streams]
        self.vehicle = Vehicle(config, world, rngs[0], pose, truth)
        self.laser = _laser_for(config, self.differences.laser_world(mapped), rngs[1], truth)
        self.sonar = SonarRing(config.sonar, world, rngs[2]) if config.sonar else None
        self.gyro = (
            RateGyro(config.gyro, rngs[3], truth.gyro_scale if truth is not None else None)
            if config.gyro
            else None
        )
        # a laser's bad returns (outliers and dropouts) draw from a stream of their own
        self._bad_returns = rngs[5] if truth is not None else None
        self.encoders = WheelEncoders(
            config.drive.encoder_counts_per_rev, config.drive.wheel_diameter
        )
        #: the robot's arm (a robot config with an ``[arm]``), reaching for the world's boxes;
        #: it draws no random numbers, so the vehicle's and the sensors' streams are unchanged.
        #: Stepped every ``ARM_PERIOD`` of physics time, on the vehicle's pose.
        self.arm = _arm_for(config, world)
        self._arm_due = 0.0  # physics time not yet given to the arm
        #: the scene's light as the cameras see it (1: as the world's colours say), its
        #: colour (a gain per channel, red, green, blue: the hue shifts under it), and the
        #: driving camera's sensor noise (σ, 8-bit levels) from its own seeded stream
        self.lighting = 1.0
        self.light_tint = (1.0, 1.0, 1.0)
        self.camera_noise = 0.0
        self.camera_rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(5,)))
        self.now = 0.0
        self._latest_laser: LaserFrame | None = None
        # the newest scan's stamp and pose, until someone reads it (then it is cast)
        self._unread_laser: tuple[float, tuple[float, float, float]] | None = None
        self.latest_sonar: SonarFrame | None = None
        self.latest_gyro: tuple[float, float] | None = None  # (stamp, rad/s)
        self.gyro_angle = 0.0  # rad, every sample's rate × its period, summed (delta-angle output)
        self.latest_encoders: tuple[float, int, int] | None = None  # (stamp, left, right)
        #: called with each scan's stamp (its ranges: :attr:`latest_laser`)
        self.on_laser: list[Callable[[float], None]] = []
        self._gyro_rotation = 0.0
        self._gyro_time = 0.0
        self._physics_time: float | None = None
        # on a lock-step runtime the physics fires on its own grid before any sensor of the
        # same instant, so a sensor between two ticks sees the last tick (the simulator's
        # discrete time) and nothing needs catching up
        self._sensors_catch_up = True

    # -- commands (what a HAL adapter forwards) ----------------------------------------------

    def set_wheel_speeds(self, left: float, right: float) -> None:
        self.vehicle.command_wheels(left, right)

    def set_twist(self, vx: float, vy: float, omega: float) -> None:
        self.vehicle.command_twist(vx, vy, omega)

    def set_pan_tilt_rates(self, pan_rate: float, tilt_rate: float) -> None:
        self.vehicle.command_pan_tilt(pan_rate, tilt_rate)

    @property
    def ground_truth(self) -> VehicleState:
        return self.vehicle.state()

    # -- periodic jobs -----------------------------------------------------------------------

    def physics(self, now: float) -> None:
        """Advance the vehicle to ``now``: one period per firing when on schedule (always, on a
        lock-step runtime); on a real-time runtime, the time that actually passed since the
        last firing (a late, early or skipped one included), so the wheels' travel matches the
        stamps the encoders carry and a measured speed is the wheels' speed, not the jitter of
        the event loop. A stall longer than ``MAX_CATCH_UP`` is lost time."""
        last, self._physics_time = self._physics_time, now
        elapsed = self.physics_period if last is None else now - last
        if abs(elapsed - self.physics_period) <= 1e-9:
            self.vehicle.step(self.physics_period)
            if self.arm is not None:
                self._step_arm(self.physics_period, 1)
        elif elapsed > 0:
            elapsed = min(elapsed, MAX_CATCH_UP)
            steps = math.ceil(elapsed / self.physics_period - 1e-9)
            self.vehicle.step(elapsed / steps, steps)
            if self.arm is not None:
                self._step_arm(elapsed / steps, steps)
        self.now = now

    def _step_arm(self, dt: float, steps: int) -> None:
        assert self.arm is not None
        self._arm_due += dt * steps
        if self._arm_due < ARM_PERIOD - 1e-9:
            return
        self.arm.set_base_pose(*self.vehicle.pose())
        while self._arm_due >= ARM_PERIOD - 1e-9:
            self.arm.step(ARM_PERIOD)
            self._arm_due -= ARM_PERIOD

    def _catch_up(self, now: float) -> None:
        """A sensor sampled ahead of the physics (a real-time runtime fired it first, or
        late) first brings the vehicle to its own time: the sample describes ``now``."""
        if self._sensors_catch_up and self._physics_time is not None and now > self._physics_time:
            self.physics(now)

    def sample_laser(self, now: float) -> None:
        """Take a scan from the pose now. It is cast when first read (:attr:`latest_laser`);
        one no one read before the next is passed over, its noise drawn all the same, so
        every scan read is the one casting each in turn gives."""
        if self.laser is None:
            return
        self._catch_up(now)
        unread = self._unread_laser
        if unread is not None and not self.laser.skip(*unread[1]):
            self.laser.scan(*unread[1])  # its noise depends on its returns: cast it
        self._unread_laser = (now, self.vehicle.pose())
        self._latest_laser = None
        for listener in self.on_laser:
            listener(now)

    @property
    def latest_laser(self) -> LaserFrame | None:
        """The newest scan (None before the first)."""
        unread = self._unread_laser
        if unread is not None:
            assert self.laser is not None
            self._unread_laser = None
            ranges = self.laser.scan(*unread[1])
            if self._bad_returns is not None:
                self._spoil(ranges)
            self._latest_laser = LaserFrame(unread[0], ranges)
        return self._latest_laser

    def _spoil(self, ranges: npt.NDArray[np.float64]) -> None:
        """The error model's bad returns on the scan just read (see :func:`spoil_returns`)."""
        truth, rng, laser = self.truth, self._bad_returns, self.laser
        assert truth is not None
        assert rng is not None
        assert laser is not None
        spoil_returns(ranges, truth, laser.config, rng)

    def sample_sonar(self, now: float) -> None:
        if self.sonar is None:
            return
        self._catch_up(now)
        self.latest_sonar = SonarFrame(now, self.sonar.read(*self.vehicle.pose()))

    def sample_gyro(self, now: float) -> None:
        dt = now - self._gyro_time
        if self.gyro is None or dt <= 0:
            return
        self._catch_up(now)
        rotation = self.vehicle.rotation
        true_rate = (rotation - self._gyro_rotation) / dt
        self._gyro_rotation = rotation
        self._gyro_time = now
        rate = self.gyro.measure(true_rate, dt)
        self.gyro_angle += rate * dt
        self.latest_gyro = (now, rate)

    def sample_encoders(self, now: float) -> None:
        self._catch_up(now)
        left, right = self.encoders.update(*self.vehicle.wheel_distances())
        self.latest_encoders = (now, left, right)

    def _sample_odometry(self, now: float) -> None:
        self.sample_encoders(now)
        if self.gyro is not None:
            self.sample_gyro(now)

    def attach(self, runtime: Runtime, prefix: str = "sim") -> None:
        """Register physics and every sensor on ``runtime`` at their configured rates."""
        cfg = self.config
        self._sensors_catch_up = not isinstance(runtime, LockstepRuntime)
        runtime.add_periodic(f"{prefix}.physics", self.physics_period, self.physics)
        # the encoders and the gyro are read at the gyro's rate, in one job: the encoders,
        # then the gyro, each time (two jobs on one schedule would fire so, at twice the cost)
        gyro_period = 1.0 / cfg.gyro.rate_hz if cfg.gyro else 0.01
        runtime.add_periodic(
            f"{prefix}.odometry", gyro_period, self._sample_odometry, phase=gyro_period
        )
        if cfg.laser:
            period = 1.0 / cfg.laser.rate_hz
            runtime.add_periodic(f"{prefix}.laser", period, self.sample_laser, phase=period)
        if cfg.sonar:
            period = 1.0 / cfg.sonar.rate_hz
            runtime.add_periodic(f"{prefix}.sonar", period, self.sample_sonar, phase=period)

    def run_for(self, seconds: float) -> None:
        """Convenience: run on a private lock-step runtime (created on first use)."""
        runtime = getattr(self, "_runtime", None)
        if runtime is None:
            runtime = LockstepRuntime()
            self.attach(runtime)
            self._runtime = runtime
        runtime.run_for(seconds)


def _laser_for(
    config: RobotConfig, world: World, rng: np.random.Generator, truth: PhysicalTruth | None
) -> Laser | None:
    """The laser where it really sits: its configured mount moved by ``truth``'s offsets."""
    if config.laser is None:
        return None
    if truth is None:
        return Laser(config.laser, world, rng)
    mounted = config.laser.model_copy(
        update={
            "mount_forward": config.laser.mount_forward + truth.laser_forward,
            "mount_left": config.laser.mount_left + truth.laser_left,
        }
    )
    return Laser(mounted, world, rng, yaw_offset=truth.laser_yaw)


def _arm_for(config: RobotConfig, world: World) -> SimulatedArm | None:
    """The simulated arm of a robot config with an ``[arm]`` (None without one)."""
    if config.arm is None:
        return None
    from freelook.arm import load_arm

    arm = config.arm
    return SimulatedArm(
        load_arm(arm.urdf, arm.srdf),
        time_constant=arm.joint_time_constant,
        objects=objects_from_world(world),
    )
