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

from freelook.config import PhysicalTruth, RobotConfig
from freelook.maps import World, clearance_of
from freelook.sim.vehicle import _physics as ph
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


def _field(column: int, doc: str) -> property:
    def get(self: Vehicle) -> float:
        value: float = self._row.item(column)  # the double as a Python float, no scalar made
        return value

    def set_(self: Vehicle, value: float) -> None:
        self._row[column] = value

    return property(get, set_, doc=doc)


def _flag(column: int, doc: str) -> property:
    def get(self: Vehicle) -> bool:
        return bool(self._row.item(column) != 0.0)

    return property(get, doc=doc)


class Vehicle:
    """Sans-I/O vehicle physics; call :meth:`step` with the elapsed time.

    The state is one row of the compiled kernel's state array; the attributes below read and
    write it.
    """

    x = _field(ph.X, "m")
    y = _field(ph.Y, "m")
    theta = _field(ph.THETA, "rad, wrapped")
    v_left = _field(ph.V_LEFT, "actual left track speed, m/s")
    v_right = _field(ph.V_RIGHT, "actual right track speed, m/s")
    cmd_left = _field(ph.CMD_LEFT, "commanded left track speed, m/s")
    cmd_right = _field(ph.CMD_RIGHT, "commanded right track speed, m/s")
    pan = _field(ph.PAN, "rad")
    tilt = _field(ph.TILT, "rad")
    pan_rate_cmd = _field(ph.PAN_RATE, "rad/s")
    tilt_rate_cmd = _field(ph.TILT_RATE, "rad/s")
    left_distance = _field(ph.LEFT_DISTANCE, "what the left wheel surface travelled, m")
    right_distance = _field(ph.RIGHT_DISTANCE, "what the right wheel surface travelled, m")
    v = _field(ph.V, "body forward speed carried out in the last step, m/s")
    omega = _field(ph.OMEGA, "body yaw rate carried out in the last step, rad/s")
    rotation = _field(
        ph.ROTATION, "total rotation of the body since start (not wrapped): what a gyro integrates"
    )
    bumper_front = _flag(ph.BUMPER_FRONT, "the last step pressed the front bumper")
    bumper_rear = _flag(ph.BUMPER_REAR, "the last step pressed the rear bumper")

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        rng: np.random.Generator,
        pose: tuple[float, float, float] | None = None,
        truth: PhysicalTruth | None = None,
    ) -> None:
        self.config = config
        #: the physical robot when it differs from ``config`` (see :func:`._physics.physics_params`)
        self.truth = truth
        self.world = world
        self.rng = rng
        # the command limits, read once from the (frozen) description: commands come every cycle
        self._max_wheel_speed = config.drive.max_wheel_speed
        pt = config.pan_tilt
        self._pan_tilt_limits = (
            (pt.max_pan_rate, math.radians(pt.max_tilt_rate_deg), pt.has_pan, pt.has_tilt)
            if pt is not None
            else None
        )
        self._grid = world.obstacles()
        fp = config.footprint
        # an outline a quarter cell outside the footprint, sampled every quarter cell: a grid
        # cell cannot reach the real footprint without covering one of these points
        margin = world.resolution / 4
        self._points = perimeter_points(
            fp.length + 2 * margin, fp.width + 2 * margin, fp.center_forward, world.resolution / 4
        )
        self._reach = math.hypot(abs(fp.center_forward) + fp.length / 2, fp.width / 2)
        #: What the compiled kernel reads: the parameter vector and the footprint outline.
        self.params = ph.physics_params(
            config, self._reach, world.origin, world.resolution, self._points, truth
        )
        self._clearance = clearance_of(self._grid)
        self.points = self._points
        self._noisy = ph.draws_noise(self.params)
        #: The state row the kernel steps (shape 1 × STATE_SIZE); the attributes read it.
        self.state_array = np.zeros((1, ph.STATE_SIZE))
        self._state = self.state_array
        self._row = self.state_array[0]  # a view: what the attributes read and write
        self._no_noise = np.zeros((1, 0))
        # the slip noise, drawn from ``rng`` in blocks ahead of the steps that read it (a
        # block gives the numbers one draw per step would); the first block is drawn by the
        # first step, so a vehicle that is never stepped leaves ``rng`` untouched
        self._noise_ahead = self._no_noise
        self._noise_at = 0
        x, y, theta = pose if pose is not None else world.start
        self.x, self.y, self.theta = x, y, theta
        if self.collides(x, y, theta):
            raise ValueError(f"start pose ({x:.2f}, {y:.2f}) overlaps an obstacle")

    @property
    def contacts(self) -> int:
        """Steps that ended against an obstacle."""
        return int(self._state[0, ph.CONTACTS])

    # -- commands ----------------------------------------------------------------------------

    def command_wheels(self, left: float, right: float) -> None:
        vmax = self._max_wheel_speed
        row = self._row
        row[ph.CMD_LEFT] = max(-vmax, min(vmax, left))
        row[ph.CMD_RIGHT] = max(-vmax, min(vmax, right))

    def command_twist(self, vx: float, vy: float, omega: float) -> None:
        """Holonomic bases: body velocity; others: mapped to wheel speeds (vy ignored)."""
        if self.config.drive.kind == "holonomic":
            s = self._state[0]
            s[ph.CMD_VX], s[ph.CMD_VY], s[ph.CMD_OMEGA] = vx, vy, omega
        else:
            half = omega * self.config.drive.track_width / 2
            self.command_wheels(vx - half, vx + half)

    def command_pan_tilt(self, pan_rate: float, tilt_rate: float) -> None:
        limits = self._pan_tilt_limits
        if limits is None:
            return
        pan_max, tilt_max, has_pan, has_tilt = limits
        row = self._row
        row[ph.PAN_RATE] = max(-pan_max, min(pan_max, pan_rate)) if has_pan else 0.0
        row[ph.TILT_RATE] = max(-tilt_max, min(tilt_max, tilt_rate)) if has_tilt else 0.0

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

    def step(self, dt: float, steps: int = 1) -> None:
        """Advance the physics by ``steps`` steps of ``dt`` seconds each, in one compiled call.

        Each step's slip normal is the next of ``rng``'s stream, as drawing ``(1, steps)``
        normals at every call would give; they are drawn ahead in blocks.
        """
        noise = self._no_noise
        if self._noisy:
            at = self._noise_at
            if self._noise_ahead.shape[1] - at < steps:
                self._draw_noise_ahead(steps)
                at = 0
            self._noise_at = at + steps
            noise = self._noise_ahead[:, at : at + steps]
        ph.step_vehicles(
            self._state, self.params, self._grid, self._clearance, self._points, noise, steps, dt
        )

    def _draw_noise_ahead(self, need: int) -> None:
        """A new block of normals: the unread ones first, then at least ``need`` in all."""
        kept = self._noise_ahead[0, self._noise_at :]
        block = np.empty((1, max(1024, 4 * need)))
        block[0, : kept.shape[0]] = kept
        self.rng.standard_normal(out=block[0, kept.shape[0] :])
        self._noise_ahead = block
        self._noise_at = 0

    def pose(self) -> tuple[float, float, float]:
        """(x, y, θ) in one read."""
        row = self._row
        return row.item(ph.X), row.item(ph.Y), row.item(ph.THETA)

    def pan_tilt(self) -> tuple[float, float]:
        """(pan, tilt), rad, in one read."""
        row = self._row
        return row.item(ph.PAN), row.item(ph.TILT)

    def bumpers(self) -> tuple[bool, bool]:
        """(front, rear): whether the last step pressed each bumper, in one read."""
        row = self._row
        return row.item(ph.BUMPER_FRONT) != 0.0, row.item(ph.BUMPER_REAR) != 0.0

    def wheel_distances(self) -> tuple[float, float]:
        """(left, right): what each wheel surface travelled, m (what encoders count)."""
        row = self._row
        return row.item(ph.LEFT_DISTANCE), row.item(ph.RIGHT_DISTANCE)

    def state(self) -> VehicleState:
        s = self._state[0].tolist()
        return VehicleState(
            s[ph.X],
            s[ph.Y],
            s[ph.THETA],
            s[ph.V],
            s[ph.OMEGA],
            s[ph.PAN],
            s[ph.TILT],
            s[ph.LEFT_DISTANCE],
            s[ph.RIGHT_DISTANCE],
            s[ph.BUMPER_FRONT] != 0.0,
            s[ph.BUMPER_REAR] != 0.0,
        )
