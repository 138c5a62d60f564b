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

``radio="half-duplex"`` runs the same trials through the thesis's radio link as built
(:class:`~freelook.link.HalfDuplexLink`: two half-duplex nodes on one channel, both sides'
frames colliding): the drop each way and the node failures are then the model's, not the
table's; a trial whose node locks up ends ``AFTER`` seconds later, its drop measured until the
lock-up (the thesis's trial ended there).
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from freelook.config import RobotConfig, load_error_model, load_robot
from freelook.experiments._faults import simulated_robot
from freelook.experiments._scenarios import OPERATOR, _sessions, _world
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    Accepted,
    ControlRequest,
    DeadRadio,
    HalfDuplexLink,
    HalfDuplexRadio,
    ImpairedChannel,
    Impairments,
    LinkSession,
    Message,
    RadioNode,
    RadioWatch,
    ThesisCodec,
    VelocityCommand,
    periodic_link,
)
from freelook.sim.vehicle import VehicleState

__all__ = [
    "AFTER",
    "CALIBRATION_TRIAL",
    "TABLE_7_1",
    "THESIS_FRAMES",
    "LinkTrial",
    "LinkTrialResult",
    "Radio",
    "calibrated_lock_per_collision",
    "table_7_1_trial",
]

#: s run on after a failed trial's radio died
AFTER = 30.0
System = Literal["thesis", "freelook"]
#: "table": each packet lost at the trial's own rate, its radio dying at its end (inputs);
#: "half-duplex": the thesis's link as built, drops and node failures its own
Radio = Literal["table", "half-duplex"]


class _Counted(Protocol):
    sent: int
    delivered: int


class _Channel(Protocol):
    """One direction of a trial's link: :class:`ImpairedChannel` or :class:`_HalfDuplexWay`."""

    @property
    def counters(self) -> _Counted: ...

    def send(self, data: bytes, now: float) -> None: ...

    def receive(self, now: float) -> list[bytes]: ...


class _Radios(Protocol):
    """What a trial's radio pair does: :class:`DeadRadio` or :class:`HalfDuplexLink`."""

    restarts: list[tuple[float, RadioNode]]

    def restart(self, node: RadioNode, now: float) -> None: ...

    def silent(self, now: float) -> bool: ...


class _HalfDuplexWay:
    """One direction of a :class:`HalfDuplexLink`, as a channel: frames sent by ``sender``
    at their due time, received by the other node's host."""

    def __init__(self, link: HalfDuplexLink, sender: RadioNode) -> None:
        self.link, self.sender = link, sender
        self.receiver: RadioNode = "robot" if sender == "station" else "station"
        self.counters = link.counters[link.direction(sender)]

    def send(self, data: bytes, now: float) -> None:
        self.link.send(self.sender, data, now)

    def receive(self, now: float) -> list[bytes]:
        return self.link.receive(self.receiver, now)


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


#: the Table 7.1 trial the half-duplex link's one free constant is calibrated on: its node
#: failed at the end of its 228.8 s; draws of the two hosts' clocks the model's collision rate
#: is averaged over (seeds of their own, none a trial's)
CALIBRATION_TRIAL = 1
CALIBRATION_DRAWS = 40
CALIBRATION_SEED = 70_000
#: bytes of the thesis's frames as ThesisCodec encodes them: the set-control-velocity command
#: (up) and the position packet (down) (docs/design.md §4)
THESIS_FRAMES = (15, 107)


@functools.cache
def calibrated_lock_per_collision() -> tuple[float, float]:
    """(probability a collision locks a node, the model's mean collisions per s), from trial
    :data:`CALIBRATION_TRIAL` alone: one failure seen after its operation time T is a
    lock-up rate of 1/T (the rate's maximum-likelihood estimate), and the model at the
    thesis's frames and spacings (31 ms down, 47 ms up, §6.1) collides c times a second on
    average over :data:`CALIBRATION_DRAWS` draws of the hosts' clocks, so p = 1 / (c T). No
    other trial's drop or failure enters."""
    trial = TABLE_7_1[CALIBRATION_TRIAL - 1]
    link = load_robot("pioneer3dx").link
    up, down = THESIS_FRAMES
    rates = [
        periodic_link(
            HalfDuplexRadio(),
            CALIBRATION_SEED + k,
            trial.operation_time,
            (up, link.operator_tx_spacing),
            (down, link.robot_tx_spacing),
        ).collisions
        / trial.operation_time
        for k in range(CALIBRATION_DRAWS)
    ]
    rate = statistics.fmean(rates)
    return 1.0 / (rate * trial.operation_time), rate


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
    #: s into the trial its radio died (None: it lived); collisions on the half-duplex link
    died_at: float | None = None
    collisions: int = 0  # over ``span``, the s the drop was measured over
    span: float = 0.0


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
    collisions: int = 0

    @classmethod
    def of(cls, up: _Channel, down: _Channel, radios: _Radios) -> _Drops:
        collisions = radios.collisions if isinstance(radios, HalfDuplexLink) else 0
        return cls(_drop(up), _drop(down), up.counters.sent, down.counters.sent, collisions)


def _drop(channel: _Channel) -> float:
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
        radio: _Radios,
        *,
        thesis: bool,
        watch: bool,
    ) -> None:
        self.config, self.robot, self.radio, self.thesis = config, robot, radio, thesis
        self.up: _Channel
        self.down: _Channel
        if isinstance(radio, HalfDuplexLink):
            self.up, self.down = _HalfDuplexWay(radio, "station"), _HalfDuplexWay(radio, "robot")
        else:
            self.up = ImpairedChannel(
                Impairments(loss=trial.up_loss), seed=seed * 2 + 1, lockups=radio
            )
            self.down = ImpairedChannel(
                Impairments(loss=trial.down_loss), seed=seed * 2, lockups=radio
            )
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
        """What each end has due at ``now``, each sent at its due time (the half-duplex
        link's hosts send on their own timers; the impaired channel has no timing of its own
        below the loop's step)."""
        link, up, down = self.config.link, self.up, self.down
        if now >= self.next_robot:
            due, self.next_robot = self.next_robot, self.next_robot + link.robot_tx_spacing
            for packet in self.robot_end.send(self.robot.core.telemetry(now), now):
                down.send(packet, due)
        if now >= self.next_op:
            due, self.next_op = self.next_op, self.next_op + link.operator_tx_spacing
            for packet in self.station_end.send(_operator_command(now), now):
                up.send(packet, due)
        if not self.thesis and now >= self.next_lease:
            due, self.next_lease = self.next_lease, self.next_lease + 1.0  # the control lease
            for packet in self.station_end.send(ControlRequest(OPERATOR, 10), now):
                up.send(packet, due)

    def receive(self, now: float) -> None:
        """What arrives at each end by ``now``: the robot handles the operator's; each end's
        watch hears it, and restarts its radio after a silence."""
        for message in _accepted(self.up, self.robot_end, now):
            self.robot.core.handle(message, now, self.station)
            self.heard_up.heard(now)
            if "robot" in self.watches:
                self.watches["robot"].heard(now)
        for _ in _accepted(self.down, self.station_end, now):
            self.heard_down.heard(now)
            if "station" in self.watches:
                self.watches["station"].heard(now)
        for end_node, w in self.watches.items():
            if w.update(now):
                self.radio.restart(end_node, now)

    def silence(self, now: float) -> float:
        """The longest silence either way up to ``now``, a trailing one too."""
        return max(self.heard_up.until(now), self.heard_down.until(now))


def _accepted(channel: _Channel, session: LinkSession, now: float) -> Iterator[Message]:
    """The messages ``channel`` delivers by ``now`` that ``session`` accepts."""
    for data in channel.receive(now):
        for event in session.receive(data, now):
            if isinstance(event, Accepted):
                yield event.message


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


def _radios(
    trial: LinkTrial, radio: Radio, operation: float, lock: float, rng: np.random.Generator
) -> tuple[DeadRadio | HalfDuplexLink, float | None]:
    """A trial's radio pair and when it dies (known beforehand only on the table's radio,
    which dies at the end of a failed trial's operation time, its node drawn)."""
    if radio == "half-duplex":
        spec = HalfDuplexRadio(lock_per_collision=lock, boot=DeadRadio().boot)
        return HalfDuplexLink(spec, seed=int(rng.integers(2**31))), None
    node: RadioNode = "robot" if rng.random() < 0.5 else "station"
    if trial.node_fail:
        return DeadRadio([(operation, node)]), operation
    return DeadRadio([]), None


def table_7_1_trial(
    seed: int,
    trial: LinkTrial,
    system: System,
    time_scale: float = 1.0,
    radio: Radio = "table",
    lock_per_collision: float = 0.0,
    *,
    watch: bool = True,
    watchdog: bool = True,
) -> LinkTrialResult:
    """One Table 7.1 trial under ``system`` through ``radio``. ``time_scale`` shortens the
    operation time (for quick runs); ``lock_per_collision`` is the half-duplex link's
    (calibrated by the caller); ``watch`` False takes freelook's radio watch away and
    ``watchdog`` False the robot's link watchdog (both on purpose, to show the verdicts can
    fail)."""
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
    pair, death = _radios(trial, radio, operation, lock_per_collision, rng)
    link = _TrialLink(config, robot, trial, seed, pair, thesis=thesis, watch=watch)
    end = operation + (AFTER if death is not None else 0.0)
    drops: _Drops | None = None  # at the end of the operation time (or the radio's death)
    after = _AfterDeath(death if death is not None else math.inf)
    step = 0.01  # s: the loop's own step, finer than either end's transmission spacing
    driven = commanded = 0.0
    while robot.now() < end:
        now = robot.now()
        if isinstance(pair, HalfDuplexLink) and death is None:
            first = pair.first_lockup(now)
            if first is not None and first[0] < operation:
                death = first[0]
                end, after = death + AFTER, _AfterDeath(death)
        working = now < min(operation, death if death is not None else math.inf)
        if drops is None and not working:
            drops = _Drops.of(link.up, link.down, pair)
        link.send(now)
        link.receive(now)
        before = robot.sim.ground_truth
        robot.run_for(step)
        if working:  # the work the trial is for: driving the operator's course
            real = robot.sim.ground_truth
            driven += math.hypot(real.x - before.x, real.y - before.y)
            commanded += abs(_operator_command(now).v) * step
        if death is not None and robot.now() > death:
            carrying = not pair.silent(robot.now())
            after.update(robot.now(), robot.sim.ground_truth, carrying)
    if drops is None:
        drops = _Drops.of(link.up, link.down, pair)
    return LinkTrialResult(
        trial.number,
        drops.up,
        drops.down,
        drops.sent_up,
        drops.sent_down,
        death is not None,
        link.silence(robot.now()) > 1.0,
        after.stopped_after,
        after.moved_while_dead,
        after.drove_again,
        len(pair.restarts),
        driven,
        commanded,
        death,
        drops.collisions,
        min(operation, death if death is not None else math.inf),
    )
