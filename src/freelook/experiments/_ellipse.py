"""The thesis's ellipse (seed 004 Table 7.2) through a lossy link, with metrics that can fail.

Completion is by progress along the curve: the run is done when the robot has come round to the
last reference point, however long that takes (a robot that falls behind finishes late, one
that never gets there does not finish). The error is the robot's distance to the ellipse curve
over the whole run, from the first cycle on. Tracking runs either on the robot (the reference
travels once; the robot's own gains) or at the operator as in the thesis: the station computes
a command each time a position packet arrives, from that position alone, and repeats the last
command between arrivals, so lost position packets cost what they cost the thesis.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

from freelook.config import TrackingConfig, load_robot
from freelook.control import SampledPath, TrackingController, ellipse_points, limit_velocity
from freelook.experiments._scenarios import OPERATOR, _arrivals, _sessions, _transmit, _world
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ControlRequest,
    Heartbeat,
    ImpairedChannel,
    Impairments,
    Message,
    Mode,
    Telemetry,
    TrajectoryStart,
    VelocityCommand,
)

__all__ = ["EllipseProgress", "EllipseResult", "ellipse_trial"]


@dataclass(frozen=True)
class EllipseResult:
    completion_time: float | None  # s from the start to the last reference point; None: never
    ideal_time: float
    max_distance: float  # m from the curve, over the whole run
    mean_distance: float
    drop_percent_up: float
    drop_percent_down: float


class EllipseProgress:
    """Arc-length progress and distance to a closed curve, sampled densely."""

    def __init__(self, xs: np.ndarray, ys: np.ndarray, samples: int = 20_000) -> None:
        t = np.linspace(0.0, 1.0, len(xs))
        fine = np.linspace(0.0, 1.0, samples)
        self.points = np.column_stack((np.interp(fine, t, xs), np.interp(fine, t, ys)))
        steps = np.hypot(*np.diff(self.points, axis=0).T)
        self.arc = np.concatenate(([0.0], np.cumsum(steps)))
        self.length = float(self.arc[-1])
        self._tree = cKDTree(self.points)
        self._index = 0

    def distance(self, x: float, y: float) -> float:
        """Distance from (x, y) to the curve, m."""
        return float(self._tree.query((x, y))[0])

    def advance(self, x: float, y: float, window: float = 0.3) -> float:
        """Progress (m along the curve) of (x, y): the nearest curve point within ``window``
        metres ahead of the progress so far, never backwards (the closed curve's end meets its
        start, so a global nearest point would jump)."""
        i = self._index
        j = int(np.searchsorted(self.arc, self.arc[i] + window))
        segment = self.points[i : j + 1]
        k = int(np.argmin(np.hypot(segment[:, 0] - x, segment[:, 1] - y)))
        self._index = i + k
        return float(self.arc[self._index])


def ellipse_trial(
    seed: int,
    loss: float,
    robot_side: bool,
    *,
    tracking: TrackingConfig | None = None,
    robot_name: str = "pioneer3dx",
    end_tolerance: float = 0.02,
) -> EllipseResult:
    """The 40 s ellipse through a link losing ``loss`` of its packets each way.

    ``tracking`` replaces the gains of whichever side tracks (the robot's ``robot_tracking``
    or the operator's ``operator_tracking`` by default). The run stops when the robot comes
    within ``end_tolerance`` (along the curve) of the last point, or after twice the ideal time.
    """
    config = load_robot(robot_name)
    if tracking is not None and robot_side:
        config = config.model_copy(update={"robot_tracking": tracking})
    gains = tracking or config.operator_tracking
    world = _world("square")
    t_pts, ex, ey = ellipse_points(101)
    xs, ys = ex + world.start[0], ey + world.start[1]
    robot = SimulatedRobot(config, world, seed=seed, pose=(float(xs[0]), float(ys[0]), math.pi / 2))
    up = ImpairedChannel(Impairments(loss=loss), seed=seed * 2 + 1)
    down = ImpairedChannel(Impairments(loss=loss), seed=seed * 2)
    operator, robot_end = _sessions(config)
    # the operator holds control from the start, as a station's first packet asks for it
    robot.core.handle(ControlRequest(OPERATOR, 10), 0.0, OPERATOR)
    path = SampledPath(t_pts, xs, ys, periodic=True)
    tracker = TrackingController(b=gains.b, zeta=gains.zeta)
    limits = config.limits
    progress = EllipseProgress(xs, ys)
    started_at: float | None = None
    command: Message = Heartbeat()
    telemetry_seen: Telemetry | None = None
    next_op = next_robot = 0.0
    distances: list[float] = []
    completion: float | None = None
    dt = config.link.control_period / 4
    while robot.now() < 2.0 * path.duration + 5.0:
        now = robot.now()
        if now >= next_robot:
            next_robot += config.link.robot_tx_spacing
            _transmit(down, robot_end, robot.core.telemetry(now), now)
        for arrived in _arrivals(up, robot_end, now):
            robot.core.handle(arrived, now, OPERATOR)
            if isinstance(arrived, TrajectoryStart) and started_at is None:
                started_at = now
        for arrived in _arrivals(down, operator, now):
            if not isinstance(arrived, Telemetry):
                continue
            telemetry_seen = arrived
            if not robot_side:
                if started_at is None:
                    started_at = now
                # the thesis's station: one command per position packet, from that position
                t = now - started_at
                ref = path.at(t % path.duration if t > path.duration else t)
                v, w = tracker.command(ref, *arrived.pose)
                v, w = limit_velocity(
                    v, w, limits.max_speed, math.radians(limits.max_turn_rate_deg)
                )
                command = VelocityCommand(v, w)
        if now >= next_op:
            next_op += config.link.operator_tx_spacing
            if robot_side:
                waiting = telemetry_seen is None or telemetry_seen.mode != Mode.TRAJECTORY
                command = (
                    TrajectoryStart(
                        tuple(t_pts.tolist()), tuple(xs.tolist()), tuple(ys.tolist()), periodic=True
                    )
                    if waiting and started_at is None
                    else Heartbeat()
                )
            _transmit(up, operator, command, now)
        robot.run_for(dt)
        truth = robot.sim.ground_truth
        distances.append(progress.distance(truth.x, truth.y))
        if started_at is not None and (
            progress.advance(truth.x, truth.y) >= progress.length - end_tolerance
        ):
            completion = robot.now() - started_at
            break
    reach = np.array(distances)
    return EllipseResult(
        completion,
        path.duration,
        float(reach.max()),
        float(reach.mean()),
        robot_end.stats.report(robot.now()).drop_percent,
        operator.stats.report(robot.now()).drop_percent,
    )
