"""The thesis's Table 7.1 trials through radios that die and stay dead (the thesis §7.2).

Each trial is the table's own: its operator → robot and robot → operator loss, its operation
time, and whether its radio failed. The inputs are the table's: a failed trial's radio dies
at the end of its operation time (the thesis's trial ended there: "the whole system had to be
restarted") and stays dead until its node is restarted; the drop is measured over the
operation time, as the thesis's logs measured it (packets sent and never received). A
further ``AFTER`` seconds show what each system does about the dead radio:

* the thesis's system (thesis profile, 100 ms cycle, its < 1 packet/s watchdog) has nothing
  that restarts a radio: the robot should stop, and stays stopped;
* freelook's (native profile, 20 ms cycle, 0.5 s watchdog) runs a :class:`RadioWatch` at
  each end that restarts its own radio after seconds of silence.

Everything is measured on the simulator's truth and the channel's counters: when the robot
truly stood still after the radio died, and whether it drove on the operator's commands again.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from freelook.config import RobotConfig, load_error_model, load_robot
from freelook.experiments._faults import simulated_robot
from freelook.experiments._scenarios import OPERATOR, _arrivals, _sessions, _transmit, _world
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ControlRequest,
    DeadRadio,
    ImpairedChannel,
    Impairments,
    LinkSession,
    RadioNode,
    RadioWatch,
    ThesisCodec,
    VelocityCommand,
)
from freelook.sim.vehicle import VehicleState

__all__ = [
    "AFTER",
    "TABLE_7_1",
    "LinkTrial",
    "LinkTrialResult",
    "table_7_1_trial",
]

#: s run on after a failed trial's radio died
AFTER = 30.0
System = Literal["thesis", "freelook"]


@dataclass(frozen=True)
class LinkTrial:
    """One row of Table 7.1: losses (fractions), whether its radio failed, its length (s)."""

    number: int
    up_loss: float
    down_loss: float
    node_fail: bool
    operation_time: float


TABLE_7_1 = (
    LinkTrial(1, 0.0108, 0.3665, True, 228.8),
    LinkTrial(2, 0.248, 0.458, True, 189.14),
    LinkTrial(3, 0.09293, 0.1469, False, 324.9),
    LinkTrial(4, 0.0417, 0.189, False, 432.55),
    LinkTrial(5, 0.0945, 0.2374, False, 250.7),
    LinkTrial(6, 0.0849, 0.534, True, 140.0),
    LinkTrial(7, 0.264, 0.1875, True, 208.43),
    LinkTrial(8, 0.24, 0.284, False, 319.4),
    LinkTrial(9, 0.003, 0.025, False, 351.9),
)


@dataclass(frozen=True)
class LinkTrialResult:
    trial: int
    drop_up: float  # % of the operator's packets never received, over the operation time
    drop_down: float
    sent_up: int  # packets each way over the operation time
    sent_down: int
    failed: bool  # the radio died (an input)
    silent: bool  # a silence of over a second was seen in either direction (trailing too)
    stopped_after: float | None  # s from the radio's death until the robot stood still
    moved_while_dead: bool  # it moved again before the radio carried packets again
    drove_again_after: float | None  # s from the death until it moved on command again
    restarts: int  # radio restarts asked for
    #: m the robot truly drove over the operation time, and m the operator commanded
    driven: float = 0.0
    commanded: float = 0.0


class _Silence:
    """The longest gap between accepted packets, up to ``now`` (a trailing one too)."""

    def __init__(self) -> None:
        self.last = 0.0
        self.longest = 0.0

    def heard(self, now: float) -> None:
        self.longest = max(self.longest, now - self.last)
        self.last = now

    def until(self, now: float) -> float:
        return max(self.longest, now - self.last)


@dataclass(frozen=True)
class _Drops:
    """Each direction's drop (% of the packets sent) and the packets it sent, so far."""

    up: float
    down: float
    sent_up: int
    sent_down: int

    @classmethod
    def of(cls, up: ImpairedChannel, down: ImpairedChannel) -> _Drops:
        return cls(_drop(up), _drop(down), up.counters.sent, down.counters.sent)


def _drop(channel: ImpairedChannel) -> float:
    c = channel.counters
    return 100.0 * (c.sent - c.delivered) / c.sent if c.sent else 0.0


def _trial_config(thesis: bool, watchdog: bool) -> RobotConfig:
    """The Pioneer as the system runs it: the thesis's 1 s watchdog and 100 ms cycle, or
    freelook's own; ``watchdog`` False: a watchdog that never fires."""
    config = load_robot("pioneer3dx")
    safety = config.safety.model_copy(
        update={"watchdog_timeout": (1.0 if thesis else config.safety.watchdog_timeout)}
    )
    if not watchdog:
        safety = safety.model_copy(update={"watchdog_timeout": 1e6})
    link = config.link.model_copy(update={"control_period": 0.1}) if thesis else config.link
    return config.model_copy(update={"safety": safety, "link": link})


def _operator_command(now: float) -> VelocityCommand:
    """The operator drives 5 s forward, then turns 5 s, and again."""
    return VelocityCommand(0.3, 0.0) if int(now // 5) % 2 == 0 else VelocityCommand(0.0, 0.5)


class _TrialLink:
    """Both ends of one trial's link through its radio: the operator's commands (and on
    freelook's link its control lease) up, the robot's telemetry down; the longest silence
    each way, and on freelook's link each end's radio watch, which restarts its radio."""

    def __init__(
        self,
        config: RobotConfig,
        robot: SimulatedRobot,
        trial: LinkTrial,
        seed: int,
        radio: DeadRadio,
        *,
        thesis: bool,
        watch: bool,
    ) -> None:
        self.config, self.robot, self.radio, self.thesis = config, robot, radio, thesis
        self.up = ImpairedChannel(Impairments(loss=trial.up_loss), seed=seed * 2 + 1, lockups=radio)
        self.down = ImpairedChannel(Impairments(loss=trial.down_loss), seed=seed * 2, lockups=radio)
        if thesis:
            self.station_end = LinkSession(ThesisCodec(), spacing=config.link.operator_tx_spacing)
            self.robot_end = LinkSession(ThesisCodec(), spacing=config.link.robot_tx_spacing)
        else:
            self.station_end, self.robot_end = _sessions(config)
            robot.core.handle(ControlRequest(OPERATOR, 10), 0.0, OPERATOR)
        self.station = OPERATOR if not thesis else 0
        self.watches: dict[RadioNode, RadioWatch] = (
            {"station": RadioWatch(), "robot": RadioWatch()} if watch and not thesis else {}
        )
        self.heard_up, self.heard_down = _Silence(), _Silence()
        self.next_op = self.next_robot = self.next_lease = 0.0

    def send(self, now: float) -> None:
        """What each end has due at ``now``."""
        link, up, down = self.config.link, self.up, self.down
        if now >= self.next_robot:
            self.next_robot += link.robot_tx_spacing
            _transmit(down, self.robot_end, self.robot.core.telemetry(now), now)
        if now >= self.next_op:
            self.next_op += link.operator_tx_spacing
            _transmit(up, self.station_end, _operator_command(now), now)
        if not self.thesis and now >= self.next_lease:
            self.next_lease += 1.0  # the station's control lease, as its link sends it
            _transmit(up, self.station_end, ControlRequest(OPERATOR, 10), now)

    def receive(self, now: float) -> None:
        """What arrives at each end by ``now``: the robot handles the operator's; each end's
        watch hears it, and restarts its radio after a silence."""
        for message in _arrivals(self.up, self.robot_end, now):
            self.robot.core.handle(message, now, self.station)
            self.heard_up.heard(now)
            if "robot" in self.watches:
                self.watches["robot"].heard(now)
        for _ in _arrivals(self.down, self.station_end, now):
            self.heard_down.heard(now)
            if "station" in self.watches:
                self.watches["station"].heard(now)
        for end_node, w in self.watches.items():
            if w.update(now):
                self.radio.restart(end_node, now)

    def silence(self, now: float) -> float:
        """The longest silence either way up to ``now``, a trailing one too."""
        return max(self.heard_up.until(now), self.heard_down.until(now))


class _AfterDeath:
    """What the robot truly does once its radio died at ``death``: when it first stood still,
    whether it moved again while the radio carried nothing, when it drove again."""

    def __init__(self, death: float) -> None:
        self.death = death
        self.stopped_after: float | None = None
        self.moved_while_dead = False
        self.drove_again: float | None = None

    def update(self, now: float, real: VehicleState, carrying: bool) -> None:
        moving = abs(real.v) > 0.01 or abs(real.omega) > 0.01
        if self.stopped_after is None and not moving:
            self.stopped_after = now - self.death
        elif (
            self.stopped_after is not None and moving and not carrying and self.drove_again is None
        ):
            self.moved_while_dead = True
        driving = abs(real.v) > 0.05 or abs(real.omega) > 0.1
        if self.stopped_after is not None and carrying and driving and self.drove_again is None:
            self.drove_again = now - self.death


def table_7_1_trial(
    seed: int,
    trial: LinkTrial,
    system: System,
    time_scale: float = 1.0,
    *,
    watch: bool = True,
    watchdog: bool = True,
) -> LinkTrialResult:
    """One Table 7.1 trial under ``system``. ``time_scale`` shortens the operation time (for
    quick runs); ``watch`` False takes freelook's radio watch away and ``watchdog`` False the
    robot's link watchdog (both on purpose, to show the verdicts can fail)."""
    thesis = system == "thesis"
    config = _trial_config(thesis, watchdog)
    truth = load_error_model("pioneer3dx").draw(seed)
    robot = simulated_robot(
        config,
        _world("square"),
        seed=seed,
        pose=(7.0, 7.0, 0.0),
        believed_pose=truth.believed((7.0, 7.0, 0.0)),
        use_localization=False,
        truth=truth,
    )
    rng = np.random.default_rng([seed, trial.number, 0x7A1])
    operation = trial.operation_time * time_scale
    node: RadioNode = "robot" if rng.random() < 0.5 else "station"
    radio = DeadRadio([(operation, node)] if trial.node_fail else [])
    link = _TrialLink(config, robot, trial, seed, radio, thesis=thesis, watch=watch)
    end = operation + (AFTER if trial.node_fail else 0.0)
    drops: _Drops | None = None  # at the end of the operation time
    after = _AfterDeath(operation)
    step = 0.01  # s: the loop's own step, finer than either end's transmission spacing
    driven = commanded = 0.0
    while robot.now() < end:
        now = robot.now()
        if drops is None and now >= operation:
            drops = _Drops.of(link.up, link.down)
        link.send(now)
        link.receive(now)
        before = robot.sim.ground_truth
        robot.run_for(step)
        if now < operation:  # the work the trial is for: driving the operator's course
            real = robot.sim.ground_truth
            driven += math.hypot(real.x - before.x, real.y - before.y)
            commanded += abs(_operator_command(now).v) * step
        if trial.node_fail and robot.now() > operation:
            carrying = not radio.silent(robot.now())
            after.update(robot.now(), robot.sim.ground_truth, carrying)
    if drops is None:
        drops = _Drops.of(link.up, link.down)
    return LinkTrialResult(
        trial.number,
        drops.up,
        drops.down,
        drops.sent_up,
        drops.sent_down,
        trial.node_fail,
        link.silence(robot.now()) > 1.0,
        after.stopped_after,
        after.moved_while_dead,
        after.drove_again,
        len(radio.restarts),
        driven,
        commanded,
    )
