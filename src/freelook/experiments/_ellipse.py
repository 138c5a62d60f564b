"""The thesis's ellipse (the thesis Table 7.2, §7.1.3, §7.2), run as the thesis ran it, and
freelook's own tracking under the same conditions.

The thesis's loop (:func:`thesis_ellipse_trial`): the robot starts at rest, at the thesis's
(0, 0, 0) (the ellipse's centre, facing +x) or placed by hand a little inside the ellipse's
first point (the conditions say which); its program cycles every 100 ms (ArRobot) and sets a
command one cycle after the cycle it arrived in; it sends its localized pose every 31 ms in the
thesis's position packet (integer mm and degrees); the station runs the reach-then-advance
generator (Algorithm 5.2) over eq. 6.1's 101 points, with their reference velocities taken per
point as eq. 6.1 prints them, and the tracking controller (eq. 3.17 with k2 = b·|v_r| as eq.
3.18 prints it, b = 40, ξ = 0.8, its heading difference taken between headings in 0…360°
without wrapping, the defect §7.1.3 reports) on each position packet, limits the command
with the maximums and minimums of Algorithm 5.3 (500 mm/s, 50 °/s; 200 mm/s, 2 °/s) and sends
it every 47 ms as a set-control-velocity packet (integer mm/s and °/s). The radio loses each
direction's packets at the trial's own Table 7.2 rate and delays them; the robot's
localization may stall (its reported pose frozen, as in the thesis's trial 7).

freelook's own (:func:`freelook_ellipse_trial`): the path travels once to the robot, which
tracks it on its own 20 ms cycle and localized pose, through the same radio from the same start.

Both are measured on the simulator's truth: the lap is done when the robot has gone once round
the ellipse's centre (by the ellipse's own angle) and stands within ``NEAR`` of the last point;
the error is its distance to the curve from a tenth of the way round on.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np

from freelook.config import PhysicalTruth, RobotConfig, load_error_model, load_robot
from freelook.control import (
    ReachThenAdvance,
    TrackingController,
    ellipse_points,
    thesis_limit_velocity,
)
from freelook.experiments._ellipse_measure import NEAR, EllipseProgress, Measure
from freelook.experiments._faults import simulated_robot, thesis_gain_scale
from freelook.experiments._scenarios import OPERATOR, _arrivals, _sessions, _transmit, _world
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ControlRequest,
    Heartbeat,
    ImpairedChannel,
    Impairments,
    LinkSession,
    Message,
    Mode,
    PositionReport,
    Telemetry,
    ThesisCodec,
    TrajectoryStart,
    VelocityCommand,
)
from freelook.robot import LocalizationJob

__all__ = [
    "NEAR",
    "START_INSIDE",
    "THESIS_LOOP",
    "EllipseConditions",
    "EllipseProgress",
    "EllipseResult",
    "ThesisLoop",
    "ThesisStation",
    "freelook_ellipse_trial",
    "thesis_ellipse_trial",
]

#: s: a run not finished by then never finishes (twice the thesis's slowest, 64.47 s)
TIME_LIMIT = 130.0


@dataclass(frozen=True)
class EllipseConditions:
    """One row's inputs: the losses of its Table 7.2 trial, the radio's delay, and a
    localization stall (the robot's reported pose frozen for ``stall_seconds`` from the moment
    the robot has come ``stall_at`` of the way round; None: no stall)."""

    up_loss: float
    down_loss: float
    stall_at: float | None = None
    stall_seconds: float = 4.0
    delay: float = 0.010  # 802.15.4 at 250 kbit/s: ~4 ms on air, plus USB and node buffers
    jitter: float = 0.020
    #: where the robot starts at rest: "thesis", the thesis's (0, 0, 0), the ellipse's
    #: centre facing +x; "inside", :data:`START_INSIDE` inside the first point facing along
    #: the path (a start of ours, near the curve)
    start: Literal["thesis", "inside"] = "inside"


@dataclass(frozen=True)
class ThesisLoop:
    """The thesis's station and robot settings (the thesis §6.1, §8.1, Algorithms 5.2–5.3)."""

    b: float = 40.0
    zeta: float = 0.8
    gain_scale: float = 1.0  # 0: feed-forward only (the loop opened on purpose)
    v_max: float = 0.5
    omega_max: float = math.radians(50.0)
    v_min: float = 0.2
    omega_min: float = math.radians(2.0)
    robot_cycle: float = 0.1
    watchdog: float = 1.0  # s: the thesis stops the robot under 1 packet/s
    reach: float = 0.05  # m: "reached" for Algorithm 5.2 (the thesis gives no figure)
    # headings subtracted in 0…360° unwrapped, the thesis's §7.1.3 "programming issue"
    heading_difference: Literal["wrapped", "thesis"] = "thesis"


THESIS_LOOP = ThesisLoop()


@dataclass(frozen=True)
class EllipseResult:
    completion_time: float | None  # s from the start at rest to the last point; None: never
    ideal_time: float
    max_distance: float  # m from the curve, on the curve (from the first time it is reached)
    p95_distance: float
    mean_distance: float
    drop_percent_up: float  # of the packets sent, measured at the channel
    drop_percent_down: float
    stalls: int  # localization stalls that happened (an input, reported)
    detour_worst: float = 0.0  # m from the curve during a stall's detour
    detour_seconds: float = 0.0  # s from a stall's start until back near the curve
    crossing_worst: float = 0.0  # m from the curve while the 360°→0° jump steered
    crossing_seconds: float = 0.0  # s from the jumps' start until back near the curve


def _drop(channel: ImpairedChannel) -> float:
    c = channel.counters
    return 100.0 * (c.sent - c.delivered) / c.sent if c.sent else 0.0


def _radio(conditions: EllipseConditions, seed: int) -> tuple[ImpairedChannel, ImpairedChannel]:
    def channel(loss: float, stream: int) -> ImpairedChannel:
        imp = Impairments(loss=loss, delay=conditions.delay, jitter=conditions.jitter)
        return ImpairedChannel(imp, seed=seed * 2 + stream)

    return channel(conditions.up_loss, 1), channel(conditions.down_loss, 0)


def _thesis_robot(loop: ThesisLoop, config: RobotConfig) -> RobotConfig:
    return config.model_copy(
        update={
            "link": config.link.model_copy(update={"control_period": loop.robot_cycle}),
            "safety": config.safety.model_copy(update={"watchdog_timeout": loop.watchdog}),
        }
    )


#: m: the start at rest lies this far inside the ellipse's first point, facing along the path
#: (a robot placed by hand, not on the curve; from the ellipse's centre, 1.8 m away and facing
#: +x, the thesis's loop as printed circles its first target for over half a minute)
START_INSIDE = 0.25


@dataclass(frozen=True)
class _Course:
    """The thesis's 101 points (their parameter ``t`` and places) and the start at rest."""

    t: np.ndarray
    xs: np.ndarray
    ys: np.ndarray
    start: tuple[float, float, float]


def _course(start: Literal["thesis", "inside"] = "inside") -> _Course:
    """The thesis's 101 points around the square world's start, and the start at rest: the
    thesis's, the ellipse's centre facing +x (its (0, 0, 0)), or ``START_INSIDE`` inside the
    first point, facing along the path (+y)."""
    world = _world("square")
    t, ex, ey = ellipse_points(101)
    cx, cy = world.start[0], world.start[1]
    if start == "thesis":
        return _Course(t, ex + cx, ey + cy, (cx, cy, 0.0))
    return _Course(t, ex + cx, ey + cy, (cx + float(ex[0]) - START_INSIDE, cy, math.pi / 2))


def _placed(
    config: RobotConfig,
    robot_name: str,
    seed: int,
    start: tuple[float, float, float],
    use_localization: bool,
    exact: bool,
    truth: PhysicalTruth | None = None,
) -> SimulatedRobot:
    """The robot placed by hand at ``start``: the simulator runs the error model's draw for
    ``seed`` (``exact``: the description itself), whose placing error moves the true start;
    the program is told the nominal start."""
    if truth is None and not exact:
        truth = load_error_model(robot_name).draw(seed)
    dx, dy, dth = truth.start_offset if truth is not None else (0.0, 0.0, 0.0)
    return simulated_robot(
        config,
        _world("square"),
        seed=seed,
        pose=(start[0] + dx, start[1] + dy, start[2] + dth),
        believed_pose=start,
        use_localization=use_localization,
        truth=truth,
    )


def _centre() -> tuple[float, float]:
    start = _world("square").start
    return start[0], start[1]


class ThesisStation:
    """The thesis's station: on each position packet, Algorithm 5.2's next target, eq. 3.17's
    command towards it, limited as Algorithm 5.3 limits it; ``command`` is the newest (zero
    once the generator has no target); ``jumped`` says the heading difference behind it was
    more than half a turn (the thesis's 360°→0° defect steering)."""

    def __init__(self, xs: np.ndarray, ys: np.ndarray, loop: ThesisLoop) -> None:
        # eq. 6.1 as printed: t runs over the 101 points (x_r = 1.8·cos(tπ/50)), so the
        # targets' v_r and ω_r are derivatives per point, 0.06–0.11 m and 2–6.5° per unit of t
        self.targets = ReachThenAdvance(np.arange(len(xs)), xs, ys, periodic=True, reach=loop.reach)
        self.tracker = TrackingController(
            b=loop.b,
            zeta=loop.zeta,
            gain_form="thesis",
            gain_scale=thesis_gain_scale(loop.gain_scale),
            heading_difference=loop.heading_difference,
        )
        self.loop = loop
        self.command = VelocityCommand(0.0, 0.0)
        self.jumped = False

    def position(self, report: PositionReport) -> None:
        ref = self.targets.update(report.x, report.y, report.theta)
        if ref is None:
            self.command = VelocityCommand(0.0, 0.0)
            self.jumped = False
            return
        self.jumped = (
            abs(self.tracker.errors(ref, report.x, report.y, report.theta).e_theta) > math.pi
        )
        v, w = self.tracker.command(ref, report.x, report.y, report.theta)
        loop = self.loop
        self.command = VelocityCommand(
            *thesis_limit_velocity(v, w, loop.v_max, loop.omega_max, loop.v_min, loop.omega_min)
        )


def thesis_ellipse_trial(
    seed: int,
    conditions: EllipseConditions,
    loop: ThesisLoop = THESIS_LOOP,
    *,
    robot_name: str = "pioneer3dx",
    use_localization: bool = True,
    exact: bool = False,
    time_limit: float = TIME_LIMIT,
    truth: PhysicalTruth | None = None,
) -> EllipseResult:
    """The thesis's loop round its ellipse (see the module's docstring). The simulator runs
    the error model's draw for ``seed``, or ``truth`` (a robot unlike its description on
    purpose), or with ``exact`` the description itself."""
    config = _thesis_robot(loop, load_robot(robot_name))
    course = _course(conditions.start)
    robot = _placed(config, robot_name, seed, course.start, use_localization, exact, truth)
    up, down = _radio(conditions, seed)
    station_end = LinkSession(ThesisCodec(), spacing=config.link.operator_tx_spacing)
    robot_end = LinkSession(ThesisCodec(), spacing=config.link.robot_tx_spacing)
    station = ThesisStation(course.xs, course.ys, loop)
    measure = Measure(_centre())
    period_us = round(loop.robot_cycle * 1e6)
    next_cycle_us = period_us
    cached: Message | None = None  # the newest command the robot's receiver has
    next_op = next_robot = 0.0
    stall_until: float | None = None
    held: tuple[float, float, float] | None = None
    stalls = 0
    dt = 0.005
    while robot.now() < time_limit and not measure.finished:
        now = robot.now()
        if now >= next_robot:
            next_robot += config.link.robot_tx_spacing
            telemetry = robot.core.telemetry(now)
            if stall_until is not None and now < stall_until:
                assert held is not None
                telemetry = dataclasses.replace(telemetry, pose=held)
            _transmit(down, robot_end, telemetry, now)
        for arrived in _arrivals(up, robot_end, now):
            if isinstance(arrived, VelocityCommand):
                cached = arrived
        if round(now * 1e6) >= next_cycle_us:
            # ArRobot's cycle: what the receiver cached is set now and acts from the next cycle
            next_cycle_us += period_us
            if cached is not None:
                robot.core.handle(cached, now)
                cached = None
        for arrived in _arrivals(down, station_end, now):
            if isinstance(arrived, PositionReport):
                station.position(arrived)
                if station.jumped:
                    measure.crossing.cause(now, now + config.link.robot_tx_spacing)
        if now >= next_op:
            next_op += config.link.operator_tx_spacing
            _transmit(up, station_end, station.command, now)
        robot.run_for(dt)
        real = robot.sim.ground_truth
        measure.update(robot.now(), real.x, real.y)
        if (
            conditions.stall_at is not None
            and stalls == 0
            and measure.progress.swept >= conditions.stall_at * 2 * math.pi
        ):
            stalls = 1
            stall_until = robot.now() + conditions.stall_seconds
            held = robot.core.estimator.pose
            measure.stall.cause(robot.now(), stall_until)
    return _result(robot.now(), measure, up, down, stalls)


def _result(
    now: float, measure: Measure, up: ImpairedChannel, down: ImpairedChannel, stalls: int
) -> EllipseResult:
    distances = measure.stats()
    return EllipseResult(
        now if measure.finished else None,
        40.0,
        distances.worst,
        distances.p95,
        distances.mean,
        _drop(up),
        _drop(down),
        stalls,
        measure.stall.worst,
        measure.stall.seconds,
        measure.crossing.worst,
        measure.crossing.seconds,
    )


def freelook_ellipse_trial(
    seed: int,
    conditions: EllipseConditions,
    *,
    robot_name: str = "pioneer3dx",
    use_localization: bool = True,
    exact: bool = False,
    time_limit: float = TIME_LIMIT,
    truth: PhysicalTruth | None = None,
) -> EllipseResult:
    """freelook's tracking on the robot, from the same start through the same radio: the path
    goes to the robot once (native profile, authenticated), which tracks it with its own gains
    on its 20 ms cycle and its own localized pose; the station only sends heartbeats. The
    conditions' localization stall stops its scan matching for as long (:class:`_ScanStall`):
    its pose runs on odometry and gyro meanwhile, as freelook's does between scans."""
    config = load_robot(robot_name)
    course = _course(conditions.start)
    robot = _placed(config, robot_name, seed, course.start, use_localization, exact, truth)
    up, down = _radio(conditions, seed)
    operator, robot_end = _sessions(config)
    robot.core.handle(ControlRequest(OPERATOR, 10), 0.0, OPERATOR)
    measure = Measure(_centre())
    upload = TrajectoryStart(
        tuple(course.t.tolist()), tuple(course.xs.tolist()), tuple(course.ys.tolist())
    )
    seen: Telemetry | None = None
    next_op = next_robot = 0.0
    dt = config.link.control_period / 4
    stall = _ScanStall(robot)
    while robot.now() < time_limit and not measure.finished:
        now = robot.now()
        if now >= next_robot:
            next_robot += config.link.robot_tx_spacing
            _transmit(down, robot_end, robot.core.telemetry(now), now)
        for arrived in _arrivals(up, robot_end, now):
            robot.core.handle(arrived, now, OPERATOR)
        for arrived in _arrivals(down, operator, now):
            if isinstance(arrived, Telemetry):
                seen = arrived
        if now >= next_op:
            next_op += config.link.operator_tx_spacing
            started = seen is not None and seen.mode == Mode.TRAJECTORY
            _transmit(up, operator, Heartbeat() if started else upload, now)
        robot.run_for(dt)
        real = robot.sim.ground_truth
        measure.update(robot.now(), real.x, real.y)
        if (
            conditions.stall_at is not None
            and stall.until is None
            and measure.progress.swept >= conditions.stall_at * 2 * math.pi
        ):
            stall.until = robot.now() + conditions.stall_seconds
            measure.stall.cause(robot.now(), stall.until)
    return _result(robot.now(), measure, up, down, int(stall.until is not None))


class _ScanStall:
    """Holds a robot's scan matching back until ``until`` (None: never): its estimator is asked
    for no localization job meanwhile, so the scans of the stall are passed over and the first
    job after it carries all the odometry since (nothing of the motion is lost, as when a
    scan matcher falls behind)."""

    def __init__(self, robot: SimulatedRobot) -> None:
        self.until: float | None = None
        self._robot = robot
        estimator = robot.core.estimator
        self._job = estimator.localization_job
        # the one seam the stall needs: the estimator's own method, wrapped per instance
        setattr(estimator, "localization_job", self._maybe_job)  # noqa: B010

    def _maybe_job(self, now: float) -> LocalizationJob | None:
        if self.until is not None and now < self.until:
            return None
        return self._job(now)
