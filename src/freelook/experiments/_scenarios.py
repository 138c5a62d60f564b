"""Scenarios on the lock-step simulator, shared by the tests and ``freelook experiment``.

Each function runs one trial from a seed and returns plain numbers; the experiment command
repeats them and puts the papers' figures beside ours.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from freelook.config import RobotConfig, load_robot
from freelook.control import ellipse_points
from freelook.geometry import wrap_angle
from freelook.hardware.sim import SimulatedRobot
from freelook.kinematics import camera_pose, fig6_segments, fig7_segments
from freelook.link import (
    Accepted,
    ControlRequest,
    FreeLookCommand,
    Heartbeat,
    ImpairedChannel,
    Impairments,
    LinkSession,
    Message,
    Mode,
    NativeCodec,
    SafetyFlags,
    Telemetry,
    TrajectoryStart,
    VelocityCommand,
    derive_key,
)
from freelook.maps import World, load_world

__all__ = [
    "EllipseResult",
    "RecklessResult",
    "ellipse_trial",
    "flc_figures_trial",
    "link_course_trial",
    "reckless_trial",
    "square_laps_trial",
    "translation_offset_trial",
]

_WORLDS: dict[str, World] = {}
OPERATOR, ROBOT = 1, 100  # station ids on the link


def _sessions(config: RobotConfig) -> tuple[LinkSession, LinkSession]:
    """(operator end, robot end) of an authenticated native link on the virtual clock."""
    key = derive_key("experiment")
    spacing = config.link
    return (
        LinkSession(NativeCodec(key, sender=OPERATOR), spacing=spacing.operator_tx_spacing),
        LinkSession(NativeCodec(key, sender=ROBOT), spacing=spacing.robot_tx_spacing),
    )


def _world(name: str) -> World:
    if name not in _WORLDS:
        _WORLDS[name] = load_world(name)
    return _WORLDS[name]


def _camera(robot: SimulatedRobot) -> tuple[float, float, float]:
    pt = robot.config.pan_tilt
    assert pt is not None
    v = robot.sim.vehicle
    return camera_pose(v.x, v.y, v.theta, v.pan, pt.mount_forward, pt.mount_left)


def _arrivals(channel: ImpairedChannel, session: LinkSession, now: float) -> Iterator[Message]:
    """The messages a channel delivers now that the receiving session accepts (it counts and
    classifies the refused ones)."""
    for data in channel.receive(now):
        for event in session.receive(data, now):
            if isinstance(event, Accepted):
                yield event.message


def _transmit(channel: ImpairedChannel, session: LinkSession, message: Message, now: float) -> None:
    for packet in session.send(message, now):
        channel.send(packet, now)


def _drive(robot: SimulatedRobot, command: FreeLookCommand, seconds: float) -> None:
    period = robot.config.link.operator_tx_spacing
    steps = max(1, round(seconds / period))
    for _ in range(steps):
        robot.send(command)
        robot.run_for(period)


def square_laps_trial(
    seed: int,
    clockwise: bool,
    laps: int = 5,
    side: float = 2.0,
    use_gyro: bool = True,
    use_localization: bool = True,
    robot_name: str = "foi-ugv",
) -> list[float]:
    """Seed 000 Tables 2–3: camera heading drift (deg) after each lap of FLC square driving."""
    config = load_robot(robot_name)
    world = _world("square")
    start = (world.start[0] - side / 2, world.start[1] - side / 2, 0.0)
    robot = SimulatedRobot(
        config, world, seed=seed, pose=start, use_gyro=use_gyro, use_localization=use_localization
    )
    robot.run_for(1.0)  # let the filters settle standing still
    psi0 = _camera(robot)[2]
    period = config.link.operator_tx_spacing
    speed = 0.3
    turn_time = 64 * period  # a whole number of command periods: exactly 90° commanded
    sign = -1.0 if clockwise else 1.0
    drifts = []
    for _ in range(laps):
        for _ in range(4):
            _drive(robot, FreeLookCommand(speed, 0.0, 0.0), side / speed)
            _drive(robot, FreeLookCommand(0.0, 0.0, sign * (math.pi / 2) / turn_time), turn_time)
        _drive(robot, FreeLookCommand(0.0, 0.0, 0.0), 0.5)
        drifts.append(math.degrees(wrap_angle(_camera(robot)[2] - psi0)))
    return drifts


def translation_offset_trial(
    seed: int, distance: float = 2.0, robot_name: str = "foi-ugv"
) -> float:
    """Seed 000 Table 4: lateral offset h (m) of the camera after a pure forward translation
    started with the chassis turned 90° from the camera."""
    config = load_robot(robot_name)
    world = _world("square")
    rng = np.random.default_rng(seed)
    side = 1.0 if rng.random() < 0.5 else -1.0
    theta0 = float(rng.uniform(-math.pi, math.pi))
    x, y = world.start[0] - 1.0 * math.cos(theta0 + side * math.pi / 2), world.start[1]
    robot = SimulatedRobot(config, world, seed=seed, pose=(x, y, theta0))
    robot.sim.vehicle.pan = -side * math.pi / 2  # camera looks 90° off the chassis heading
    robot.run_for(0.5)
    cx0, cy0, psi0 = _camera(robot)
    _drive(robot, FreeLookCommand(0.3, 0.0, 0.0), distance / 0.3)
    _drive(robot, FreeLookCommand(0.0, 0.0, 0.0), 0.5)
    cx, cy, _ = _camera(robot)
    return abs(-math.sin(psi0) * (cx - cx0) + math.cos(psi0) * (cy - cy0))


def flc_figures_trial(seed: int, robot_name: str = "foi-ugv") -> tuple[float, float]:
    """Figs. 6–7 on the slipping simulator: worst camera deviation from straight segments
    (m per m) and orbit radius spread (m)."""
    config = load_robot(robot_name)
    world = _world("square")
    robot = SimulatedRobot(config, world, seed=seed, pose=(5.0, 5.0, 0.0))
    robot.sim.vehicle.pan = math.pi / 2
    robot.run_for(0.5)
    worst = 0.0
    for segment in fig6_segments():
        points = [_camera(robot)[:2]]
        period = config.link.operator_tx_spacing
        for _ in range(round(segment.duration / period)):
            robot.send(FreeLookCommand(segment.v1, segment.v2, segment.omega))
            robot.run_for(period)
            points.append(_camera(robot)[:2])
        p = np.array(points[len(points) // 5 :])  # after the tracks have spun up
        chord = p[-1] - p[0]
        length = float(np.linalg.norm(chord))
        if length > 0.2:
            u = chord / length
            rel = p - p[0]
            worst = max(worst, float(np.max(np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0]))) / length)
    robot = SimulatedRobot(config, world, seed=seed, pose=(4.0, 7.0, 0.0))
    robot.run_for(0.5)
    segments = fig7_segments()
    _drive(robot, FreeLookCommand(segments[0].v1, 0.0, 0.0), segments[0].duration)
    _drive(robot, FreeLookCommand(0.0, 0.0, 0.0), 1.0)
    cx, cy, psi = _camera(robot)
    centre = (cx + math.cos(psi), cy + math.sin(psi))
    orbit = segments[1]
    radii = []
    period = config.link.operator_tx_spacing
    for _ in range(round(orbit.duration / period)):
        robot.send(FreeLookCommand(0.0, orbit.v2, orbit.omega))
        robot.run_for(period)
        x, y, _ = _camera(robot)
        radii.append(math.hypot(x - centre[0], y - centre[1]))
    r = np.array(radii[len(radii) // 10 :])
    return worst, float(r.max() - r.min())


@dataclass(frozen=True)
class EllipseResult:
    completion_time: float  # s
    ideal_time: float
    max_error: float  # m, after the first quarter lap
    drop_percent_up: float
    drop_percent_down: float


def ellipse_trial(
    seed: int, loss: float, robot_side: bool, burst: bool = False, robot_name: str = "pioneer3dx"
) -> EllipseResult:
    """Thesis Table 7.2: the 40 s ellipse through a lossy link, robot- or operator-side."""
    config: RobotConfig = load_robot(robot_name)
    world = _world("square")
    t_pts, ex, ey = ellipse_points(101)
    centre = (world.start[0], world.start[1])
    xs, ys = ex + centre[0], ey + centre[1]
    start = (float(xs[0]), float(ys[0]), math.pi / 2)
    robot = SimulatedRobot(config, world, seed=seed, pose=start)
    impair = (
        Impairments(loss=loss)
        if not burst
        else Impairments(loss=loss / 2, burst_p_enter=0.05, burst_p_exit=0.3, burst_loss=0.9)
    )
    up, down = ImpairedChannel(impair, seed=seed * 2 + 1), ImpairedChannel(impair, seed=seed * 2)
    operator, robot_end = _sessions(config)
    up_stats, down_stats = robot_end.stats, operator.stats
    # the operator holds control from the start, as a station's first packet asks for it
    robot.core.handle(ControlRequest(OPERATOR, 10), 0.0, OPERATOR)
    from freelook.control import SampledPath, TrackingController, limit_velocity

    path = SampledPath(t_pts, xs, ys, periodic=True)
    tracker = TrackingController()
    runtime = robot.runtime
    telemetry: Telemetry | None = None
    started_at: float | None = None
    op_period, robot_period = config.link.operator_tx_spacing, config.link.robot_tx_spacing
    next_op, next_robot = 0.0, 0.0
    errors: list[tuple[float, float]] = []
    dt = 0.005
    horizon = path.duration * 1.5
    while runtime.now() < horizon:
        now = runtime.now()
        if now >= next_robot:
            next_robot += robot_period
            robot.core.link_stats = up_stats.report(now)
            _transmit(down, robot_end, robot.core.telemetry(now), now)
        if now >= next_op:
            next_op += op_period
            if robot_side:
                message: TrajectoryStart | Heartbeat
                if telemetry is None or (telemetry.mode != Mode.TRAJECTORY and started_at is None):
                    message = TrajectoryStart(
                        tuple(t_pts.tolist()), tuple(xs.tolist()), tuple(ys.tolist()), periodic=True
                    )
                else:
                    message = Heartbeat()
                _transmit(up, operator, message, now)
            else:
                if started_at is None:
                    started_at = now
                if telemetry is not None:
                    ref = path.at(now - started_at)
                    v, w = tracker.command(ref, *telemetry.pose)
                    v, w = limit_velocity(
                        v, w, config.limits.max_speed, math.radians(config.limits.max_turn_rate_deg)
                    )
                    _transmit(up, operator, VelocityCommand(v, w), now)
                else:
                    _transmit(up, operator, Heartbeat(), now)
        for arrived in _arrivals(up, robot_end, now):
            robot.core.handle(arrived, now, OPERATOR)
            if robot_side and isinstance(arrived, TrajectoryStart) and started_at is None:
                started_at = now
        for arrived in _arrivals(down, operator, now):
            if isinstance(arrived, Telemetry):
                telemetry = arrived
        robot.run_for(dt)
        if started_at is not None:
            t = runtime.now() - started_at
            if t <= path.duration:
                ref = path.at(t)
                truth = robot.sim.ground_truth
                errors.append((t, math.hypot(ref.x - truth.x, ref.y - truth.y)))
            elif (
                math.hypot(robot.sim.ground_truth.x - xs[-1], robot.sim.ground_truth.y - ys[-1])
                < 0.02
                or t > path.duration * 1.4
            ):
                break
    assert started_at is not None
    completion = runtime.now() - started_at
    err = np.array(errors)
    quarter = err[err[:, 0] >= path.duration / 4, 1] if len(err) else np.array([math.inf])
    return EllipseResult(
        completion,
        path.duration,
        float(quarter.max()),
        up_stats.report(runtime.now()).drop_percent,
        down_stats.report(runtime.now()).drop_percent,
    )


@dataclass(frozen=True)
class RecklessResult:
    collided: bool
    stopped_after_cut: float | None  # s from the last command to standstill, None when no cut
    stop_bound: float | None  # watchdog + one cycle + braking of the fastest wheel + motor lag
    escaped: bool  # after the run, some manoeuvre (back, back and turn, turn) moved the robot


def reckless_trial(
    seed: int, cut_link: bool, duration: float = 20.0, robot_name: str = "pioneer3dx"
) -> RecklessResult:
    """A reckless operator: full speed at walls and into the narrow passage."""
    config = load_robot(robot_name)
    world = _world("lab")
    rng = np.random.default_rng(seed)
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
        try:
            robot = SimulatedRobot(config, world, seed=seed, pose=pose, use_localization=False)
            break
        except ValueError:
            continue
    v_max = config.drive.max_wheel_speed
    w_max = config.drive.max_turn_rate
    cut_at = float(rng.uniform(2.0, duration - 5.0)) if cut_link else None
    period = config.link.operator_tx_spacing
    v_cmd = v_max * (1.0 if rng.random() < 0.8 else -1.0)
    w_cmd = float(rng.uniform(-0.3, 0.3)) * w_max
    stopped_at: float | None = None
    bound: float | None = None
    last_sent = 0.0
    drive = config.drive
    wheel_before = 0.0  # fastest wheel at the previous look, before the watchdog tripped
    elapsed = 0.0
    while elapsed < duration:
        cut = cut_at is not None and elapsed >= cut_at
        if not cut:
            if rng.random() < 0.05:
                w_cmd = float(rng.uniform(-0.3, 0.3)) * w_max
            robot.send(VelocityCommand(v_cmd, w_cmd))
            last_sent = elapsed
        # once cut, look every control cycle so the watchdog's trip is seen in its own cycle
        step = config.link.control_period if cut else period
        robot.run_for(step)
        elapsed += step
        if not cut:
            continue
        truth = robot.sim.ground_truth
        # each wheel brakes at the drive's limit, so the fastest wheel sets the stopping time
        wheel = abs(truth.v) + abs(truth.omega) * drive.track_width / 2
        tripped = bool(robot.core.last_output.flags & SafetyFlags.WATCHDOG)
        if bound is None and tripped:
            bound = (
                config.safety.watchdog_timeout
                + config.link.control_period
                + max(wheel, wheel_before) / drive.max_deceleration
                + 5 * drive.motor_time_constant
            )
        wheel_before = wheel
        if stopped_at is None and abs(truth.v) < 1e-3 and abs(truth.omega) < 1e-3:
            stopped_at = elapsed - last_sent
    collided = robot.sim.vehicle.contacts > 0
    # the robot can always be driven out: back, back and turn, or turn on the spot
    escaped = False
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
            escaped = True
            break
    return RecklessResult(robot.sim.vehicle.contacts > 0 or collided, stopped_at, bound, escaped)


def link_course_trial(
    seed: int, impairments: Impairments, duration: float = 30.0
) -> dict[str, float]:
    """Thesis Table 7.1 style: drive a scripted course through an impaired link."""
    config = load_robot("pioneer3dx")
    world = _world("square")
    robot = SimulatedRobot(config, world, seed=seed, pose=(7.0, 7.0, 0.0), use_localization=False)
    up, down = (
        ImpairedChannel(impairments, seed=seed * 2 + 1),
        ImpairedChannel(impairments, seed=seed * 2),
    )
    operator, robot_end = _sessions(config)
    up_stats, down_stats = robot_end.stats, operator.stats
    # the operator holds control from the start, as a station's first packet asks for it
    robot.core.handle(ControlRequest(OPERATOR, 10), 0.0, OPERATOR)
    runtime = robot.runtime
    next_op = next_robot = 0.0
    commanded_cycles = 0
    cycles = 0
    last_command: float | None = None
    while runtime.now() < duration:
        now = runtime.now()
        if now >= next_robot:
            next_robot += config.link.robot_tx_spacing
            _transmit(down, robot_end, robot.core.telemetry(now), now)
        if now >= next_op:
            next_op += config.link.operator_tx_spacing
            phase = int(now // 5) % 4
            command = VelocityCommand(
                0.3 if phase % 2 == 0 else 0.0, 0.0 if phase % 2 == 0 else 0.5
            )
            _transmit(up, operator, command, now)
        for message in _arrivals(up, robot_end, now):
            robot.core.handle(message, now, OPERATOR)
            last_command = now
        for _ in _arrivals(down, operator, now):
            pass  # counted: the operator side only measures this direction
        robot.run_for(config.link.control_period)
        cycles += 1
        if last_command is not None and runtime.now() - last_command < 0.2:
            commanded_cycles += 1
    up_row, down_row = up_stats.table_row(), down_stats.table_row()
    return {
        "drop_up": up_row.drop_percent,
        "drop_down": down_row.drop_percent,
        "node_failures": float(up_row.node_failures + down_row.node_failures),
        "continuity": commanded_cycles / max(cycles, 1),
    }
