"""Where the robot is now, from its last report and the commands still in flight (sans-I/O).

Driving through delay, the cockpit shows the robot as it was a one-way delay ago. The station
knows more: the robot's last report (its pose, its track speeds, safety's last scale, stamped on
the robot's clock, which the link's exchanges map onto this one) and every drive command it sent
since, each arriving about a one-way delay after it left. :class:`MotionPredictor` replays them
on the robot's own description (its tracks' speed and acceleration limits and motor lag, its
slip, the Free Look law of :mod:`freelook.control` in Free Look, Tank and velocity commands
scaled within the tracks as the robot scales them) from the report's time to ``now`` (where the
robot is now) and to ``now`` plus the one-way delay (where it is when a command sent now
arrives), and on over a horizon with the newest command held (the station repeats it while the
operator holds it): the path it is committed to.

The one-way delay is measured on the robot's own reports (arrival minus stamp, on this clock
through the link's offset): their median is the delay, and the spread of the last few seconds
(the highest minus the lowest) the uncertainty of when each command lands. The way up is taken
to be like the way down, as the offset's estimate already takes it. The path's envelope grows
with that spread: a command that lands a spread early or late moves the robot along by speed
times spread, and turns the rest of its path by turn rate times spread.

Time is always an argument (the station's clock): the same predictor runs on a fake clock.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

from freelook.config import RobotConfig
from freelook.control import CameraCommand, FreeLookController
from freelook.geometry import Pose, wrap_angle
from freelook.kinematics import DriveState, integrate_drive, saturation_factor, tank_control
from freelook.link import (
    EStop,
    FreeLookCommand,
    GoalStart,
    LinearDriveStart,
    Message,
    TankCommand,
    Telemetry,
    TrajectoryStart,
    VelocityCommand,
    WheelSpeedCommand,
)

__all__ = [
    "DRIVE_COMMANDS",
    "DelayStats",
    "MotionPredictor",
    "PredictedPose",
    "Prediction",
    "camera_footprint",
]

#: the commands that drive the chassis, each replayed from when it lands
DRIVE_COMMANDS = (VelocityCommand, TankCommand, WheelSpeedCommand, FreeLookCommand)
#: what an engaged e-stop, or a command that lapsed, leaves the tracks
STOP = VelocityCommand(0.0, 0.0)
#: the station's spacings a command may go without being sent again and still count as held
HELD_WITHIN = 3
#: m: the envelope's least radius (the localization's own uncertainty, about)
ENVELOPE_BASE = 0.05
#: m: how far the camera's footprint reaches on the map when its top row sees the horizon
FOOTPRINT_REACH = 4.0


@dataclass(frozen=True, slots=True)
class PredictedPose:
    """The robot at time ``t`` (s, station clock): pose (m, rad), pan (rad), and its chassis
    speed and turn rate then (m/s, rad/s)."""

    t: float
    x: float
    y: float
    theta: float
    pan: float
    v: float = 0.0
    omega: float = 0.0


@dataclass(frozen=True, slots=True)
class Prediction:
    """What the predictor says at ``now.t``: the report it started from (its time on the
    station clock), the robot now, the robot when a command sent now lands, the path from now
    over the horizon (the first ``committed`` points before that landing), the envelope's
    radius at each, and the one-way delay and spread it used (s)."""

    origin: float
    now: PredictedPose
    arrival: PredictedPose
    path: tuple[PredictedPose, ...]
    radii: tuple[float, ...]
    committed: int
    delay: float
    spread: float


class DelayStats:
    """One-way delays of the robot's reports (s), the last ``window`` s of them (at most
    ``most``): their median and their spread (highest minus lowest)."""

    def __init__(self, window: float = 5.0, most: int = 512) -> None:
        self.window = window
        self._delays: deque[tuple[float, float]] = deque(maxlen=most)

    def add(self, at: float, delay: float) -> None:
        if not math.isfinite(delay):
            return
        self._delays.append((at, max(0.0, delay)))
        while self._delays and self._delays[0][0] < at - self.window:
            self._delays.popleft()

    @property
    def ready(self) -> bool:
        return bool(self._delays)

    @property
    def median(self) -> float:
        ordered = sorted(d for _, d in self._delays)
        if not ordered:
            return 0.0
        middle = len(ordered) // 2
        if len(ordered) % 2:
            return ordered[middle]
        return 0.5 * (ordered[middle - 1] + ordered[middle])

    @property
    def spread(self) -> float:
        if not self._delays:
            return 0.0
        delays = [d for _, d in self._delays]
        return max(delays) - min(delays)


def _approach(
    current: float, target: float, tau: float, up: float, down: float, dt: float
) -> float:
    """A track's speed after ``dt``: a first-order lag toward ``target`` within the
    acceleration (speeding up) and deceleration limits (the robot description's motors)."""
    desired = target if tau <= 0 else current + (target - current) * (1 - math.exp(-dt / tau))
    change = desired - current
    speeding_up = abs(desired) > abs(current) and desired * current >= 0
    limit = (up if speeding_up else down) * dt
    return current + max(-limit, min(limit, change))


class _Replay:
    """One run of the robot's description from a report: pose, pan, track speeds, and the
    command in force (a Free Look command through its own controller)."""

    def __init__(self, config: RobotConfig, start: Telemetry, t: float) -> None:
        self.config = config
        drive = config.drive
        self.d = drive.d_eff
        # the ground's track width: the slip's ICR spread widens it (the robot's own belief)
        slip = config.slip
        self.ground_d = drive.track_width * (slip.icr_spread if slip.enabled else 1.0)
        self.kept = 1.0 - (slip.longitudinal if slip.enabled else 0.0)
        self.t = t
        self.x, self.y, self.theta = start.pose
        self.pan = start.pan
        half = 0.5 * start.omega * self.ground_d / max(self.kept, 1e-6)
        self.left, self.right = start.v - half, start.v + half
        self.scale = max(0.0, start.safety_scale)
        self.command: Message | None = None
        self.flc: FreeLookController | None = None
        #: when the command in force stops acting: the robot's watchdog, unless sent again
        self.lapses = math.inf
        self.timeout = config.safety.watchdog_timeout

    def take(self, command: Message, held: bool = False) -> None:
        """A command lands at :attr:`t` (the previous one held until now); ``held``: the
        station keeps sending it (it does not lapse)."""
        self.lapses = math.inf if held else self.t + self.timeout
        if isinstance(command, FreeLookCommand) and self.config.pan_tilt is not None:
            if self.flc is None:
                cfg = self.config
                assert cfg.pan_tilt is not None
                self.flc = FreeLookController(cfg.free_look, cfg.drive, cfg.pan_tilt, cfg.limits)
            self.flc.command(CameraCommand(command.v1, command.v2, command.omega), self.t)
        else:
            self.flc = None
        self.command = command

    def _targets(self) -> tuple[float, float, float]:
        """The tracks' commanded speeds and the pan rate this cycle, after safety's scale."""
        if self.t > self.lapses:  # not sent again: the robot's watchdog stopped it
            self.command, self.flc, self.lapses = STOP, None, math.inf
        command, s = self.command, self.scale
        if isinstance(command, FreeLookCommand) and self.flc is not None:
            rate = (self.right - self.left) * self.kept / self.ground_d
            self.flc.carried_out = s
            drive, pan_rate = self.flc.step(
                Pose(self.x, self.y, self.theta), self.pan, rate, True, self.t
            )
            return drive.v_left * s, drive.v_right * s, pan_rate * s
        pan_rate = 0.0
        if isinstance(command, VelocityCommand | TankCommand):
            v, omega = command.v, command.omega
            pan_rate = command.pan_rate if isinstance(command, TankCommand) else 0.0
        elif isinstance(command, WheelSpeedCommand):
            v, omega = (command.left + command.right) / 2, (command.right - command.left) / self.d
        else:
            return self.left, self.right, 0.0  # nothing known to land: as it was reported
        base = self.config.drive
        wheels = tank_control(v, omega, self.d)
        within = saturation_factor(wheels, base.max_wheel_speed, None, base.max_turn_rate, self.d)
        k = within * s
        pt = self.config.pan_tilt
        if pt is not None:
            pan_rate = max(-pt.max_pan_rate, min(pt.max_pan_rate, pan_rate))
        return wheels.v_left * k, wheels.v_right * k, pan_rate

    def step(self, dt: float) -> None:
        drive = self.config.drive
        left, right, pan_rate = self._targets()
        tau, up, down = drive.motor_time_constant, drive.max_acceleration, drive.max_deceleration
        was_left, was_right = self.left, self.right
        self.left = _approach(was_left, left, tau, up, down, dt)
        self.right = _approach(was_right, right, tau, up, down, dt)
        # over the step, each track at its mean speed (exact for a steady acceleration)
        state = integrate_drive(
            DriveState(self.x, self.y, self.theta, self.pan),
            0.5 * (was_left + self.left) * self.kept,
            0.5 * (was_right + self.right) * self.kept,
            pan_rate,
            self.ground_d,
            dt,
        )
        self.x, self.y, self.theta = state.x, state.y, wrap_angle(state.theta)
        self.pan = self._pan_within(state.pan)
        self.t += dt

    def _pan_within(self, pan: float) -> float:
        pt = self.config.pan_tilt
        if pt is None or pt.pan_limits_deg is None:
            return wrap_angle(pan)
        low, high = (math.radians(a) for a in pt.pan_limits_deg)
        return max(low, min(high, pan))

    def pose(self) -> PredictedPose:
        v = 0.5 * (self.left + self.right) * self.kept
        omega = (self.right - self.left) * self.kept / self.ground_d
        return PredictedPose(self.t, self.x, self.y, self.theta, self.pan, v, omega)


class MotionPredictor:
    """The robot's pose now and over the next seconds, from its last report and the drive
    commands sent since (:meth:`observe`, :meth:`sent`, :meth:`predict`).

    ``step``: the integration's step (s; the robot's control period by default);
    ``horizon``: how far ahead the path goes (s), a point every ``path_step`` s; ``remember``:
    the commands kept (the newest; a few seconds' worth at the station's spacing);
    ``max_lead``: a report older than this (s) says too little to predict from."""

    def __init__(
        self,
        config: RobotConfig,
        *,
        step: float | None = None,
        horizon: float = 2.0,
        path_step: float = 0.1,
        remember: int = 256,
        window: float = 5.0,
        max_lead: float = 5.0,
    ) -> None:
        self.config = config
        self.step = step if step is not None else config.link.control_period
        if not (math.isfinite(self.step) and self.step > 0):
            raise ValueError(f"step {self.step!r} s must be finite and positive")
        if not (math.isfinite(horizon) and horizon >= 0):
            raise ValueError(f"horizon {horizon!r} s must be finite and not negative")
        if not (math.isfinite(path_step) and path_step > 0):
            raise ValueError(f"path_step {path_step!r} s must be finite and positive")
        self.horizon = horizon
        self.path_step = path_step
        self.max_lead = max_lead
        #: the robot cycle that takes a command after it lands: half a period on average
        self.pickup = 0.5 * config.link.control_period
        self.spacing = config.link.operator_tx_spacing
        self.delays = DelayStats(window)
        self.report: Telemetry | None = None
        self.report_at: float | None = None  # the report's stamp on the station's clock
        self._sent: deque[tuple[float, Message]] = deque(maxlen=remember)

    def observe(self, telemetry: Telemetry, arrival: float, offset: float | None) -> None:
        """A report arrived at ``arrival`` (station clock); ``offset``: the robot's clock minus
        the station's (None while unknown: no prediction)."""
        if offset is None or not math.isfinite(offset):
            return
        at = telemetry.stamp - offset
        if self.report_at is not None and self.report_at - self.max_lead < at < self.report_at:
            return  # a little older than the one held (reordered): the newer stands
        # (a report from far back is a robot whose clock started again: it is taken)
        self.report, self.report_at = telemetry, at
        self.delays.add(arrival, arrival - at)

    def sent(self, command: Message, now: float) -> None:
        """A command left for the robot at ``now`` (station clock): a drive command; an
        engaged e-stop (a stop); a linear drive, a trajectory or a goal (the robot drives
        itself: from then on it is predicted as it reports itself driving)."""
        if isinstance(command, DRIVE_COMMANDS):
            self._sent.append((now, command))
        elif isinstance(command, EStop) and command.engaged:
            self._sent.append((now, STOP))
        elif isinstance(command, LinearDriveStart | TrajectoryStart | GoalStart):
            self._sent.clear()

    @property
    def delay(self) -> float:
        """The one-way delay used (s): the reports' median."""
        return self.delays.median

    def predict(self, now: float) -> Prediction | None:
        """The robot now, when a command sent now lands, and its path from now over the
        horizon (None before a report with a known clock)."""
        report, start = self.report, self.report_at
        if report is None or start is None or now - start > self.max_lead:
            return None  # no report yet, or one too old: its robot may have done anything
        delay, spread = self.delay, self.delays.spread
        lands = delay + self.pickup
        replay = _Replay(self.config, report, start)
        # the newest command, still sent at the station's spacing, is held: it never lapses
        held = bool(self._sent) and now - self._sent[-1][0] <= HELD_WITHIN * self.spacing
        last = len(self._sent) - 1
        pending = [(sent + lands, c, held and i == last) for i, (sent, c) in enumerate(self._sent)]
        in_force = [(when, c, h) for when, c, h in pending if when <= start]
        if in_force:
            when, c, h = in_force[-1]
            replay.t = when  # landed then: its watchdog runs from there
            replay.take(c, h)
            replay.t = start
        pending = [p for p in pending if p[0] > start]
        here = self._run(replay, pending, now)
        arrival_t = now + lands
        steps = max(1, math.ceil(max(self.horizon, lands) / self.path_step - 1e-9))
        times = sorted({now + k * self.path_step for k in range(1, steps + 1)} | {arrival_t})
        path, arrival = [here], here
        for t in times:
            point = self._run(replay, pending, t)
            path.append(point)
            if t == arrival_t:
                arrival = point
        committed = path.index(arrival) + 1
        return Prediction(
            start, here, arrival, tuple(path), _envelope(path, spread), committed, delay, spread
        )

    def _run(
        self, replay: _Replay, pending: list[tuple[float, Message, bool]], until: float
    ) -> PredictedPose:
        """Step ``replay`` to ``until``, each pending command taken as it lands (and dropped
        from ``pending``)."""
        while replay.t < until - 1e-12:
            nxt = pending[0][0] if pending else math.inf
            if nxt <= replay.t + 1e-12:
                _, command, held = pending.pop(0)
                replay.take(command, held)
                continue
            replay.step(min(self.step, until - replay.t, nxt - replay.t))
        while pending and pending[0][0] <= replay.t + 1e-12:
            _, command, held = pending.pop(0)
            replay.take(command, held)
        return replay.pose()


def _envelope(path: list[PredictedPose], spread: float) -> tuple[float, ...]:
    """Each path point's envelope radius (m): the base, plus speed times spread (a command
    landing that much early or late), plus turn rate times spread times the way travelled
    since (the rest of the path turned by it); the highest speed and rate so far count."""
    radii = []
    speed = turn = travelled = 0.0
    for before, point in zip([path[0], *path], path, strict=False):
        travelled += math.hypot(point.x - before.x, point.y - before.y)
        speed, turn = max(speed, abs(point.v)), max(turn, abs(point.omega))
        radii.append(ENVELOPE_BASE + spread * (speed + turn * travelled))
    return tuple(radii)


def camera_footprint(
    config: RobotConfig, pose: PredictedPose, tilt: float
) -> list[tuple[float, float]]:
    """The ground the driving camera sees from ``pose`` at ``tilt`` (rad, up positive), as
    four map points (near left, far left, far right, near right); none without a pan-tilt unit.
    The camera's rows see the ground where they look down (the simulator's sheared projection:
    row v looks down atan((v − H/2)/f − tan tilt)); the far edge stops at
    :data:`FOOTPRINT_REACH` when the top row sees the horizon."""
    pt = config.pan_tilt
    if pt is None:
        return []
    cam = config.camera
    focal = (cam.width / 2) / math.tan(math.radians(cam.fov_deg) / 2)
    half_width = math.tan(math.radians(cam.fov_deg) / 2)
    h = pt.mount_height

    def reach(row_down: float) -> float:
        down = row_down - math.tan(tilt)
        return FOOTPRINT_REACH if down <= 0 else min(FOOTPRINT_REACH, h / down)

    near = 0.0 if cam.height / 2 / focal - math.tan(tilt) <= 0 else reach(cam.height / 2 / focal)
    far = reach(-cam.height / 2 / focal)
    c, s = math.cos(pose.theta), math.sin(pose.theta)
    cx = pose.x + c * pt.mount_forward - s * pt.mount_left
    cy = pose.y + s * pt.mount_forward + c * pt.mount_left
    psi = pose.theta + pose.pan
    cp, sp = math.cos(psi), math.sin(psi)
    corners = [(near, near * half_width), (far, far * half_width)]
    corners += [(far, -far * half_width), (near, -near * half_width)]
    return [(cx + cp * f - sp * lft, cy + sp * f + cp * lft) for f, lft in corners]
