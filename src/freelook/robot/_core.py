"""The robot program's core (sans-I/O): commands in, actuator commands and telemetry out.

It is built from parts, each in its own module and used directly by whoever needs one: the
state estimator (:attr:`RobotCore.estimator`), command intake and permissions
(:attr:`~RobotCore.intake`), the drive modes and the one table of every message they take
(:attr:`~RobotCore.modes`), the control step (:attr:`~RobotCore.control`: estimation → the
mode's intent → safety → actuators, one ``control.step(now)`` a cycle), what the core refused
and saw (:attr:`~RobotCore.log`) and telemetry. The newest command of each kind received during
a cycle wins. Free Look Control runs in its mode, at the cycle rate, with the measured pan angle
and the filtered heading rate, so link latency does not bend the camera's path. The core knows
its hardware through the HAL and its surroundings through the map it was given
(:class:`MapLayer`), never through a simulator.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from freelook.config import RobotConfig
from freelook.estimation import MonteCarloLocalization
from freelook.hal import RobotHardware
from freelook.link import (
    ACTING_COMMANDS,
    MAX_REASON_BYTES,
    LinkStatsReport,
    Message,
    ModeRefusal,
    Permissions,
    Telemetry,
)
from freelook.maps import World
from freelook.robot._arm import RobotArm
from freelook.robot._autonomy import RobotAutonomy
from freelook.robot._cycle import ControlStep
from freelook.robot._estimator import StateEstimator
from freelook.robot._intake import ANY_STATION, CommandIntake, CoreLog, Refusal
from freelook.robot._mode_table import COMMANDS, ModeParts, ModeTable
from freelook.robot._sight import DriverSight
from freelook.robot._telemetry import TelemetryView
from freelook.safety import MapLayer, SafetyFilter
from freelook.types import Mode

__all__ = ["BLIND_GRACE", "REFUSAL_REPEAT", "MapParts", "RobotCore"]

#: s between two answers of the same refusal to one station: a station repeats its command at
#: its spacing (about 20 a second), and hears why it is refused about once a second
REFUSAL_REPEAT = 1.0
#: s a driver's telemetry may be overdue beyond the watchdog's timeout before the driver counts
#: as blind: the robot's own telemetry can run late when its loop is busy (cameras, the arm),
#: and that must not stop it
BLIND_GRACE = 1.5
#: s a driver's camera picture may be older than the watchdog's timeout while frames are sent
#: before the driver counts as blind: frames are sent on a thread of their own, so the loop's
#: load does not make them late; a picture a second old at 0.75 m/s is 0.75 m driven unseen
VIDEO_BLIND_GRACE = 0.5


class MapParts(NamedTuple):
    """What a new map needs made before the program uses it (see :meth:`RobotCore.prepare_map`)."""

    robot_map: World
    layer: MapLayer
    mcl: MonteCarloLocalization | None


class RobotCore:
    """The robot program for one robot: sans-I/O, driven by ``control.step(now)`` and
    ``handle``."""

    def __init__(
        self,
        config: RobotConfig,
        hardware: RobotHardware,
        robot_map: World | None = None,
        *,
        start_pose: tuple[float, float, float] = (0.0, 0.0, 0.0),
        use_gyro: bool = True,
        use_localization: bool = True,
        seed: int = 0,
        arbitration_timeout: float = 5.0,
    ) -> None:
        self.config = config
        self.hw = hardware
        self.period = config.link.control_period
        self.estimator = StateEstimator(
            config,
            hardware,
            robot_map,
            start_pose=start_pose,
            use_gyro=use_gyro,
            use_localization=use_localization,
            seed=seed,
        )
        self.safety = SafetyFilter(config.safety, config.footprint, config.drive)
        #: the arm's commands and its anti-collision check (a robot with an arm)
        self.arm = (
            RobotArm.from_config(config.arm, hardware.arm, self.period)
            if config.arm is not None and hardware.arm is not None
            else None
        )
        #: the disposal task (a robot with an arm and a driving camera), run in Mode.AUTONOMY
        self.autonomy = (
            RobotAutonomy(config, hardware, self.arm.model)
            if self.arm is not None and hardware.camera is not None and config.pan_tilt
            else None
        )
        #: what the core refused and what happened
        self.log = CoreLog()
        self.intake = CommandIntake(config, arbitration_timeout, self.log)
        self.arbiter = self.intake.arbiter
        #: which stations report that they cannot see the robot
        self.sight = DriverSight(
            config.safety.watchdog_timeout + BLIND_GRACE,
            config.safety.watchdog_timeout + VIDEO_BLIND_GRACE,
        )
        parts = ModeParts(self._pan_refusal, self.arm, self.autonomy)
        self.modes = ModeTable(
            config, hardware, self.estimator, self.safety, parts, self.intake, self.sight
        )
        self.control = ControlStep(
            config, hardware, self.estimator, self.modes, self.safety, self.log, robot_map
        )
        self.map_layer = self.control.map_layer
        #: range readings remembered where they were seen (None: off)
        self.memory = self.control.memory
        self._telemetry = TelemetryView(
            hardware, self.estimator, self.arbiter, self.arm, self.autonomy
        )
        #: the link's own figures, as the server last reported them
        self.link_stats = LinkStatsReport()
        #: when each (station, mode, reason) refusal was last answered
        self._refusals_said: dict[tuple[int, Mode, str], float] = {}

    # -- the map ------------------------------------------------------------------------------

    def prepare_map(self, robot_map: World) -> MapParts:
        """The safety layer and the particle filter of a new map (the robot's own, as it
        changes): touches nothing the control cycle uses, so it may run on another thread
        (it takes a while on a large map); :meth:`use_map` then puts them in place."""
        layer = MapLayer(robot_map, self.config.localization.map_range)
        return MapParts(robot_map, layer, self.estimator.filter_for(robot_map))

    def use_map(self, parts: MapParts) -> None:
        """Drive by a new map from the next control cycle on (made by :meth:`prepare_map`)."""
        self.control.map_layer = self.map_layer = parts.layer
        self.estimator.use_map(parts.mcl)

    def unavailable(self) -> list[str]:
        """What this robot cannot do with the hardware it has, one line each."""
        lines = []
        free_look = self.modes.standing_refusals().get(Mode.FREE_LOOK)
        if free_look is not None:
            lines.append(free_look)
        if self.estimator.mcl is None and self.hw.localization is None:
            why = "no laser" if self.hw.laser is None else "no map"
            lines.append(f"no localization ({why}): the pose is dead reckoning")
        if self.map_layer is None:
            lines.append("no map: safety runs on the range sensors alone")
        if self.hw.laser is None and self.hw.sonar is None:
            lines.append("no range sensor: safety has only the watchdog, e-stop and bumpers")
        if self.hw.gyro is None:
            lines.append("no gyro: heading from the wheels alone")
        if self.hw.camera is None:
            lines.append("no camera: no video")
        lines.extend(self.hw.notes)
        return lines

    # -- commands ----------------------------------------------------------------------------

    def handle(
        self,
        message: Message,
        now: float,
        station: int = ANY_STATION,
        permissions: Permissions | None = None,
        expires: float | None = None,
    ) -> list[Message]:
        """Take one message from ``station`` (the verified sender; 0 for a link without
        stations, the thesis profile); returns replies (control grants and rejections).

        A station speaks only for itself, with the authority it was given (not the one it
        claims). Stations must hold control to command anything but an e-stop; a link without
        stations may command while no station holds control. ``permissions`` (from the
        station's key): an observer commands nothing, and only its allowed modes run.
        ``expires`` (this robot's clock): a motion command later than that is refused and
        counted, never executed; one in time acts until then at the latest.
        """
        row = COMMANDS.get(type(message))
        taken = self.intake.take(message, row, now, station, permissions, expires)
        if isinstance(taken, Refusal):
            return self._answer_refusals(station, [taken], now)
        if taken is None or row is None:
            return []
        replies = row.handler(self.modes, taken, now, station)
        if self.modes.feeds_watchdog(row, message) and self.sight.sees(station):
            acting = type(message) in ACTING_COMMANDS
            self.safety.command_received(now, expires if acting else None)
        refused = self.modes.refusals()
        return replies + self._answer_refusals(station, refused, now) if refused else replies

    def standing_refusals(self) -> list[ModeRefusal]:
        """What every station is told up front: the modes this robot never enters, and why."""
        return [
            ModeRefusal(ANY_STATION, mode, _fit(why), standing=True)
            for mode, why in self.modes.standing_refusals().items()
        ]

    def _answer_refusals(
        self, station: int, refused: list[tuple[Mode, str]], now: float
    ) -> list[Message]:
        """The refusals to tell ``station``: each at most once a REFUSAL_REPEAT while it keeps
        asking for the same."""
        said = self._refusals_said
        out: list[Message] = []
        for mode, why in refused:
            key = (station, mode, why)
            if now - said.get(key, -math.inf) < REFUSAL_REPEAT:
                continue
            if len(said) >= 256:  # bounded: the oldest answers are forgotten
                said.clear()
            said[key] = now
            out.append(ModeRefusal(station, mode, _fit(why)))
        return out

    def holds_control(self, station: int, now: float) -> bool:
        """Whether ``station`` holds control, or held it until its lease ran out and no one
        took it since (the link never forgets it for another)."""
        return self.arbiter.last_holder(now) == station

    def forget_station(self, station: int) -> None:
        """The link dropped ``station`` (its session expired, or it was idle and another took
        its place): what the program kept for it goes too."""
        self.sight.forget(station)
        self.arbiter.dropped.pop(station, None)
        said = self._refusals_said
        for key in [k for k in said if k[0] == station]:
            del said[key]

    def _pan_refusal(self) -> str | None:
        """Why Free Look cannot run (the camera must pan, and sit off the axle), or None."""
        pt = self.config.pan_tilt
        if self.hw.pan_tilt is None or pt is None:
            return "no pan-tilt unit"
        if not self.hw.pan_tilt.has_pan:
            return "no pan joint"
        if pt.mount_forward == 0.0:
            return "it sits on the axle"
        return None

    # -- telemetry ---------------------------------------------------------------------------

    def telemetry(self, now: float) -> Telemetry:
        return self._telemetry.telemetry(
            now, self.control.last_output, self.modes.mode, self.safety.estop, self.link_stats
        )


def _fit(why: str) -> str:
    """A reason within what the link carries (MAX_REASON_BYTES of UTF-8), whole characters."""
    data = why.encode("utf-8")
    if len(data) <= MAX_REASON_BYTES:
        return why
    return data[: MAX_REASON_BYTES - 3].decode("utf-8", "ignore") + "..."
