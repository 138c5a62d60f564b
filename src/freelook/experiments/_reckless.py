"""Reckless operators (the thesis §7.1.4), under three kinds of safety and in three conditions of
what the robot knows.

Full speed at the lab's walls and into its 0.8 m passage, half the trials with the link cut
mid-run, by one of two operators (:data:`Driver`): the thesis's, who steers at full speed
through the lab and its passage, turning away from what the robot's readings show ahead a
human's reaction time late; or one who keeps pushing, forwards or backwards, with random turns
whatever is ahead (no zone that only caps the speed can stop that one), on a Pioneer that
differs from its
description by its error model, in the lab as it is on the day (:data:`LAB_ON_THE_DAY`:
what its map file does not show, glass the laser sees through, the map a few centimetres
off). Its safety (:data:`Safety`) is the thesis's (zones that only cap the speed, from the
nearest reading all round, and a stop when fewer than one packet a second arrives), none (a
control run: the watchdog and the bumpers only), or freelook's (the zones, the approach
check, the obstacle memory, a 0.5 s watchdog). It works from:

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
from freelook.experiments._scenarios import _map_file, _world
from freelook.geometry import wrap_angle
from freelook.hardware.sim import SimulatedRobot
from freelook.link import SafetyFlags, VelocityCommand
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
#: the thesis's safety, none at all (a control run), or freelook's
Safety = Literal["thesis", "off", "freelook"]
#: the lab as the trials find it against its map file (furniture, a person, a closed door,
#: glass, a survey a few centimetres off)
LAB_ON_THE_DAY = lab_on_the_day()
#: s: the thesis stops the robot when fewer than one packet a second arrives (Algorithm 5.1)
THESIS_WATCHDOG = 1.0
#: the thesis's operator, who steers away from what is ahead, or one who keeps pushing
Driver = Literal["steering", "pushing"]
#: m: the steering operator turns away from anything this near ahead (within ±AHEAD_HALF_ANGLE)
LOOK_AHEAD = 1.0
AHEAD_HALF_ANGLE = math.radians(40.0)
#: m/s: the robot stands still when both its wheels are slower than this
STILL = 1e-3
#: m: within this the steering operator turns on the spot instead
CLOSE_AHEAD = 0.5
#: s: how late the steering operator acts on what the readings showed: a teleoperator's
#: reaction (about half a second) plus the picture's way to the station (the robot's 100 ms
#: cycle, its 31 ms packets, the display)
REACTION_TIME = 0.7


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


def _robot(
    seed: int,
    condition: RecklessCondition,
    rng: np.random.Generator,
    config: RobotConfig,
    truth: PhysicalTruth,
) -> SimulatedRobot:
    """A robot at a random free pose, a third of them aimed at the passage; its program is
    told where it was put (``truth``'s placing error away), or a wrong start to find itself
    from."""
    world = _world("lab")
    # without a map the robot has only its sensors; with one, the map loaded from its file
    robot_map = None if condition is RecklessCondition.SENSORS else _map_file("lab")
    while True:
        if rng.random() < 0.3:  # aim for the 0.8 m passage in the hall wall
            pose = (
                float(rng.uniform(8.5, 10.0)),
                float(rng.uniform(5.0, 7.0)),
                float(rng.uniform(-0.4, 0.4)),
            )
        else:
            pose = (
                float(rng.uniform(0.6, 17.4)),
                float(rng.uniform(0.6, 13.0)),
                float(rng.uniform(-math.pi, math.pi)),
            )
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
            continue


@functools.cache
def _pioneer(zone_rule: ZoneRule, safety: Safety = "freelook") -> RobotConfig:
    """The Pioneer 3-DX with ``zone_rule`` and ``safety``, read once per process (the
    description is frozen)."""
    config = load_robot("pioneer3dx")
    update: dict[str, object] = {"zone_rule": zone_rule}
    if safety != "freelook":
        update |= {
            "approach_check": False,
            "obstacle_memory": 0.0,
            "watchdog_timeout": THESIS_WATCHDOG,
            "zones_enabled": safety == "thesis",
        }
    return config.model_copy(update={"safety": config.safety.model_copy(update=update)})


@functools.cache
def _errors() -> ErrorModel:
    return load_error_model("pioneer3dx")


def reckless_trial(
    seed: int,
    cut_link: bool,
    condition: RecklessCondition = RecklessCondition.SENSORS,
    duration: float = 20.0,
    zone_rule: ZoneRule = "nearest",
    safety: Safety = "freelook",
    driver: Driver = "pushing",
) -> RecklessResult:
    """A reckless operator: full speed at walls and into the narrow passage. ``zone_rule``:
    the thesis's zones from the nearest reading all round, or freelook's direction-aware ones;
    ``safety``: the thesis's, none, or freelook's; ``driver``: the thesis's steering operator
    or one who keeps pushing.

    Over 80 lines: one trial's loop, whose per-step measurements share the trial's state."""
    config = _pioneer(zone_rule, safety)
    rng = np.random.default_rng(seed)
    robot = _robot(seed, condition, rng, config, _errors().draw(seed))
    v_max = config.drive.max_wheel_speed
    w_max = config.drive.max_turn_rate
    cut_at = float(rng.uniform(2.0, duration - 5.0)) if cut_link else None
    period = config.link.operator_tx_spacing
    steer = None
    if driver == "steering":
        # the fastest the operator's mode allows, so its turns are never scaled down
        v_max = config.limits.max_speed
        w_max = math.radians(config.limits.max_turn_rate_deg)
        steer = _Steering(robot, v_max, w_max)
        steer.watch_start()
    forwards = driver == "steering" or rng.random() < 0.8
    v_cmd = v_max * (1.0 if forwards else -1.0)
    w_cmd = float(rng.uniform(-0.3, 0.3)) * w_max
    stopped_at: float | None = None
    moving_at: float | None = None
    bound: float | None = None
    last_sent = 0.0
    drive = config.drive
    wheel_before = 0.0  # fastest wheel at the previous look, before the watchdog tripped
    elapsed = 0.0
    vehicle = robot.sim.vehicle
    contacts, speed_before, impact = 0, 0.0, 0.0
    while elapsed < duration:
        cut = cut_at is not None and elapsed >= cut_at
        if not cut:
            v_now = v_cmd
            steered = steer.command(elapsed) if steer is not None else None
            if steered is not None:
                v_now, w_cmd = steered
            elif rng.random() < 0.05:
                w_cmd = float(rng.uniform(-0.3, 0.3)) * w_max
            robot.send(VelocityCommand(v_now, w_cmd))
            last_sent = elapsed
        # once cut, look every control cycle so the watchdog's trip is seen in its own cycle
        step = config.link.control_period if cut else period
        robot.run_for(step)
        elapsed += step
        if vehicle.contacts > contacts:  # it ran into something since the last look
            contacts = vehicle.contacts
            impact = max(impact, speed_before)
        speed_before = abs(vehicle.v)
        if not cut:
            continue
        # each wheel brakes at the drive's limit, so the fastest wheel sets the stopping time
        # (its own speed: under the error model the body's turn understates it)
        wheel = max(abs(vehicle.v_left), abs(vehicle.v_right))
        tripped = bool(robot.core.control.last_output.flags & SafetyFlags.WATCHDOG)
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
    escaped = _escapes(robot, v_cmd)  # driving out must not touch anything either
    return RecklessResult(
        robot.sim.vehicle.contacts > 0, stopped_at, bound, escaped, in_run, impact, moving_at
    )


class _Steering:
    """The thesis's operator: full speed ahead, turning as hard as the mode allows away from
    anything the robot's range readings (which its position packets carry: the laser, the
    front sonar for what the laser sees through) show within :data:`LOOK_AHEAD` ahead, and
    turning on the spot when it is within :data:`CLOSE_AHEAD`, :data:`REACTION_TIME` after
    the readings showed it."""

    def __init__(self, robot: SimulatedRobot, v_max: float, w_max: float) -> None:
        config = robot.config
        assert config.laser is not None
        half = math.radians(config.laser.fov_deg) / 2.0
        bearings = np.linspace(-half, half, config.laser.beams)
        self._ahead = np.abs(bearings) <= AHEAD_HALF_ANGLE
        self._left = self._ahead & (bearings > 0)
        self._right = self._ahead & (bearings < 0)
        sonar = np.radians(config.sonar.front_deg) if config.sonar is not None else np.zeros(0)
        self._sonar_ahead = np.abs(sonar) <= AHEAD_HALF_ANGLE
        self._robot = robot
        self._v, self._w = v_max, w_max
        self._seen: list[tuple[float, tuple[float, float] | None]] = []  # (when, its call)

    def _call(self) -> tuple[float, float] | None:
        """What the readings now call for: (v, ω), or None when nothing is near ahead."""
        sim = self._robot.sim
        frame = sim.latest_laser
        if frame is None:
            return None
        ranges = frame.ranges
        nearest = float(ranges[self._ahead].min())
        sonar = sim.latest_sonar
        if sonar is not None and self._sonar_ahead.any():
            front = sonar.ranges[: len(self._sonar_ahead)][self._sonar_ahead]
            nearest = min(nearest, float(front.min()))
        if nearest >= LOOK_AHEAD:
            return None
        # towards the side with more room; on the spot when it is close
        w = (
            self._w
            if float(ranges[self._left].mean()) >= float(ranges[self._right].mean())
            else -self._w
        )
        return (0.0 if nearest < CLOSE_AHEAD else self._v), w

    def watch_start(self) -> None:
        """Look at the robot's first readings, standing, before driving off: an operator has
        the picture of where the robot stands on the screen for as long as they like, and
        does not drive the first reaction time blind (a robot put down facing a wall turns
        away from it first)."""
        robot = self._robot
        while robot.sim.latest_laser is None:
            robot.run_for(robot.config.link.control_period)
        self._seen = [(-math.inf, self._call())]

    def command(self, now: float) -> tuple[float, float] | None:
        """The (v, ω) the operator commands now (None: nothing ahead to steer from)."""
        self._seen.append((now, self._call()))
        while len(self._seen) > 1 and self._seen[1][0] <= now - REACTION_TIME:
            self._seen.pop(0)
        when, acted = self._seen[0]
        return acted if when <= now - REACTION_TIME else None


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
