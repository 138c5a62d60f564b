"""The trajectories an operator station starts: on the robot, or tracked by the station itself
(the thesis's operator-side mode), and the reference each follows (sans-I/O)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from freelook.config import RobotConfig
from freelook.control import SampledPath, TrackingController, limit_velocity
from freelook.link import Telemetry, TrajectoryStart, VelocityCommand
from freelook.operator._browser import TrajectoryRequest
from freelook.operator._planning import Clearance, ellipse_from, waypoint_path
from freelook.types import Mode

__all__ = ["RunningPath", "Trajectories"]


@dataclass
class RunningPath:
    """A trajectory and when it started."""

    path: SampledPath
    t0: float


class Trajectories:
    """The station's trajectories: ``operator`` the one it tracks itself (any other input
    ends it), ``robot`` the one sent to the robot (running once the robot reports trajectory
    mode), and the points of the newest for the page."""

    def __init__(self, config: RobotConfig) -> None:
        self.config = config
        self.tracker = TrackingController(
            b=config.operator_tracking.b, zeta=config.operator_tracking.zeta
        )
        self.reference_path: list[list[float]] = []
        self.operator: RunningPath | None = None
        #: a trajectory the robot tracks, as sent (its reference is recorded beside the run)
        self.robot: RunningPath | None = None
        self._robot_tracking = False  # the robot reported trajectory mode since it was sent

    def follow_robot(self, telemetry: Telemetry, now: float) -> None:
        """A robot-side trajectory runs while the robot says so; one it never took up (refused)
        is forgotten after 2 s."""
        if self.robot is None:
            return
        if telemetry.mode == Mode.TRAJECTORY:
            self._robot_tracking = True
        elif self._robot_tracking or now - self.robot.t0 > 2.0:
            self.robot = None

    def stop(self) -> None:
        """Forget every trajectory."""
        self.operator = self.robot = None
        self.reference_path = []

    def start(
        self,
        request: TrajectoryRequest,
        pose: tuple[float, float, float],
        clearance: Clearance,
        now: float,
    ) -> TrajectoryStart | VelocityCommand:
        """Plan the requested trajectory from ``pose``: the station's own (a stop to send until
        its first tracking step), or the robot's (the start message to send)."""
        if request.preset == "waypoints":
            t, xs, ys, periodic = waypoint_path(pose, request.waypoints)
        else:
            t, xs, ys, periodic = ellipse_from(pose, clearance)
        self.reference_path = [[x, y] for x, y in zip(xs, ys, strict=True)]
        if request.side == "operator":
            self.operator = RunningPath(SampledPath(t, xs, ys, periodic=periodic), now)
            return VelocityCommand(0.0, 0.0)
        self.operator = None
        # the robot starts on receipt: its reference from the moment it was sent
        self.robot = RunningPath(SampledPath(t, xs, ys, periodic=periodic), now)
        self._robot_tracking = False
        return TrajectoryStart(tuple(t), tuple(xs), tuple(ys), periodic=periodic)

    def reference_now(self, now: float) -> tuple[float, float, float, float, float] | None:
        """The reference of the trajectory running at ``now``: the station's own, or the
        robot's once it reported tracking it (timed from when it was sent; the robot starts on
        receipt, a link delay later). None when none runs."""
        running = self.operator
        if running is None and self._robot_tracking:
            running = self.robot
        if running is None or now - running.t0 > running.path.duration:
            return None
        r = running.path.at(now - running.t0)
        return (r.x, r.y, r.theta, r.v, r.omega)

    def track(self, now: float, pose: tuple[float, float, float]) -> VelocityCommand | None:
        """One step of operator-side trajectory tracking from ``pose`` (the newest telemetry's):
        the command to send, a stop once the trajectory is over; None when none runs."""
        running = self.operator
        if running is None:
            return None
        elapsed = now - running.t0
        if elapsed > running.path.duration:
            self.operator = None
            return VelocityCommand(0.0, 0.0)
        ref = running.path.at(elapsed)
        v, omega = self.tracker.command(ref, *pose)
        limits = self.config.limits
        v, omega = limit_velocity(
            v, omega, limits.max_speed, math.radians(limits.max_turn_rate_deg)
        )
        return VelocityCommand(v, omega)
