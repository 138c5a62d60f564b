"""The simulated vehicle: differential, tracked (ICR slip) or holonomic base with a pan-tilt unit.

Wheel (track) speeds follow their commands through a first-order motor lag and acceleration
limits. The wheels' travelled distances are what encoders see; the body moves by the ICR slip
model of tracked vehicles (Martinez et al.): with the tracks' ICRs at ±icr_spread·d/2,
ω = (v_r − v_l)/(icr_spread·d) and v = (v_r + v_l)/2·(1 − longitudinal slip), so turning on
the spot yields less rotation than the encoders report. Motion is sub-stepped so no step moves
the footprint by more than half a grid cell; a step that would overlap an obstacle is not taken,
the wheels stall and a bumper event is raised.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from freelook.config import RobotConfig
from freelook.geometry import wrap_angle
from freelook.maps import World
from freelook.sim.vehicle._collision import footprint_hits, perimeter_points

__all__ = ["Vehicle", "VehicleState"]


@dataclass(frozen=True, slots=True)
class VehicleState:
    """Ground truth of the vehicle at one instant."""

    x: float
    y: float
    theta: float
    v: float  # body forward speed, m/s
    omega: float  # body yaw rate, rad/s
    pan: float
    tilt: float
    left_distance: float  # what the left wheel/track surface travelled (encoder truth), m
    right_distance: float
    bumper_front: bool
    bumper_rear: bool


def _approach(
    current: float, target: float, tau: float, accel: float, decel: float, dt: float
) -> float:
    """First-order lag toward ``target`` with acceleration and deceleration limits."""
    desired = target if tau <= 0 else current + (target - current) * (1 - math.exp(-dt / tau))
    change = desired - current
    speeding_up = abs(desired) > abs(current) and desired * current >= 0
    limit = (accel if speeding_up else decel) * dt
    if change > limit:
        return current + limit
    if change < -limit:
        return current - limit
    return desired


class Vehicle:
    """Sans-I/O vehicle physics; call :meth:`step` with the elapsed time."""

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        rng: np.random.Generator,
        pose: tuple[float, float, float] | None = None,
    ) -> None:
        self.config = config
        self.world = world
        self.rng = rng
        self._grid = world.obstacles()
        fp = config.footprint
        # an outline a quarter cell outside the footprint, sampled every quarter cell: a grid
        # cell cannot reach the real footprint without covering one of these points
        margin = world.resolution / 4
        self._points = perimeter_points(
            fp.length + 2 * margin, fp.width + 2 * margin, fp.center_forward, world.resolution / 4
        )
        self._reach = math.hypot(abs(fp.center_forward) + fp.length / 2, fp.width / 2)
        x, y, theta = pose if pose is not None else world.start
        self.x, self.y, self.theta = x, y, theta
        self.v_left = self.v_right = 0.0  # actual track speeds
        self.vx = self.vy = self.omega_cmd_actual = 0.0  # holonomic actual body velocity
        self.cmd_left = self.cmd_right = 0.0
        self.cmd_vx = self.cmd_vy = self.cmd_omega = 0.0
        self.pan_rate_cmd = self.tilt_rate_cmd = 0.0
        self.pan = self.tilt = 0.0
        self.left_distance = self.right_distance = 0.0
        self.v = self.omega = 0.0
        self.bumper_front = self.bumper_rear = False
        self.contacts = 0
        #: Total rotation of the body since start (not wrapped): what a rate gyro integrates.
        self.rotation = 0.0
        if self.collides(x, y, theta):
            raise ValueError(f"start pose ({x:.2f}, {y:.2f}) overlaps an obstacle")

    # -- commands ----------------------------------------------------------------------------

    def command_wheels(self, left: float, right: float) -> None:
        vmax = self.config.drive.max_wheel_speed
        self.cmd_left = max(-vmax, min(vmax, left))
        self.cmd_right = max(-vmax, min(vmax, right))

    def command_twist(self, vx: float, vy: float, omega: float) -> None:
        """Holonomic bases: body velocity; others: mapped to wheel speeds (vy ignored)."""
        if self.config.drive.kind == "holonomic":
            self.cmd_vx, self.cmd_vy, self.cmd_omega = vx, vy, omega
        else:
            half = omega * self.config.drive.track_width / 2
            self.command_wheels(vx - half, vx + half)

    def command_pan_tilt(self, pan_rate: float, tilt_rate: float) -> None:
        pt = self.config.pan_tilt
        if pt is None:
            return
        pan_max = pt.max_pan_rate
        tilt_max = math.radians(pt.max_tilt_rate_deg)
        self.pan_rate_cmd = max(-pan_max, min(pan_max, pan_rate)) if pt.has_pan else 0.0
        self.tilt_rate_cmd = max(-tilt_max, min(tilt_max, tilt_rate)) if pt.has_tilt else 0.0

    # -- physics -----------------------------------------------------------------------------

    def collides(self, x: float, y: float, theta: float) -> bool:
        return (
            footprint_hits(
                self._grid,
                self.world.origin[0],
                self.world.origin[1],
                self.world.resolution,
                x,
                y,
                theta,
                self._points,
            )
            != 0
        )

    def _step_pan_tilt(self, dt: float) -> None:
        pt = self.config.pan_tilt
        if pt is None or (self.pan_rate_cmd == 0.0 and self.tilt_rate_cmd == 0.0):
            return
        pan = self.pan + self.pan_rate_cmd * dt
        if pt.pan_limits_deg is None:
            pan = wrap_angle(pan)
        else:
            lo, hi = (math.radians(v) for v in pt.pan_limits_deg)
            pan = max(lo, min(hi, pan))
        lo_t, hi_t = (math.radians(v) for v in pt.tilt_limits_deg)
        self.pan = pan
        self.tilt = max(lo_t, min(hi_t, self.tilt + self.tilt_rate_cmd * dt))

    def step(self, dt: float) -> None:
        """Advance the physics by ``dt`` seconds."""
        drive = self.config.drive
        tau, acc, dec = drive.motor_time_constant, drive.max_acceleration, drive.max_deceleration
        if drive.kind == "holonomic":
            self.vx = _approach(self.vx, self.cmd_vx, tau, acc, dec, dt)
            self.vy = _approach(self.vy, self.cmd_vy, tau, acc, dec, dt)
            yaw_acc = 2 * acc / drive.track_width
            self.omega_cmd_actual = _approach(
                self.omega_cmd_actual, self.cmd_omega, tau, yaw_acc, 2 * dec / drive.track_width, dt
            )
            vx, vy, omega = self.vx, self.vy, self.omega_cmd_actual
            self.left_distance += (vx - omega * drive.track_width / 2) * dt
            self.right_distance += (vx + omega * drive.track_width / 2) * dt
        else:
            self.v_left = _approach(self.v_left, self.cmd_left, tau, acc, dec, dt)
            self.v_right = _approach(self.v_right, self.cmd_right, tau, acc, dec, dt)
            self.left_distance += self.v_left * dt
            self.right_distance += self.v_right * dt
            slip = self.config.slip
            spread, longitudinal = 1.0, 0.0
            if slip.enabled:
                spread, longitudinal = slip.icr_spread, slip.longitudinal
            vx = 0.5 * (self.v_left + self.v_right) * (1.0 - longitudinal)
            omega = (self.v_right - self.v_left) / (spread * drive.track_width)
            if slip.enabled and slip.noise > 0:
                noise = 1.0 + slip.noise * float(self.rng.standard_normal())
                vx *= noise
                omega *= noise
            vy = 0.0
        self._step_pan_tilt(dt)
        self._move(vx, vy, omega, dt)

    def _move(self, vx: float, vy: float, omega: float, dt: float) -> None:
        travel = (math.hypot(vx, vy) + abs(omega) * self._reach) * dt
        substeps = max(1, math.ceil(travel / (0.5 * self.world.resolution)))
        h = dt / substeps
        front = rear = False
        blocked = False
        for _ in range(substeps):
            mid = self.theta + 0.5 * omega * h
            c, s = math.cos(mid), math.sin(mid)
            nx = self.x + (c * vx - s * vy) * h
            ny = self.y + (s * vx + c * vy) * h
            nth = self.theta + omega * h
            hits = footprint_hits(
                self._grid,
                self.world.origin[0],
                self.world.origin[1],
                self.world.resolution,
                nx,
                ny,
                nth,
                self._points,
            )
            if hits:
                front |= bool(hits & 1)
                rear |= bool(hits & 2)
                blocked = True
                break
            self.x, self.y, self.theta = nx, ny, nth
            self.rotation += omega * h
        self.theta = wrap_angle(self.theta)
        if blocked:
            self.contacts += 1
            # the motors stall against the obstacle: no further push into it
            self.v_left = self.v_right = self.vx = self.vy = self.omega_cmd_actual = 0.0
            self.v, self.omega = 0.0, 0.0
        else:
            self.v, self.omega = vx, omega
        self.bumper_front, self.bumper_rear = front, rear

    def state(self) -> VehicleState:
        return VehicleState(
            self.x,
            self.y,
            self.theta,
            self.v,
            self.omega,
            self.pan,
            self.tilt,
            self.left_distance,
            self.right_distance,
            self.bumper_front,
            self.bumper_rear,
        )
