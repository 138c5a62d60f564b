"""The robot program over its hardware interfaces, on any runtime.

It owns the robot core, runs its control cycle as a periodic job of the runtime it is given
and hands localization to a worker thread when asked (real-time runtimes: a global search's
first scans take longer than a control period), or runs it inline (lock-step runs:
deterministic). Either way the control cycle takes the newest scan from the laser's HAL
interface, as a robot reading its scanner's driver would; a scan that came and went between
two cycles is never seen. It knows its hardware only through the HAL and its surroundings only
through the map it was given; which backend sits behind the HAL is the caller's business.
"""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor, wait

from freelook.config import RobotConfig
from freelook.hal import RobotHardware
from freelook.link import Message, Permissions
from freelook.maps import World
from freelook.robot._core import MapParts, RobotCore
from freelook.robot._estimator import LocalizationResult
from freelook.runtime import Runtime

__all__ = ["RobotProgram"]

log = logging.getLogger(__name__)


class RobotProgram:
    """Robot core + control cycle + localization scheduling for one robot."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        runtime: Runtime,
        *,
        robot_map: World | None = None,
        start_pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
        use_gyro: bool = True,
        use_localization: bool = True,
        seed: int = 0,
        background_localization: bool = False,
    ) -> None:
        self.config = config
        self.hardware = hardware
        self.runtime = runtime
        self.robot_map = robot_map  # what the robot announces to its operators
        self.core = RobotCore(
            config,
            hardware,
            robot_map,
            start_pose=start_pose,
            use_gyro=use_gyro,
            use_localization=use_localization,
            seed=seed,
        )
        # the control cycle runs just after the sensors of the same instant
        runtime.add_periodic(
            "robot.control",
            config.link.control_period,
            self._step,
            phase=config.link.control_period,
        )
        self._localizer = (
            ThreadPoolExecutor(1, thread_name_prefix="localization")
            if background_localization
            else None
        )
        self._localizing: Future[LocalizationResult | None] | None = None
        # the robot's own map, followed: a new one's parts are made on a thread of their own
        # (a large map's filter takes seconds), the map in use kept meanwhile
        self._mapper = (
            ThreadPoolExecutor(1, thread_name_prefix="map")
            if background_localization and hardware.map_source is not None
            else None
        )
        self._mapping: Future[MapParts] | None = None
        self._map_taken = robot_map  # the newest map taken from the map source
        self.skipped_scans = 0  # scans a control cycle found while the filter was busy
        self._last_seen_scan = float("-inf")

    def _step(self, now: float) -> None:
        if self._localizing is not None and self._localizing.done():
            finished, self._localizing = self._localizing, None
            try:
                result = finished.result()
            except Exception:
                log.exception("localization failed")
            else:
                if result is not None:
                    self.core.estimator.apply_localization(result)
        if self.hardware.map_source is not None:
            self._follow_map()
        self.core.control.step(now)
        if self._localizer is None:
            # after the cycle's odometry: the newest scan pairs with the odometry of its time
            self.core.estimator.on_scan(now)
        elif self._localizing is not None:
            self._count_skipped()
        else:
            # after the cycle's odometry: the newest scan pairs with the odometry of its time
            job = self.core.estimator.localization_job(now)
            if job is not None:
                self._localizing = self._localizer.submit(self.core.estimator.localize, job)

    def _follow_map(self) -> None:
        """Use the robot's own map as it changes: a map other than the one taken last is
        prepared (on the map thread in real time) and used from the cycle after it is ready."""
        if self._mapping is not None:
            if not self._mapping.done():
                return
            finished, self._mapping = self._mapping, None
            try:
                self.use_map(finished.result())
            except Exception:
                log.exception("could not take the robot's new map")
        assert self.hardware.map_source is not None
        robot_map = self.hardware.map_source.latest()
        if robot_map is None or robot_map is self._map_taken:
            return
        self._map_taken = robot_map
        if self._mapper is None:
            self.use_map(self.prepare_map(robot_map))
        else:
            self._mapping = self._mapper.submit(self.prepare_map, robot_map)

    def _count_skipped(self) -> None:
        laser = self.hardware.laser
        scan = laser.latest() if laser is not None else None
        if scan is not None and scan.stamp > self._last_seen_scan:
            self._last_seen_scan = scan.stamp
            self.skipped_scans += 1

    def prepare_map(self, robot_map: World) -> MapParts:
        """What a new map needs (slow on a large one; any thread): see :meth:`use_map`."""
        return self.core.prepare_map(robot_map)

    def use_map(self, parts: MapParts) -> None:
        """Drive by a new map from the next control cycle on, and announce it to the
        operators (the robot's own map, followed as it changes)."""
        self.core.use_map(parts)
        self.robot_map = parts.robot_map

    def wait_for_localization(self, timeout: float | None = None) -> None:
        """Block until the running background localization job is done (its result lands in
        the next control cycle): lock-step runs outpace a worker thread otherwise."""
        if self._localizing is not None:
            wait([self._localizing], timeout)

    def send(
        self,
        message: Message,
        station: int = 0,
        permissions: Permissions | None = None,
        expires: float | None = None,
    ) -> list[Message]:
        """Deliver one message from ``station`` (with what its key allows, and the time on
        the runtime's clock after which it must not act) to the robot program now; returns
        its replies."""
        return self.core.handle(message, self.runtime.now(), station, permissions, expires)

    def close(self) -> None:
        """Wait for a running localization job and stop its worker."""
        if self._localizer is not None:
            self._localizer.shutdown(wait=True)
        if self._mapper is not None:
            self._mapper.shutdown(wait=True)
