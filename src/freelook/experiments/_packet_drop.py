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

from dataclasses import dataclass
from typing import Literal

import numpy as np

from freelook.config import load_error_model, load_robot
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


def _drop(channel: ImpairedChannel) -> float:
    c = channel.counters
    return 100.0 * (c.sent - c.delivered) / c.sent if c.sent else 0.0


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
    config = load_robot("pioneer3dx")
    thesis = system == "thesis"
    safety = config.safety.model_copy(
        update={"watchdog_timeout": (1.0 if thesis else config.safety.watchdog_timeout)}
    )
    if not watchdog:
        safety = safety.model_copy(update={"watchdog_timeout": 1e6})
    link = config.link.model_copy(update={"control_period": 0.1}) if thesis else config.link
    config = config.model_copy(update={"safety": safety, "link": link})
    truth = load_error_model("pioneer3dx").draw(seed)
    robot = SimulatedRobot(
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
    up = ImpairedChannel(Impairments(loss=trial.up_loss), seed=seed * 2 + 1, lockups=radio)
    down = ImpairedChannel(Impairments(loss=trial.down_loss), seed=seed * 2, lockups=radio)
    if thesis:
        station_end = LinkSession(ThesisCodec(), spacing=config.link.operator_tx_spacing)
        robot_end = LinkSession(ThesisCodec(), spacing=config.link.robot_tx_spacing)
    else:
        station_end, robot_end = _sessions(config)
        robot.core.handle(ControlRequest(OPERATOR, 10), 0.0, OPERATOR)
    station = OPERATOR if not thesis else 0
    watches = {"station": RadioWatch(), "robot": RadioWatch()} if watch and not thesis else {}
    heard_up, heard_down = _Silence(), _Silence()
    end = operation + (AFTER if trial.node_fail else 0.0)
    snapshot: tuple[float, float, int, int] | None = None
    stopped_after: float | None = None
    moved_while_dead = False
    drove_again: float | None = None
    next_op = next_robot = next_lease = 0.0
    step = 0.01  # s: the loop's own step, finer than either end's transmission spacing
    while robot.now() < end:
        now = robot.now()
        if snapshot is None and now >= operation:
            snapshot = (_drop(up), _drop(down), up.counters.sent, down.counters.sent)
        if now >= next_robot:
            next_robot += config.link.robot_tx_spacing
            _transmit(down, robot_end, robot.core.telemetry(now), now)
        if now >= next_op:
            next_op += config.link.operator_tx_spacing
            phase = int(now // 5) % 2
            _transmit(
                up,
                station_end,
                VelocityCommand(0.3, 0.0) if phase == 0 else VelocityCommand(0.0, 0.5),
                now,
            )
        if not thesis and now >= next_lease:
            next_lease += 1.0  # the station's control lease, as its link sends it
            _transmit(up, station_end, ControlRequest(OPERATOR, 10), now)
        for message in _arrivals(up, robot_end, now):
            robot.core.handle(message, now, station)
            heard_up.heard(now)
            if "robot" in watches:
                watches["robot"].heard(now)
        for _ in _arrivals(down, station_end, now):
            heard_down.heard(now)
            if "station" in watches:
                watches["station"].heard(now)
        for end_node, w in watches.items():
            if w.update(now):
                radio.restart(end_node, now)  # type: ignore[arg-type]
        robot.run_for(step)
        if trial.node_fail and robot.now() > operation:
            real = robot.sim.ground_truth
            moving = abs(real.v) > 0.01 or abs(real.omega) > 0.01
            carrying = not radio.silent(robot.now())
            if stopped_after is None and not moving:
                stopped_after = robot.now() - operation
            elif stopped_after is not None and moving and not carrying and drove_again is None:
                moved_while_dead = True
            driving = abs(real.v) > 0.05 or abs(real.omega) > 0.1
            if stopped_after is not None and carrying and driving and drove_again is None:
                drove_again = robot.now() - operation
    if snapshot is None:
        snapshot = (_drop(up), _drop(down), up.counters.sent, down.counters.sent)
    drop_up, drop_down, sent_up, sent_down = snapshot
    silence = max(heard_up.until(robot.now()), heard_down.until(robot.now()))
    return LinkTrialResult(
        trial.number,
        drop_up,
        drop_down,
        sent_up,
        sent_down,
        trial.node_fail,
        silence > 1.0,
        stopped_after,
        moved_while_dead,
        drove_again,
        len(radio.restarts),
    )
