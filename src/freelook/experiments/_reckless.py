"""Reckless operators (the thesis §7.1.4), under four kinds of safety and in three conditions
of what the robot knows.

Full speed at the lab's walls and into its 0.8 m passage, by one of two operators
(:data:`Driver`): the thesis's (:mod:`._reckless_operator`: what its station's packets showed,
35 laser readings and the 8 rear sonars, and its keys), wandering the lab or driving through
the narrow passage; or one who keeps pushing, forwards or backwards, with random turns
whatever is ahead (ours: no zone that only caps the speed can stop that one). The trials are
the thesis's (Table 7.1's nine, from the lab's start for each one's operation time at its
losses, an automatic mode first and the keys after it (:mod:`._mixed_modes`), the radio
dying at the end of the four whose node failed; and the drive through the passage) or ours
(seeded random starts, 20 s, half with the link cut at a random moment). The Pioneer differs
from its description by its error model, in the lab as it is on the day (:data:`LAB_ON_THE_DAY`:
what its map file does not show, glass the laser sees through, the map a few centimetres
off). Its safety (:data:`Safety`) is the thesis's (zones that only cap
the speed, from the nearest reading all round, and a stop when fewer than one packet a second
arrives) with Algorithm 5.1 as printed (the outermost zone tested first: only B2 ever acts) or
with its erratum corrected (innermost first), none (a control run: the watchdog and the
bumpers only), or freelook's (the zones, the approach check, the obstacle memory, a 0.5 s
watchdog). It works from:

* ``SENSORS``: its range sensors alone (laser ahead, the two sonar rings), as the thesis's did;
* ``LOCALIZED_MAP``: the sensors plus the lab's map file, placed by the robot's own
  localization from a wrong start (it must find out it is lost, and while it is, a wrong pose
  puts the map's walls in the wrong places);
* ``ODOMETRY_MAP``: the sensors plus the map file placed by odometry from the exact true start.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from enum import Enum
from typing import Literal

import numpy as np

from freelook.config import ErrorModel, PhysicalTruth, RobotConfig, load_error_model, load_robot
from freelook.experiments._faults import simulated_robot
from freelook.experiments._mixed_modes import (
    GIVE_UP,
    AutomaticMode,
    AutomaticOutcome,
    automatic_mode,
)
from freelook.experiments._reckless_operator import PacketView, Passage, Wander
from freelook.experiments._scenarios import _map_file, _world
from freelook.geometry import wrap_angle
from freelook.hardware.sim import SimulatedRobot
from freelook.link import Message, SafetyFlags, VelocityCommand
from freelook.maps import lab_on_the_day

__all__ = [
    "Driver",
    "RecklessCondition",
    "RecklessResult",
    "Safety",
    "ZoneRule",
    "reckless_trial",
]

#: the thesis's zones from the nearest reading all round, or freelook's direction-aware ones
ZoneRule = Literal["nearest", "direction"]
#: the thesis's safety with Algorithm 5.1 as printed (outermost zone first), the same with its
#: erratum corrected (innermost first), none at all (a control run), or freelook's
Safety = Literal["printed", "thesis", "off", "freelook"]
#: the lab as the trials find it against its map file (furniture, a person, a closed door,
#: glass, a survey a few centimetres off)
LAB_ON_THE_DAY = lab_on_the_day()
#: s: the thesis stops the robot when fewer than one packet a second arrives (Algorithm 5.1)
THESIS_WATCHDOG = 1.0
#: the thesis's operator wandering (:class:`Wander`), the same driving through the narrow
#: passage (:class:`Passage`), or one who keeps pushing whatever is ahead (ours)
Driver = Literal["steering", "passage", "pushing"]
#: the thesis's nine trials as Table 7.1 prints them: UI → robot and robot → UI losses
#: (fractions), whether the radio node failed, the operation time (s)
THESIS_TRIALS = (
    (0.0108, 0.3665, True, 228.8),
    (0.248, 0.458, True, 189.14),
    (0.09293, 0.1469, False, 324.9),
    (0.0417, 0.189, False, 432.55),
    (0.0945, 0.2374, False, 250.7),
    (0.0849, 0.534, True, 140.0),
    (0.264, 0.1875, True, 208.43),
    (0.24, 0.284, False, 319.4),
    (0.003, 0.025, False, 351.9),
)
#: m/s: the robot stands still when both its wheels are slower than this
STILL = 1e-3
#: s: how long a trial runs on after its radio died, for the robot to stop
AFTER_CUT = 5.0
#: the narrow passage (lab.toml: x = 11, y 5.6–6.4): its centre line, and the x past which
#: the robot is through it (its rear 0.2 m beyond the wall)
PASSAGE_Y, PASSAGE_X, THROUGH_X = 6.0, 11.0, 11.5


class RecklessCondition(Enum):
    """What the robot's safety knows of its surroundings."""

    SENSORS = "range sensors only (laser, sonar, bumpers)"
    LOCALIZED_MAP = "sensors + map file, placed by localization from a wrong start"
    ODOMETRY_MAP = "sensors + map file, placed by odometry from the true start"


@dataclass(frozen=True)
class RecklessResult:
    collided: bool
    stopped_after_cut: float | None  # s from the last command to standstill, None when no cut
    stop_bound: float | None  # watchdog + one cycle + braking of the fastest wheel + motor lag
    escaped: bool  # after the run, some manoeuvre (back, back and turn, turn) moved the robot
    collided_in_run: bool = False  # touched something before the manoeuvres out
    impact_speed: float = 0.0  # m/s, the fastest it was going at a look before a contact
    #: s from the last command to the last look that saw a wheel still turning (the robot
    #: stood still somewhere between it and ``stopped_after_cut``, a control cycle later)
    moving_after_cut: float | None = None
    zone_acted: bool = False  # a zone capped a command at some cycle
    through: bool = False  # the passage operator: the robot got through the narrow passage
    passage_speed: float = 0.0  # m/s, the fastest it went with its centre in the passage
    first_contact: tuple[float, float] | None = None  # where the robot truly was, m
    automatic: AutomaticOutcome | None = None  # a thesis trial's automatic mode, before the keys
    contact_driving_itself: bool = False  # the first contact came in the automatic mode


#: where a trial starts: a random free pose (a third aimed at the passage), the lab's start
#: (the thesis's trials began at its origin, §6.1), or in the hall before the passage
Start = Literal["random", "origin", "passage"]


def _pose(start: Start, rng: np.random.Generator) -> tuple[float, float, float]:
    if start == "origin":
        x, y, theta = _world("lab").start
        return (float(x), float(y), float(theta))
    if start == "passage":  # in the hall, facing the passage, off its line by up to 0.3 m
        return (
            float(rng.uniform(7.0, 9.0)),
            float(rng.uniform(PASSAGE_Y - 0.3, PASSAGE_Y + 0.3)),
            float(rng.uniform(-0.3, 0.3)),
        )
    if rng.random() < 0.3:  # aim for the 0.8 m passage in the hall wall
        return (
            float(rng.uniform(8.5, 10.0)),
            float(rng.uniform(5.0, 7.0)),
            float(rng.uniform(-0.4, 0.4)),
        )
    return (
        float(rng.uniform(0.6, 17.4)),
        float(rng.uniform(0.6, 13.0)),
        float(rng.uniform(-math.pi, math.pi)),
    )


def _robot(
    seed: int,
    condition: RecklessCondition,
    rng: np.random.Generator,
    config: RobotConfig,
    truth: PhysicalTruth,
    start: Start = "random",
) -> SimulatedRobot:
    """A robot at a ``start`` pose (drawn again while it does not fit); its program is told
    where it was put (``truth``'s placing error away), or a wrong start to find itself
    from."""
    world = _world("lab")
    # without a map the robot has only its sensors; with one, the map loaded from its file
    robot_map = None if condition is RecklessCondition.SENSORS else _map_file("lab")
    while True:
        pose = _pose(start, rng)
        believed = truth.believed(pose)
        if condition is RecklessCondition.LOCALIZED_MAP:
            believed = (
                float(rng.uniform(1.0, 17.0)),
                float(rng.uniform(1.0, 12.5)),
                float(rng.uniform(-math.pi, math.pi)),
            )
        try:
            return simulated_robot(
                config,
                world,
                seed=seed,
                pose=pose,
                believed_pose=believed,
                use_localization=condition is RecklessCondition.LOCALIZED_MAP,
                robot_map=robot_map,
                truth=truth,
                differences=LAB_ON_THE_DAY,
            )
        except ValueError:
            if start == "origin":
                raise
            continue


@functools.cache
def _pioneer(zone_rule: ZoneRule, safety: Safety = "freelook") -> RobotConfig:
    """The Pioneer 3-DX with ``zone_rule`` and ``safety``, read once per process (the
    description is frozen). ``printed``: Algorithm 5.1 as the thesis prints it tests B2 first
    and returns, so every reading within B2 gets B2's caps and the inner zones never act: the
    outermost zone alone (an experiment's variant; the robot's own safety tests the innermost
    first)."""
    config = load_robot("pioneer3dx")
    update: dict[str, object] = {"zone_rule": zone_rule}
    if safety != "freelook":
        update |= {
            "approach_check": False,
            "obstacle_memory": 0.0,
            "watchdog_timeout": THESIS_WATCHDOG,
            "zones_enabled": safety != "off",
        }
    if safety == "printed":
        update["zones"] = config.safety.zones[-1:]
    return config.model_copy(update={"safety": config.safety.model_copy(update=update)})


@functools.cache
def _errors() -> ErrorModel:
    return load_error_model("pioneer3dx")


@dataclass(frozen=True)
class _Protocol:
    """One trial's conditions: where it starts, how long it drives, when its radio dies (None:
    never), and the losses each way (fractions)."""

    start: Start
    duration: float
    cut_at: float | None
    up_loss: float = 0.0
    down_loss: float = 0.0
    automatic: AutomaticMode | None = None  # driven first, at its own losses


def _protocol(
    trial: int, cut_link: bool, duration: float, driver: Driver, rng: np.random.Generator
) -> _Protocol:
    """``trial`` 1–9: Table 7.1's trial (from the lab's start for its operation time at its
    losses, its automatic mode first (:mod:`._mixed_modes`) for the thesis's operator, its
    radio dying at the end where the table's did); 0: ours (a random start or the passage's,
    ``duration`` s, the link cut at a random moment when ``cut_link``)."""
    if trial:
        up_loss, down_loss, node_fail, end = THESIS_TRIALS[trial - 1]
        start = _world("lab").start
        automatic = (
            automatic_mode(trial, (start[0], start[1], start[2]), (up_loss, down_loss))
            if driver == "steering"
            else None
        )
        return _Protocol(
            "origin",
            end + (AFTER_CUT if node_fail else 0.0),
            end if node_fail else None,
            up_loss,
            down_loss,
            automatic,
        )
    cut_at = float(rng.uniform(2.0, duration - AFTER_CUT)) if cut_link else None
    return _Protocol("passage" if driver == "passage" else "random", duration, cut_at)


def reckless_trial(
    seed: int,
    cut_link: bool,
    condition: RecklessCondition = RecklessCondition.SENSORS,
    duration: float = 20.0,
    zone_rule: ZoneRule = "nearest",
    safety: Safety = "freelook",
    driver: Driver = "pushing",
    trial: int = 0,
) -> RecklessResult:
    """A reckless operator: full speed at walls and into the narrow passage. ``zone_rule``:
    the thesis's zones from the nearest reading all round, or freelook's direction-aware ones;
    ``safety``: the thesis's as printed or corrected, none, or freelook's; ``driver``: the
    thesis's operator (:mod:`._reckless_operator`) wandering or through the passage, or one who
    keeps pushing; ``trial``: Table 7.1's trial 1–9 (its start, length, losses and radio
    death), or 0 for ours (``duration`` s, the link cut at random when ``cut_link``).

    Over 80 lines: one trial's loop, whose per-step measurements share the trial's state."""
    config = _pioneer(zone_rule, safety)
    rng = np.random.default_rng(seed)
    link = np.random.default_rng([seed, 7])  # the radio's losses, apart from the rest
    protocol = _protocol(trial, cut_link, duration, driver, rng)
    robot = _robot(seed, condition, rng, config, _errors().draw(seed), protocol.start)
    v_max = config.drive.max_wheel_speed
    w_max = config.drive.max_turn_rate
    cut_at = protocol.cut_at
    period = config.link.operator_tx_spacing
    operator: Wander | Passage | None = None
    view = PacketView()
    if driver == "steering":
        operator = Wander()
    elif driver == "passage":
        operator = Passage(PASSAGE_Y, THROUGH_X)
    forwards = driver != "pushing" or rng.random() < 0.8
    v_cmd = v_max * (1.0 if forwards else -1.0)
    w_cmd = float(rng.uniform(-0.3, 0.3)) * w_max
    stopped_at: float | None = None
    moving_at: float | None = None
    bound: float | None = None
    last_sent = 0.0
    drive = config.drive
    wheel_before = 0.0  # fastest wheel at the previous look, before the watchdog tripped
    elapsed = 0.0
    sent_down = 0  # the robot's position packets so far, one every robot_tx_spacing
    vehicle = robot.sim.vehicle
    contacts, speed_before, impact = 0, 0.0, 0.0
    zone_acted, through, passage_speed = False, False, 0.0
    first_contact: tuple[float, float] | None = None
    contact_itself = False
    automatic = protocol.automatic
    automatic_done: float | None = None  # s into the trial when its automatic mode finished
    while elapsed < protocol.duration:
        cut = cut_at is not None and elapsed >= cut_at
        # the automatic mode while it drives (None: the keys)
        itself = (
            automatic
            if automatic is not None and not automatic.finished and elapsed < GIVE_UP
            else None
        )
        up_loss, down_loss = (protocol.up_loss, protocol.down_loss)
        if not cut:
            message: Message
            if itself is not None:
                up_loss, down_loss = itself.losses
                message = itself.command()
            else:
                if operator is not None:
                    v_cmd, w_cmd = operator.command(view.look(elapsed), period)
                elif rng.random() < 0.05:
                    w_cmd = float(rng.uniform(-0.3, 0.3)) * w_max
                message = VelocityCommand(v_cmd, w_cmd)
            if link.random() >= up_loss:
                robot.send(message)
                last_sent = elapsed
        # once cut, look every control cycle so the watchdog's trip is seen in its own cycle
        step = config.link.control_period if cut else period
        robot.run_for(step)
        elapsed += step
        if not cut and operator is not None:
            due = int(elapsed / config.link.robot_tx_spacing)
            arrived = any(link.random() >= down_loss for _ in range(due - sent_down))
            sent_down = due
            if arrived:  # the newest of the packets sent since the last look
                telemetry = robot.core.telemetry(robot.now())
                view.arrive(elapsed, telemetry)
                if itself is not None:
                    itself.arrive(telemetry)
        if automatic is not None and automatic.finished and automatic_done is None:
            automatic_done = elapsed
        output = robot.core.control.last_output
        zone_acted |= bool(output.flags & SafetyFlags.ZONE)
        truth = robot.sim.ground_truth
        if abs(truth.x - PASSAGE_X) < 0.2 and abs(truth.y - PASSAGE_Y) < 0.4:
            passage_speed = max(passage_speed, abs(vehicle.v))
        through |= truth.x >= THROUGH_X and abs(truth.y - PASSAGE_Y) < 1.0
        if vehicle.contacts > contacts:  # it ran into something since the last look
            contacts = vehicle.contacts
            impact = max(impact, speed_before)
            if first_contact is None:
                first_contact = (truth.x, truth.y)
                contact_itself = itself is not None
        speed_before = abs(vehicle.v)
        if not cut:
            continue
        # each wheel brakes at the drive's limit, so the fastest wheel sets the stopping time
        # (its own speed: under the error model the body's turn understates it)
        wheel = max(abs(vehicle.v_left), abs(vehicle.v_right))
        tripped = bool(output.flags & SafetyFlags.WATCHDOG)
        if bound is None and tripped:
            bound = (
                config.safety.watchdog_timeout
                + config.link.control_period
                + max(wheel, wheel_before) / drive.max_deceleration
                # the motors' lag, from the fastest wheel's speed down to standing still
                + drive.motor_time_constant * math.log(max(wheel, wheel_before, STILL) / STILL)
            )
        wheel_before = wheel
        if stopped_at is None:
            if wheel < STILL:
                stopped_at = elapsed - last_sent
            else:
                moving_at = elapsed - last_sent
    in_run = robot.sim.vehicle.contacts > 0
    escaped = _escapes(robot, v_cmd if v_cmd != 0.0 else 1.0)  # driving out must not touch
    return RecklessResult(
        robot.sim.vehicle.contacts > 0,
        stopped_at,
        bound,
        escaped,
        in_run,
        impact,
        moving_at,
        zone_acted,
        through,
        passage_speed,
        first_contact,
        None if automatic is None else AutomaticOutcome(automatic.name, automatic_done),
        contact_itself,
    )


def _escapes(robot: SimulatedRobot, v_cmd: float) -> bool:
    """Whether some manoeuvre (back, back and turn, turn on the spot) moves the robot."""
    period = robot.config.link.operator_tx_spacing
    back = -0.3 * math.copysign(1.0, v_cmd)
    for v, w in ((back, 0.0), (back, 0.5), (back, -0.5), (0.0, 0.6), (0.0, -0.6), (-back, 0.0)):
        before = robot.sim.ground_truth
        for _ in range(round(2.0 / period)):
            robot.send(VelocityCommand(v, w))
            robot.run_for(period)
        after = robot.sim.ground_truth
        moved = math.hypot(after.x - before.x, after.y - before.y)
        turned = abs(wrap_angle(after.theta - before.theta))
        if moved > 0.05 or turned > 0.1:
            return True
    return False
