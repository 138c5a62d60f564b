"""Scenarios on the lock-step simulator, shared by the tests and ``freelook experiment``.

Each function runs one trial from a seed and returns plain numbers; the experiment command
repeats them and puts the papers' figures beside ours.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from freelook.config import (
    ErrorModel,
    PhysicalTruth,
    RobotConfig,
    load_error_model,
    load_robot,
)
from freelook.experiments._added_laser import with_added_laser
from freelook.experiments._faults import simulated_robot
from freelook.geometry import wrap_angle
from freelook.hardware.sim import SimulatedRobot, published_map
from freelook.kinematics import camera_pose, fig6_segments, fig7_segments
from freelook.link import (
    Accepted,
    ControlRequest,
    FreeLookCommand,
    ImpairedChannel,
    Impairments,
    LinkSession,
    Message,
    NativeCodec,
    RadioLockups,
    VelocityCommand,
    derive_key,
)
from freelook.maps import World, load_world

__all__ = [
    "FiguresResult",
    "LapsResult",
    "TranslationResult",
    "flc_figures_trial",
    "link_course_trial",
    "physical_robot",
    "square_laps_trial",
    "translation_offset_trial",
]

_WORLDS: dict[str, World] = {}
_MAPS: dict[str, World | None] = {}
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


def _map_file(name: str) -> World | None:
    """The map a robot in world ``name`` is given (:func:`published_map`), loaded once per
    process: trial after trial, a robot loads the same file (a load and its obstacles were
    3.5 ms of each trial with a map)."""
    if name not in _MAPS:
        _MAPS[name] = published_map(_world(name))
    return _MAPS[name]


def physical_robot(config: RobotConfig, seed: int, errors: bool = True) -> PhysicalTruth | None:
    """The physical robot of ``seed`` under the robot's error model (None: ``errors`` off, the
    simulated robot is its description)."""
    return load_error_model(config.name).draw(seed) if errors else None


def _with_gain(config: RobotConfig, gain: float | None) -> RobotConfig:
    """``config`` with the Free Look pull ``gain`` (0: the paper's eq. 6 alone)."""
    if gain is None:
        return config
    return config.model_copy(
        update={"free_look": config.free_look.model_copy(update={"gain": gain})}
    )


def _placed_robot(
    config: RobotConfig,
    world: World,
    seed: int,
    pose: tuple[float, float, float],
    truth: PhysicalTruth | None,
) -> SimulatedRobot:
    """A robot put down at ``pose``, told so: where it stands is the error model's placing
    error away (None: exactly there, the robot its description)."""
    believed = truth.believed(pose) if truth is not None else pose
    return simulated_robot(config, world, seed=seed, pose=pose, believed_pose=believed, truth=truth)


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


def _drive(
    robot: SimulatedRobot,
    command: FreeLookCommand,
    seconds: float,
    path: list[float] | None = None,
) -> None:
    """Send ``command`` every operator period for ``seconds``; ``path[0]`` gathers the
    distance the camera truly travelled, sampled every period."""
    period = robot.config.link.operator_tx_spacing
    steps = max(1, round(seconds / period))
    for _ in range(steps):
        before = _camera(robot) if path is not None else None
        robot.send(command)
        robot.run_for(period)
        if path is not None and before is not None:
            x, y, _ = _camera(robot)
            path[0] += math.hypot(x - before[0], y - before[1])


@dataclass(frozen=True)
class LapsResult:
    """Ögren 2013 Tables 2–3's run: the camera's drift after each lap, and whether the laps were
    driven (a robot that never moved must not pass for one that never drifts)."""

    drifts: list[float]  # deg, camera heading drift after each lap
    paths: list[float]  # m the camera travelled in each lap (4 sides: about 4·side)
    returns: list[float]  # m of the camera from its start after each lap

    def completed(self, side: float) -> bool:
        """Every lap driven: at least 85 % of its four sides travelled, the camera back within
        half a side of its start (the tracks' skid leaves it tens of centimetres off)."""
        return bool(self.drifts) and all(
            p >= 0.85 * 4 * side and r <= 0.5 * side
            for p, r in zip(self.paths, self.returns, strict=True)
        )


def square_laps_trial(
    seed: int,
    clockwise: bool,
    laps: int = 5,
    side: float = 2.0,
    use_gyro: bool = True,
    use_localization: bool = True,
    robot_name: str = "foi-ugv",
    gain: float | None = 0.0,
    errors: bool = True,
    laser: bool = True,
    model: ErrorModel | None = None,
) -> LapsResult:
    """Ögren 2013 Tables 2–3: camera heading drift (deg) after each lap of FLC square driving.

    ``gain`` is the Free Look pull onto the camera's reference (0: the paper's eq. 6 alone;
    None: the robot's own), ``errors`` whether the simulated robot differs from its
    description by its error model, ``laser`` whether it has a laser (its own, or the one
    freelook adds to a robot whose paper had none: :func:`with_added_laser`); ``model`` the
    error model to draw the robot from (None: the robot's shipped one; ``freelook calibrate``
    fits its own)."""
    config = _with_gain(load_robot(robot_name), gain)
    config = with_added_laser(config) if laser else config.model_copy(update={"laser": None})
    world = _world("square")
    start = (world.start[0] - side / 2, world.start[1] - side / 2, 0.0)
    truth = model.draw(seed) if model is not None else physical_robot(config, seed, errors)
    robot = simulated_robot(
        config,
        world,
        seed=seed,
        pose=start,
        believed_pose=truth.believed(start) if truth is not None else start,
        use_gyro=use_gyro,
        use_localization=use_localization,
        truth=truth,
    )
    robot.run_for(1.0)  # let the filters settle standing still
    psi0 = _camera(robot)[2]
    period = config.link.operator_tx_spacing
    speed = 0.3
    turn_time = 64 * period  # a whole number of command periods: exactly 90° commanded
    sign = -1.0 if clockwise else 1.0
    drifts, paths, returns = [], [], []
    x0, y0, _ = _camera(robot)
    for _ in range(laps):
        path = [0.0]
        for _ in range(4):
            _drive(robot, FreeLookCommand(speed, 0.0, 0.0), side / speed, path)
            _drive(
                robot, FreeLookCommand(0.0, 0.0, sign * (math.pi / 2) / turn_time), turn_time, path
            )
        _drive(robot, FreeLookCommand(0.0, 0.0, 0.0), 0.5, path)
        drifts.append(math.degrees(wrap_angle(_camera(robot)[2] - psi0)))
        paths.append(path[0])
        cx, cy, _ = _camera(robot)
        returns.append(math.hypot(cx - x0, cy - y0))
    return LapsResult(drifts, paths, returns)


@dataclass(frozen=True)
class TranslationResult:
    """Ögren 2013 Table 4's run, measured along the way as well as at the end."""

    final_offset: float  # m, |h| after the run
    max_offset: float  # m, the largest |h| on the way
    covered: float  # m travelled along the camera's initial heading
    #: m, h with the paper's sign: positive towards where the chassis first faced (a chassis
    #: that turns less sharply than it should leaves the camera on that side)
    signed_offset: float = 0.0


def translation_offset_trial(
    seed: int,
    distance: float = 2.0,
    robot_name: str = "foi-ugv",
    open_loop: bool = False,
    errors: bool = True,
    laser: bool = True,
    model: ErrorModel | None = None,
) -> TranslationResult:
    """Ögren 2013 Table 4: lateral offset h of the camera over a pure forward translation
    started with the chassis turned 90° from the camera.

    ``open_loop`` runs the paper's law (eq. 6 on the measured pan and the gyro's heading rate,
    with the controller's d against the slipping tracks' real one) instead of the robot's
    closed loop on the camera's estimated pose; ``errors`` whether the simulated robot differs
    from its description by its error model; ``laser`` whether it has a laser (its own, or
    the one freelook adds: :func:`with_added_laser`); ``model`` the error model to draw the
    robot from (None: the robot's shipped one).

    The start is the paper's (Fig. 10): the chassis faces 90° to the right of the camera,
    which looks along the line to translate on (pan +90°); only the line's heading is drawn.
    """
    config = _with_gain(load_robot(robot_name), 0.0 if open_loop else None)
    config = with_added_laser(config) if laser else config.model_copy(update={"laser": None})
    world = _world("square")
    rng = np.random.default_rng(seed)
    side = -1.0  # the chassis turned to the camera's right, as the paper's started
    theta0 = float(rng.uniform(-math.pi, math.pi))
    x, y = world.start[0] - 1.0 * math.cos(theta0 + side * math.pi / 2), world.start[1]
    truth = model.draw(seed) if model is not None else physical_robot(config, seed, errors)
    pose = (x, y, theta0)
    robot = simulated_robot(
        config,
        world,
        seed=seed,
        pose=pose,
        believed_pose=truth.believed(pose) if truth is not None else pose,
        truth=truth,
    )
    robot.sim.vehicle.pan = -side * math.pi / 2  # camera looks 90° off the chassis heading
    robot.run_for(0.5)
    cx0, cy0, psi0 = _camera(robot)
    c, s = math.cos(psi0), math.sin(psi0)
    worst = 0.0
    period = config.link.operator_tx_spacing
    speed = 0.3
    steps = round(distance / speed / period) + round(0.5 / period)
    for k in range(steps):
        moving = k < round(distance / speed / period)
        robot.send(FreeLookCommand(speed if moving else 0.0, 0.0, 0.0))
        robot.run_for(period)
        cx, cy, _ = _camera(robot)
        worst = max(worst, abs(-s * (cx - cx0) + c * (cy - cy0)))
    cx, cy, _ = _camera(robot)
    h = -s * (cx - cx0) + c * (cy - cy0)  # left of the camera's initial line
    return TranslationResult(abs(h), worst, c * (cx - cx0) + s * (cy - cy0), side * h)


@dataclass(frozen=True)
class FiguresResult:
    """Figs. 6–7's run: the worst deviation from a straight camera segment (m per m), the
    orbit's radius spread (m), and the least share of its commanded path any segment (Fig. 6)
    and the orbit (Fig. 7) truly drove (a camera that never moved is perfectly straight)."""

    straightness: float
    orbit_spread: float
    segments_driven: float
    orbit_driven: float


def flc_figures_trial(seed: int, robot_name: str = "foi-ugv") -> FiguresResult:
    """Figs. 6–7 on the robot's error model (see :class:`FiguresResult`)."""
    config = load_robot(robot_name)
    world = _world("square")
    truth = physical_robot(config, seed)
    robot = _placed_robot(config, world, seed, (5.0, 5.0, 0.0), truth)
    robot.sim.vehicle.pan = math.pi / 2
    robot.run_for(0.5)
    worst = 0.0
    driven = math.inf
    period = config.link.operator_tx_spacing
    for segment in fig6_segments():
        points = [_camera(robot)[:2]]
        steps = round(segment.duration / period)
        for _ in range(steps):
            robot.send(FreeLookCommand(segment.v1, segment.v2, segment.omega))
            robot.run_for(period)
            points.append(_camera(robot)[:2])
        commanded = math.hypot(segment.v1, segment.v2) * steps * period
        p = np.array(points)
        travelled = float(np.sum(np.linalg.norm(np.diff(p, axis=0), axis=1)))
        driven = min(driven, travelled / commanded)
        p = p[len(points) // 5 :]  # after the tracks have spun up
        chord = p[-1] - p[0]
        length = float(np.linalg.norm(chord))
        if length > 0.2:
            u = chord / length
            rel = p - p[0]
            worst = max(worst, float(np.max(np.abs(rel[:, 0] * u[1] - rel[:, 1] * u[0]))) / length)
    robot = _placed_robot(config, world, seed, (4.0, 7.0, 0.0), truth)
    robot.run_for(0.5)
    segments = fig7_segments()
    _drive(robot, FreeLookCommand(segments[0].v1, 0.0, 0.0), segments[0].duration)
    _drive(robot, FreeLookCommand(0.0, 0.0, 0.0), 1.0)
    cx, cy, psi = _camera(robot)
    centre = (cx + math.cos(psi), cy + math.sin(psi))
    orbit = segments[1]
    radii = []
    path = 0.0
    steps = round(orbit.duration / period)
    for _ in range(steps):
        before = _camera(robot)
        robot.send(FreeLookCommand(0.0, orbit.v2, orbit.omega))
        robot.run_for(period)
        x, y, _ = _camera(robot)
        path += math.hypot(x - before[0], y - before[1])
        radii.append(math.hypot(x - centre[0], y - centre[1]))
    r = np.array(radii[len(radii) // 10 :])
    arc = abs(orbit.v2) * steps * period
    return FiguresResult(worst, float(r.max() - r.min()), driven, path / arc)


def link_course_trial(
    seed: int, impairments: Impairments, duration: float = 30.0
) -> dict[str, float]:
    """Thesis Table 7.1 style: drive a scripted course through an impaired link.

    Both directions go through the same pair of radios, so a lock-up silences both. A node
    failure is counted the thesis's way, once per trial in which the link fell silent (a gap of
    over a second in either direction); recovery is the time from a radio's coming back to the
    robot's next accepted command, with no restart of anything.

    Over 80 lines: one trial's loop over both link directions, sharing the trial's state.
    """
    config = load_robot("pioneer3dx")
    world = _world("square")
    truth = physical_robot(config, seed)
    robot = simulated_robot(
        config,
        world,
        seed=seed,
        pose=(7.0, 7.0, 0.0),
        believed_pose=truth.believed((7.0, 7.0, 0.0)) if truth is not None else None,
        truth=truth,
        use_localization=False,
    )
    radio = RadioLockups(impairments.lockup_rate, impairments.lockup_duration, seed)
    up, down = (
        ImpairedChannel(impairments, seed=seed * 2 + 1, lockups=radio),
        ImpairedChannel(impairments, seed=seed * 2, lockups=radio),
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
    command_times: list[float] = []
    driven = commanded = 0.0
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
            command_times.append(now)
        for _ in _arrivals(down, operator, now):
            pass  # counted: the operator side only measures this direction
        before = robot.sim.ground_truth
        robot.run_for(config.link.control_period)
        real = robot.sim.ground_truth
        driven += math.hypot(real.x - before.x, real.y - before.y)
        commanded += (0.3 if int(now // 5) % 2 == 0 else 0.0) * config.link.control_period
        cycles += 1
        if last_command is not None and runtime.now() - last_command < 0.2:
            commanded_cycles += 1
    up_row, down_row = up_stats.table_row(), down_stats.table_row()
    recoveries = []
    for _, back in radio.ended_by(duration):
        later = [t for t in command_times if t >= back]
        recoveries.append(later[0] - back if later else math.inf)
    return {
        "drop_up": up_row.drop_percent,
        "drop_down": down_row.drop_percent,
        "node_failures": float(up_row.node_failures + down_row.node_failures),
        "failed": float(up_row.node_failures + down_row.node_failures > 0),
        "lockups": float(len(radio.ended_by(duration))),
        "longest_lockup": max((b - a for a, b in radio.ended_by(duration)), default=0.0),
        "recovery": max(recoveries, default=0.0),
        "continuity": commanded_cycles / max(cycles, 1),
        "operation_time": duration,
        # m truly driven over m the course commanded: a link that never lets the robot move
        # keeps it safe, and is no link
        "driven_share": driven / max(commanded, 1e-9),
    }
