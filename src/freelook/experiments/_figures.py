"""Ögren 2013 Figs. 6–7 as the paper ran them: the kinematic model (eq. 3) under the control
layer (eq. 6), nothing else: no error model, no saturation, no estimator, no laser, no pull
onto a reference (eq. 6 has no gain). The paper does not print the figures' d and L; these
runs take Table 1's identified d = 70 cm and L = 11 cm (eq. 6's camera sits on the chassis
axis: L2 = 0), the same d in the model and in the control layer.

What each figure shows, measured on the camera point (the pan axis):

- Fig. 6 (left, forward, right, forward, left): each segment a straight line while the
  chassis turns under it, the camera's heading unchanged; in the first, the chassis "first
  backs up, stops, and then moves forward, all the while turning to the left".
- Fig. 7: a straight approach, a half-circle orbit at a fixed distance with the camera kept on
  the object, then the camera turned and a straight drive on.

Each segment is compared with the path eq. 2 commands (x(t) = x0 + R(ψ0)·(v1, v2)·t, or the
circle about the object): its worst sideways distance from that path (straightness), and how
far its end falls from the commanded end (driven). A frozen robot is perfectly straight and
drives nowhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from freelook.config import load_error_model, load_robot
from freelook.experiments._faults import Fault, active, simulated_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.kinematics import (
    DriveState,
    Segment,
    camera_pose,
    fig6_segments,
    fig7_object,
    fig7_segments,
    free_look_control,
    integrate_drive,
)
from freelook.link import FreeLookCommand
from freelook.maps import load_world

__all__ = [
    "FIG6_CHASSIS",
    "FIG7_TURN",
    "PAPER_D",
    "PAPER_L",
    "STEP",
    "TOLERANCE",
    "IdealFigures",
    "SegmentRun",
    "ideal_figures",
    "robot_figures",
]

#: Ögren 2013 Table 1: the identified track width d and camera offset L (m)
PAPER_D = 0.70
PAPER_L = 0.11
#: s the control layer's command is held over (the model integrates each hold exactly)
STEP = 1e-3
#: m the camera point may stray from the commanded path. The paper's claim is exact (eq. 7:
#: ẋ = R(ψ)·(v1, v2)); holding eq. 6's command over a step lets the camera's velocity turn
#: with the chassis, relative to the camera's heading, by (θ̇ − ψ̇)·STEP, which bends a segment
#: by at most ½·|v|·|Δ(θ − ψ)|·STEP: 0.9 mm at 0.3 m/s for a full turn of the chassis under the
#: camera. 1 mm is that bound (the paper's reduced controller width, d_eff = 35 cm on the 70 cm
#: tracks of its §5, bends the first segment by 44 cm).
TOLERANCE = 1e-3
#: rad the chassis faces north of east at Fig. 6's start, the camera facing north. Eq. 6
#: backing away from a camera at exactly 90° is an unstable balance: the pan's deviation from
#: 90° grows as e^(|v2|·t/L), 2.7/s here. Exactly at 90° the chassis backs 1 m without
#: turning, where the paper's text has it "first backs up, stops, and then moves forward, all
#: the while turning to the left"; 0.01° off turns it 75° over the segment, 1° 178°.
FIG6_CHASSIS = math.radians(1.0)
#: Fig. 7's turn of the camera after the orbit: back to the approach's heading (the orbit
#: turned it half round), at the orbit's rate. The paper's text ends "westwards" after
#: approaching westwards; :func:`freelook.kinematics.fig7_segments` turns a quarter.
FIG7_TURN = Segment(0.0, 0.0, math.pi / 4.0, 4.0, "turn back")


@dataclass(frozen=True, slots=True)
class SegmentRun:
    """One commanded segment: the camera point against its commanded path (m, rad)."""

    label: str
    commanded: float  # m the command asks for
    straightness: float  # worst distance from the commanded line (circle, for the orbit)
    end_error: float  # distance of the segment's end from the commanded end
    driven: float  # m the camera point truly travelled
    heading_error: float  # worst |ψ − commanded ψ|
    chassis_turn: float  # net chassis turn over the segment
    pan_turn: float  # net pan turn over the segment

    def met(self) -> bool:
        """Straight (or round), driven to its end, the camera's heading as commanded."""
        return (
            self.straightness <= TOLERANCE
            and self.end_error <= TOLERANCE
            and self.heading_error <= TOLERANCE
        )


@dataclass(frozen=True, slots=True)
class IdealFigures:
    """Both figures' segments, and Fig. 6's first segment as the paper's text tells it."""

    fig6: tuple[SegmentRun, ...]
    fig7: tuple[SegmentRun, ...]
    #: Fig. 6's first segment: the chassis' least and last speed (m/s) and its least turn
    #: rate (rad/s): "backs up, stops, and then moves forward, all the while turning left"
    backs_up: float
    ends_forward: float
    least_left_turn: float
    #: rad: the camera's heading at Fig. 7's end (the paper's: west, π)
    fig7_final_heading: float

    def fig6_as_told(self) -> bool:
        return self.backs_up < 0.0 < self.ends_forward and self.least_left_turn > 0.0


class _Run:
    """The model under eq. 6 from ``state``; a frozen robot's tracks turn, the ground does not."""

    def __init__(self, state: DriveState) -> None:
        self.state = state
        self.wheels = 0.0 if active() is Fault.FROZEN else 1.0

    def camera(self) -> tuple[float, float, float]:
        s = self.state
        return camera_pose(s.x, s.y, s.theta, s.pan, PAPER_L, 0.0)

    def step(self, segment: Segment) -> tuple[float, float]:
        """One hold of eq. 6's command; the chassis' speed and turn rate over it."""
        cmd = free_look_control(
            segment.v1, segment.v2, segment.omega, self.state.pan, PAPER_L, 0.0, PAPER_D
        )
        v_left, v_right = self.wheels * cmd.v_left, self.wheels * cmd.v_right
        self.state = integrate_drive(self.state, v_left, v_right, cmd.pan_rate, PAPER_D, STEP)
        return 0.5 * (v_left + v_right), (v_right - v_left) / PAPER_D


def _straight(run: _Run, segment: Segment) -> tuple[SegmentRun, list[float], list[float]]:
    """Drive ``segment``; the run, the chassis' speeds and its turn rates."""
    x0, y0, psi0 = run.camera()
    chassis0 = run.state
    vx = segment.v1 * math.cos(psi0) - segment.v2 * math.sin(psi0)
    vy = segment.v1 * math.sin(psi0) + segment.v2 * math.cos(psi0)
    speed = math.hypot(vx, vy)
    ux, uy = (vx / speed, vy / speed) if speed > 0 else (math.cos(psi0), math.sin(psi0))
    steps = round(segment.duration / STEP)
    worst = heading = driven = 0.0
    speeds: list[float] = []
    rates: list[float] = []
    last = (x0, y0)
    for k in range(1, steps + 1):
        v, rate = run.step(segment)
        speeds.append(v)
        rates.append(rate)
        x, y, psi = run.camera()
        worst = max(worst, abs((x - x0) * uy - (y - y0) * ux))
        heading = max(heading, abs(math.remainder(psi - psi0 - segment.omega * k * STEP, math.tau)))
        driven += math.hypot(x - last[0], y - last[1])
        last = (x, y)
    t = steps * STEP
    end = math.hypot(last[0] - (x0 + vx * t), last[1] - (y0 + vy * t))
    result = SegmentRun(
        segment.label,
        speed * t,
        worst,
        end,
        driven,
        heading,
        run.state.theta - chassis0.theta,
        run.state.pan - chassis0.pan,
    )
    return result, speeds, rates


def _orbit(run: _Run, segment: Segment, centre: tuple[float, float]) -> SegmentRun:
    """Drive the orbit: the camera's distance from the object against the commanded radius,
    and its heading against the bearing to the object."""
    x0, y0, _ = run.camera()
    chassis0 = run.state
    radius = math.hypot(centre[0] - x0, centre[1] - y0)
    steps = round(segment.duration / STEP)
    worst = heading = driven = 0.0
    last = (x0, y0)
    for _ in range(steps):
        run.step(segment)
        x, y, psi = run.camera()
        worst = max(worst, abs(math.hypot(centre[0] - x, centre[1] - y) - radius))
        bearing = math.atan2(centre[1] - y, centre[0] - x)
        heading = max(heading, abs(math.remainder(psi - bearing, math.tau)))
        driven += math.hypot(x - last[0], y - last[1])
        last = (x, y)
    # the commanded end: the start turned about the object by the commanded angle
    turn = segment.omega * steps * STEP
    ex = centre[0] + (x0 - centre[0]) * math.cos(turn) - (y0 - centre[1]) * math.sin(turn)
    ey = centre[1] + (x0 - centre[0]) * math.sin(turn) + (y0 - centre[1]) * math.cos(turn)
    return SegmentRun(
        segment.label,
        abs(segment.v2) * steps * STEP,
        worst,
        math.hypot(last[0] - ex, last[1] - ey),
        driven,
        heading,
        run.state.theta - chassis0.theta,
        run.state.pan - chassis0.pan,
    )


def ideal_figures() -> IdealFigures:
    """Figs. 6 and 7 on the kinematic model under eq. 6 (see the module's docstring). Fig. 6
    starts as the paper's: the chassis facing east (:data:`FIG6_CHASSIS`), the camera north.
    Fig. 7 as its text
    tells it: approaching the object westwards, the camera on the chassis' heading; after the
    half circle the camera is turned back "in the direction of the first movement" and the
    vehicle "continues westwards", past the obstacle (:data:`FIG7_TURN`)."""
    run = _Run(DriveState(0.0, 0.0, FIG6_CHASSIS, math.pi / 2 - FIG6_CHASSIS))
    fig6 = []
    first_speeds: list[float] = []
    first_rates: list[float] = []
    for k, segment in enumerate(fig6_segments()):
        done, speeds, rates = _straight(run, segment)
        fig6.append(done)
        if k == 0:
            first_speeds, first_rates = speeds, rates
    start = DriveState(0.0, 0.0, math.pi, 0.0)
    run = _Run(start)
    approach, orbit, _, drive_on = fig7_segments()
    centre = fig7_object(start, PAPER_L, 0.0)
    fig7 = [_straight(run, approach)[0], _orbit(run, orbit, centre)]
    fig7 += [_straight(run, FIG7_TURN)[0], _straight(run, drive_on)[0]]
    return IdealFigures(
        tuple(fig6),
        tuple(fig7),
        min(first_speeds),
        first_speeds[-1],
        min(first_rates),
        run.camera()[2],
    )


def _robot_segment(
    robot: SimulatedRobot, segment: Segment, centre: tuple[float, float] | None = None
) -> SegmentRun:
    """``segment`` sent every operator period to the simulated robot; its true camera against
    the commanded line from where the segment starts (or the circle about ``centre``)."""
    pt = robot.config.pan_tilt
    assert pt is not None

    def camera() -> tuple[float, float, float]:
        v = robot.sim.vehicle
        return camera_pose(v.x, v.y, v.theta, v.pan, pt.mount_forward, pt.mount_left)

    x0, y0, psi0 = camera()
    theta0, pan0 = robot.sim.vehicle.theta, robot.sim.vehicle.pan
    vx = segment.v1 * math.cos(psi0) - segment.v2 * math.sin(psi0)
    vy = segment.v1 * math.sin(psi0) + segment.v2 * math.cos(psi0)
    speed = math.hypot(vx, vy)
    ux, uy = (vx / speed, vy / speed) if speed > 0 else (math.cos(psi0), math.sin(psi0))
    radius = math.hypot(centre[0] - x0, centre[1] - y0) if centre is not None else 0.0
    period = robot.config.link.operator_tx_spacing
    steps = max(1, round(segment.duration / period))
    worst = heading = driven = 0.0
    last = (x0, y0)
    for k in range(1, steps + 1):
        robot.send(FreeLookCommand(segment.v1, segment.v2, segment.omega))
        robot.run_for(period)
        x, y, psi = camera()
        if centre is None:
            worst = max(worst, abs((x - x0) * uy - (y - y0) * ux))
            aim = psi0 + segment.omega * k * period
        else:
            worst = max(worst, abs(math.hypot(centre[0] - x, centre[1] - y) - radius))
            aim = math.atan2(centre[1] - y, centre[0] - x)
        heading = max(heading, abs(math.remainder(psi - aim, math.tau)))
        driven += math.hypot(x - last[0], y - last[1])
        last = (x, y)
    t = steps * period
    if centre is None:
        end = math.hypot(last[0] - (x0 + vx * t), last[1] - (y0 + vy * t))
    else:
        turn = segment.omega * t
        ex = centre[0] + (x0 - centre[0]) * math.cos(turn) - (y0 - centre[1]) * math.sin(turn)
        ey = centre[1] + (x0 - centre[0]) * math.sin(turn) + (y0 - centre[1]) * math.cos(turn)
        end = math.hypot(last[0] - ex, last[1] - ey)
    v = robot.sim.vehicle
    return SegmentRun(
        segment.label,
        speed * t if centre is None else abs(segment.v2) * t,
        worst,
        end,
        driven,
        heading,
        v.theta - theta0,
        v.pan - pan0,
    )


def robot_figures(
    seed: int, gain: float | None = None, robot_name: str = "foi-ugv"
) -> tuple[SegmentRun, ...]:
    """Figs. 6 and 7's commands, as :func:`ideal_figures` sends them, to the simulated robot of
    ``seed`` under its error model, with its own Free Look and sensors, its pull ``gain``
    (None: its own; 0: eq. 6 alone): Fig. 6's five segments, then Fig. 7's approach and
    orbit, each against its commanded path."""
    config = load_robot(robot_name)
    if gain is not None:
        pull = config.free_look.model_copy(update={"gain": gain})
        config = config.model_copy(update={"free_look": pull})
    world = load_world("square")
    truth = load_error_model(config.name).draw(seed)
    pose = (5.0, 5.0, FIG6_CHASSIS)
    robot = simulated_robot(
        config, world, seed=seed, pose=pose, believed_pose=truth.believed(pose), truth=truth
    )
    robot.sim.vehicle.pan = math.pi / 2 - FIG6_CHASSIS
    robot.run_for(0.5)
    runs = [_robot_segment(robot, segment) for segment in fig6_segments()]
    pose = (7.0, 5.0, math.pi)
    robot = simulated_robot(
        config, world, seed=seed, pose=pose, believed_pose=truth.believed(pose), truth=truth
    )
    robot.run_for(0.5)
    pt = robot.config.pan_tilt
    assert pt is not None
    v = robot.sim.vehicle
    cx, cy, psi = camera_pose(v.x, v.y, v.theta, v.pan, pt.mount_forward, pt.mount_left)
    approach, orbit, _, _ = fig7_segments()
    runs.append(_robot_segment(robot, approach))
    runs.append(_robot_segment(robot, orbit, (cx + 3.0 * math.cos(psi), cy + 3.0 * math.sin(psi))))
    return tuple(runs)
