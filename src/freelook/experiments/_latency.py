"""Driving through delay: the thesis's operator model on a course through the lab's narrow
passage, through a link with a one-way delay, jitter, loss and bursts, under five cockpits.

The link is the native profile's, end to end on the virtual clock: two authenticated
sessions (:class:`~freelook.link.LinkSession`, roles robot and operator), the station's clock
estimate from the robot's echoes, each motion command stamped with its expiry on the robot's
clock, the robot's round trips from the station's echoes, all through a channel each way with
the delay, a uniform jitter, Bernoulli loss and bursts (:class:`Bursts`: the link stalls and
then delivers what it held at once, as a radio retrying or a cell handing over does).

The operator (:class:`Driver`) is the reckless experiment's thesis operator
(:mod:`._reckless_operator`: the keys, the 0.7 s reaction to what the display shows), steering
as its passage driver does, towards a point :data:`~._reckless_operator.AIM_AHEAD` ahead on
the course, at full speed while the point lies ahead (ours: slower as it lies further to the
side, on the spot beyond :data:`TURN_ON_SPOT`); when the display has shown no progress along
the course for a while it backs out a little and goes on (ours: :data:`STUCK_SECONDS`); it
presses space when the display shows the robot at the course's end. What the display shows is
the cockpit's (:data:`Cockpit`):

* ``plain``: the newest report's pose, as it was a one-way delay ago;
* ``prediction``: the station's prediction (:class:`~freelook.operator.MotionPredictor`) of
  where the robot is when a command sent now lands;
* ``prediction+speed``: the same, the robot's delay rule capping its speed to what it can stop
  from within its clear range at the round trip it measures;
* ``click-to-go``: while the round trip the station measures is over the offer's 1 s, the
  operator clicks the course's corners one after the other (a goal, the robot drives itself,
  the next click when the display shows it within :data:`NEXT_GOAL` of the one in force);
  otherwise as ``prediction+speed``;
* ``plain-no-expiry``: plain, the commands carrying no expiry (the control for the late
  commands: what a burst's queued commands do without it).

Measured on the simulator's truth: the time from the start to within :data:`REACH` of the
course's end, the distance to the course, contacts, stops on the way (standing still for
:data:`STOP_SECONDS`), and the motion commands that arrived later than their expected arrival
plus the command lifetime and were acted on (from the channel's own record of each packet's
delay: the truth the robot does not know).
"""

from __future__ import annotations

import functools
import itertools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from freelook.config import RobotConfig, load_error_model, load_robot
from freelook.experiments._faults import simulated_robot
from freelook.experiments._reckless_operator import (
    AIM_AHEAD,
    AIM_GAIN,
    REACTION_TIME,
    V_MAX,
    Keys,
)
from freelook.experiments._scenarios import OPERATOR, ROBOT, _world
from freelook.geometry import wrap_angle
from freelook.link import (
    Accepted,
    ControlRequest,
    GoalStart,
    Heartbeat,
    ImpairedChannel,
    Impairments,
    LinkSession,
    Message,
    Mode,
    NativeCodec,
    RadioLockups,
    Reply,
    Telemetry,
    VelocityCommand,
    derive_key,
)
from freelook.operator import MotionPredictor
from freelook.safety import DelaySpeedRule

__all__ = [
    "COURSE",
    "DELAYS",
    "LIFETIME",
    "OFFER_ROUND_TRIP",
    "TIME_LIMIT",
    "Bursts",
    "Cockpit",
    "LatencyConditions",
    "LatencyResult",
    "latency_trial",
]

#: the course through the lab (m): from the start along the hall, up to the passage's line,
#: through the 0.8 m passage (x = 11, y 5.6–6.4) and round a last corner in the room
COURSE = ((3.0, 3.0), (7.0, 3.0), (8.0, 6.0), (12.5, 6.0), (12.5, 8.0))
#: s: the one-way delays of the experiment
DELAYS = (0.0, 0.1, 0.25, 0.5, 1.0, 2.0)
Cockpit = Literal["plain", "prediction", "prediction+speed", "click-to-go", "plain-no-expiry"]
#: m: the course is done when the robot is this near its end
REACH = 0.3
#: s: a run not done by then is not done
TIME_LIMIT = 240.0
#: a bearing to the aim point beyond this turns on the spot (rad; ours)
TURN_ON_SPOT = math.radians(60.0)
#: m: click-to-go's operator clicks the next corner when the display shows the robot this near
#: the goal in force
NEXT_GOAL = 0.6
#: the operator backs out (ours): after ``STUCK_SECONDS`` without the display showing
#: ``PROGRESS`` m more along the course, ↓ held towards ``BACK_SPEED`` for ``BACK_SECONDS``
STUCK_SECONDS, PROGRESS, BACK_SPEED, BACK_SECONDS = 4.0, 0.1, 0.25, 4.0
#: s: the round trip above which the cockpit offers click-to-go (``[goal] offer_round_trip``)
OFFER_ROUND_TRIP = 1.0
#: s: standing still this long on the way counts as a stop
STOP_SECONDS = 0.5
#: s: how long past its expected arrival a motion command may act (the station's default)
LIFETIME = 0.5
#: m/s: slower than this is standing still
STILL = 0.01
_KEY = derive_key("latency experiment")


@dataclass(frozen=True)
class LatencyConditions:
    """The link of one row: one-way delay and uniform jitter (s), loss each way, bursts per
    second and their mean length (s)."""

    delay: float
    jitter: float = 0.1
    loss: float = 0.05
    burst_rate: float = 1.0 / 20.0
    burst_seconds: float = 1.0


class Bursts:
    """One direction of the link with bursts: while it stalls (intervals of a Poisson process)
    packets are held, and at the stall's end what was held goes on through ``channel`` at once.
    ``delays`` records each delivered packet's time through the whole of it, keyed by the
    packet's bytes (the truth of its delay)."""

    def __init__(self, channel: ImpairedChannel, rate: float, seconds: float, seed: int) -> None:
        self.channel = channel
        self.stalls = RadioLockups(rate, seconds, seed)
        self._held: list[tuple[float, bytes]] = []
        self._sent_at: dict[bytes, float] = {}

    def send(self, data: bytes, now: float) -> None:
        self._sent_at.setdefault(data, now)
        if self.stalls.silent(now):
            ends = [end for start, end in self.stalls.intervals if start <= now < end]
            self._held.append((ends[-1], data))
            return
        self.channel.send(data, now)

    def receive(self, now: float) -> list[tuple[bytes, float]]:
        """What arrives now, each with how long it took from its first send."""
        released = [data for end, data in self._held if end <= now]
        self._held = [(end, data) for end, data in self._held if end > now]
        for data in released:
            self.channel.send(data, now)
        return [(data, now - self._sent_at.pop(data, now)) for data in self.channel.receive(now)]


@dataclass(frozen=True)
class LatencyResult:
    done_in: float | None  # s from the start to within REACH of the end; None: not done
    mean_error: float  # m from the course, over the run
    max_error: float
    collided: bool
    stops: int  # standing still STOP_SECONDS on the way (not at the start, not at the end)
    late_arrived: int  # motion commands later than expected arrival + lifetime
    late_acted: int  # of those, the ones the robot acted on
    late_refused: int  # motion commands the robot refused as late (its own count)
    travelled: float  # m the robot truly went


def _course_distance(x: float, y: float) -> tuple[float, float]:
    """(distance to the course, how far along it the nearest point lies), m."""
    best, along, walked = math.inf, 0.0, 0.0
    for (ax, ay), (bx, by) in itertools.pairwise(COURSE):
        dx, dy = bx - ax, by - ay
        length = math.hypot(dx, dy)
        u = min(1.0, max(0.0, ((x - ax) * dx + (y - ay) * dy) / (length * length)))
        d = math.hypot(ax + u * dx - x, ay + u * dy - y)
        if d < best:
            best, along = d, walked + u * length
        walked += length
    return best, along


def _course_point(along: float) -> tuple[float, float]:
    """The course's point ``along`` m from its start (its end beyond it)."""
    for (ax, ay), (bx, by) in itertools.pairwise(COURSE):
        length = math.hypot(bx - ax, by - ay)
        if along <= length:
            u = along / length
            return ax + u * (bx - ax), ay + u * (by - ay)
        along -= length
    return COURSE[-1]


class Driver:
    """The operator: acts on what the display showed :data:`REACTION_TIME` ago, through the
    keys, steering towards a point ``AIM_AHEAD`` along the course (never back along it)."""

    def __init__(self) -> None:
        self.keys = Keys()
        self._shown: list[tuple[float, tuple[float, float, float]]] = []
        self._along = 0.0
        self._progress = (0.0, 0.0)  # (when, how far along) the display last showed progress
        self._backing_until = -math.inf
        self.finished = False

    def show(self, now: float, pose: tuple[float, float, float]) -> None:
        self._shown.append((now, pose))

    def seen(self, now: float) -> tuple[float, float, float] | None:
        """The newest display the operator has taken in by ``now``."""
        while len(self._shown) > 1 and self._shown[1][0] <= now - REACTION_TIME:
            self._shown.pop(0)
        if not self._shown or self._shown[0][0] > now - REACTION_TIME:
            return None
        return self._shown[0][1]

    def command(self, now: float, dt: float) -> VelocityCommand:
        pose = self.seen(now)
        if pose is None or self.finished:
            return VelocityCommand(*self.keys.step(dt, 0.0, 0.0))
        x, y, theta = pose
        if math.hypot(x - COURSE[-1][0], y - COURSE[-1][1]) <= REACH:
            self.finished = True
            self.keys.space()
            return VelocityCommand(0.0, 0.0)
        _, along = _course_distance(x, y)
        self._along = max(self._along, along)
        if self._along >= self._progress[1] + PROGRESS:
            self._progress = (now, self._along)
        if now < self._backing_until:  # backing out of where it stuck
            return VelocityCommand(*self.keys.step(dt, -BACK_SPEED, 0.0))
        if now - self._progress[0] > STUCK_SECONDS:
            self._backing_until = now + BACK_SECONDS
            self._progress = (now + BACK_SECONDS, self._along)
        ax, ay = _course_point(self._along + AIM_AHEAD)
        bearing = wrap_angle(math.atan2(ay - y, ax - x) - theta)
        ahead = max(0.0, 1.0 - abs(bearing) / TURN_ON_SPOT)
        return VelocityCommand(*self.keys.step(dt, V_MAX * ahead, AIM_GAIN * bearing))


class Clicker:
    """Click-to-go's operator: the course's corners one after the other, the next when the
    display shows the robot within :data:`NEXT_GOAL` of the one in force."""

    def __init__(self) -> None:
        self.corner = 1

    def command(self, shown: tuple[float, float, float] | None, mode: Mode) -> Message:
        gx, gy = COURSE[self.corner]
        near = shown is not None and math.hypot(shown[0] - gx, shown[1] - gy) <= NEXT_GOAL
        if near and self.corner < len(COURSE) - 1:
            self.corner += 1
            gx, gy = COURSE[self.corner]
            return GoalStart(gx, gy)
        # the goal again until a report shows the robot driving to it, then the heartbeat
        return Heartbeat() if mode is Mode.GOAL else GoalStart(gx, gy)


@functools.cache
def _pioneer(speed_rule: bool) -> RobotConfig:
    """The Pioneer 3-DX with freelook's safety, with its delay rule (``speed_rule``)."""
    config = load_robot("pioneer3dx")
    if not speed_rule:
        return config
    rules = (*config.safety.rules, "delay_speed")
    return config.model_copy(update={"safety": config.safety.model_copy(update={"rules": rules})})


def _link(conditions: LatencyConditions, seed: int) -> tuple[Bursts, Bursts]:
    """(up, down): the link each way, each with its own draws."""

    def way(stream: int) -> Bursts:
        imp = Impairments(loss=conditions.loss, delay=conditions.delay, jitter=conditions.jitter)
        channel = ImpairedChannel(imp, seed=seed * 4 + stream)
        return Bursts(
            channel, conditions.burst_rate, conditions.burst_seconds, seed * 4 + 2 + stream
        )

    return way(0), way(1)


def _sessions(config: RobotConfig, seed: int, expiry: bool) -> tuple[LinkSession, LinkSession]:
    """(station, robot) sessions as shipped (their handshake, max age and retries), the
    commands expiring ``LIFETIME`` past their expected arrival (``expiry``) or not."""
    link = config.link
    station = LinkSession(
        NativeCodec(_KEY, sender=OPERATOR),
        spacing=link.operator_tx_spacing,
        role="operator",
        nonce=f"station {seed}".encode(),
        command_lifetime=LIFETIME if expiry else None,
    )
    robot = LinkSession(
        NativeCodec(_KEY, sender=ROBOT),
        spacing=link.robot_tx_spacing,
        role="robot",
        nonce=f"robot {seed}".encode(),
    )
    return station, robot


def latency_trial(seed: int, cockpit: Cockpit, conditions: LatencyConditions) -> LatencyResult:
    """One drive along :data:`COURSE` (see the module's docstring).

    Over 80 lines: one run's loop, whose two link ends, operator and measures share its state."""
    config = _pioneer(cockpit in ("prediction+speed", "click-to-go"))
    truth = load_error_model("pioneer3dx").draw(seed)
    start = (COURSE[0][0], COURSE[0][1], 0.0)
    dx, dy, dth = truth.start_offset
    robot = simulated_robot(
        config,
        _world("lab"),
        seed=seed,
        pose=(start[0] + dx, start[1] + dy, start[2] + dth),
        believed_pose=start,
        truth=truth,
    )
    up, down = _link(conditions, seed)
    station, robot_end = _sessions(config, seed, cockpit != "plain-no-expiry")
    rules = [r for r in robot.core.safety.rules if isinstance(r, DelaySpeedRule)]

    def measured(station: int, trip: float, now: float) -> None:
        for rule in rules:
            rule.measured(now, trip)

    robot_end.round_trips.on_round_trip = measured
    robot.core.handle(ControlRequest(OPERATOR, 10), 0.0, OPERATOR)
    predictor = MotionPredictor(config)
    driver, clicker = Driver(), Clicker()
    shown_mode = Mode.IDLE
    report: Telemetry | None = None  # the newest report the station has
    # later than this is late by the truth: the slowest ordinary arrival plus the lifetime
    late_after = conditions.delay + conditions.jitter + LIFETIME
    period = config.link.operator_tx_spacing
    dt = config.link.control_period / 2
    next_op = next_tx = 0.0
    errors: list[float] = []
    done_in: float | None = None
    stops, still_since, moved_once = 0, None, False
    late_arrived = late_acted = 0
    travelled, last = 0.0, robot.sim.ground_truth
    vehicle = robot.sim.vehicle
    while robot.now() < TIME_LIMIT and done_in is None:
        now = robot.now()
        if now >= next_tx:
            next_tx += config.link.robot_tx_spacing
            for packet in robot_end.send(robot.core.telemetry(now), now):
                down.send(packet, now)
        for packet in robot_end.poll(now):
            down.send(packet, now)
        for packet in station.poll(now):
            up.send(packet, now)
        for data, took in up.receive(now):
            for event in robot_end.receive(data, now, source="station"):
                if isinstance(event, Reply):
                    for packet in event.packets:
                        down.send(packet, now)
                elif isinstance(event, Accepted):
                    arrived = event.message
                    late = isinstance(arrived, VelocityCommand) and took > late_after
                    refused = robot.core.intake.log.late_commands
                    robot.core.handle(
                        arrived, now, OPERATOR, event.permissions, event.decoded.expires
                    )
                    if late:
                        late_arrived += 1
                        late_acted += int(robot.core.intake.log.late_commands == refused)
        for data, _ in down.receive(now):
            for event in station.receive(data, now, source="robot"):
                if isinstance(event, Reply):
                    for packet in event.packets:
                        up.send(packet, now)
                elif isinstance(event, Accepted) and isinstance(event.message, Telemetry):
                    report = event.message
                    shown_mode = report.mode
                    predictor.observe(report, now, station.clock.offset)
        if now >= next_op:
            next_op += period
            if report is not None:  # the display, as the cockpit draws it now
                driver.show(now, _shown(cockpit, predictor, report, now))
            message: Message = driver.command(now, period)
            trip = station.clock.min_round_trip
            if cockpit == "click-to-go" and trip is not None and trip > OFFER_ROUND_TRIP:
                message = clicker.command(driver.seen(now), shown_mode)
            for packet in station.send(message, now):
                up.send(packet, now)
            predictor.sent(message, now)
        robot.run_for(dt)
        real = robot.sim.ground_truth
        travelled += math.hypot(real.x - last.x, real.y - last.y)
        last = real
        errors.append(_course_distance(real.x, real.y)[0])
        if math.hypot(real.x - COURSE[-1][0], real.y - COURSE[-1][1]) <= REACH:
            done_in = robot.now()
        standing = abs(vehicle.v) < STILL and abs(vehicle.omega) < STILL
        moved_once |= not standing
        if standing and moved_once:
            still_since = robot.now() if still_since is None else still_since
            if robot.now() - still_since >= STOP_SECONDS > robot.now() - dt - still_since:
                stops += 1
        else:
            still_since = None
    return LatencyResult(
        done_in,
        float(np.mean(errors)) if errors else 0.0,
        max(errors, default=0.0),
        vehicle.contacts > 0,
        stops,
        late_arrived,
        late_acted,
        robot.core.intake.log.late_commands,
        travelled,
    )


def _shown(
    cockpit: Cockpit, predictor: MotionPredictor, report: Telemetry, now: float
) -> tuple[float, float, float]:
    """The pose the cockpit shows the operator at ``now``."""
    if cockpit.startswith("plain"):
        return report.pose
    prediction = predictor.predict(now)
    if prediction is None:
        return report.pose
    lands = prediction.arrival
    return (lands.x, lands.y, lands.theta)
