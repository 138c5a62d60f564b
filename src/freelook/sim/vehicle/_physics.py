"""The vehicle physics as one compiled kernel over a batch of vehicles and a run of steps.

State, commands and parameters live in flat float64 arrays so that stepping N vehicles through
n physics steps is one call with no allocation: the single-robot simulator passes N = 1, the
fleet passes all its robots. The arithmetic is the drive model of :mod:`._vehicle` written out
operation for operation, so the compiled loop and a plain-Python step agree to the last bit
wherever the math library does.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

from freelook.config import PhysicalTruth, RobotConfig
from freelook.geometry import wrap_angle_compiled
from freelook.kinematics import omni_ground_matrix
from freelook.sim.vehicle._collision import footprint_clear, footprint_hits

__all__ = ["STATE_SIZE", "StateColumn", "draws_noise", "physics_params", "step_vehicles"]


# columns of a vehicle's state row
X, Y, THETA = 0, 1, 2
V_LEFT, V_RIGHT = 3, 4  # actual track speeds
VX, VY, OMEGA_ACTUAL = 5, 6, 7  # holonomic actual body velocity
CMD_LEFT, CMD_RIGHT = 8, 9
CMD_VX, CMD_VY, CMD_OMEGA = 10, 11, 12
PAN_RATE, TILT_RATE = 13, 14
PAN, TILT = 15, 16
LEFT_DISTANCE, RIGHT_DISTANCE = 17, 18
V, OMEGA = 19, 20  # body velocity carried out in the last step
BUMPER_FRONT, BUMPER_REAR = 21, 22  # 0.0 or 1.0
CONTACTS = 23  # steps that ended against an obstacle
ROTATION = 24  # unwrapped body rotation since start
STATE_SIZE = 25


class StateColumn:
    """The columns above by name, for code outside the kernels."""

    X, Y, THETA = X, Y, THETA
    V_LEFT, V_RIGHT = V_LEFT, V_RIGHT
    CMD_LEFT, CMD_RIGHT = CMD_LEFT, CMD_RIGHT
    CMD_VX, CMD_VY, CMD_OMEGA = CMD_VX, CMD_VY, CMD_OMEGA
    PAN_RATE, TILT_RATE = PAN_RATE, TILT_RATE
    PAN, TILT = PAN, TILT
    LEFT_DISTANCE, RIGHT_DISTANCE = LEFT_DISTANCE, RIGHT_DISTANCE
    V, OMEGA = V, OMEGA
    BUMPER_FRONT, BUMPER_REAR = BUMPER_FRONT, BUMPER_REAR
    CONTACTS, ROTATION = CONTACTS, ROTATION


# parameter vector layout
_TAU, _ACC, _DEC, _TRACK, _HOLONOMIC = 0, 1, 2, 3, 4
_SPREAD, _LONGITUDINAL, _SLIP_NOISE = 5, 6, 7
_PAN_TILT, _PAN_WRAP, _PAN_LO, _PAN_HI, _TILT_LO, _TILT_HI = 8, 9, 10, 11, 12, 13
_REACH, _OX, _OY, _RESOLUTION, _OUTLINE_REACH = 14, 15, 16, 17, 18
# the physical robot against its description (all neutral without an error model)
_K_LEFT, _K_RIGHT, _SPREAD_RIGHT_TURN, _SPREAD_PER_RATE, _LATERAL, _ICR_FORWARD = range(19, 25)
_TRACK_RATIO = 25  # true track width over nominal
_OMNI = 26  # 1.0: a holonomic base on three omni wheels, its ground twist the matrix below
_GROUND = 27  # 9 values, row-major: the ground's body twist per commanded twist
_PARAMS = 36


def physics_params(
    config: RobotConfig,
    reach: float,
    origin: tuple[float, float],
    resolution: float,
    outline: npt.NDArray[np.float64],
    truth: PhysicalTruth | None = None,
) -> npt.NDArray[np.float64]:
    """The parameter vector :func:`step_vehicles` reads, from a robot description, a grid and
    the footprint's ``outline`` (body-frame points the collision check looks at).

    ``truth`` is the physical robot when it differs from its description (an error model's
    draw): each wheel's true diameter over nominal (the motors servo the nominal speed, so the
    ground sees that times the ratio), the true track width, the ICR spread turning left and
    right and its growth with the turn rate, longitudinal slip, a sideways skid in turns and
    the random slip. A holonomic base's wheels turn as its nominal geometry asks for the
    commanded twist (what its encoders count); the ground answers through the same ratios,
    spreads and slips, its sideways motion scaled by the wheels' mean ratio; one on three omni
    wheels (``truth.omni_angles``, Kievit-Kylar's M2P2) turns each wheel for the commanded
    twist by the nominal geometry, and the ground gives the twist of the true diameters and
    radius (:func:`~freelook.kinematics.omni_ground_matrix`), less the longitudinal slip and
    the random slip (no ICR spread: the rollers roll sideways). Without ``truth`` the robot is
    its description, its sideways skid the ``[slip]``'s ``icr_forward`` and ``lateral``."""
    drive, slip, pt = config.drive, config.slip, config.pan_tilt
    p = np.zeros(_PARAMS)
    p[_TAU], p[_ACC], p[_DEC] = (
        drive.motor_time_constant,
        drive.max_acceleration,
        drive.max_deceleration,
    )
    p[_TRACK] = drive.track_width
    p[_HOLONOMIC] = 1.0 if drive.kind == "holonomic" else 0.0
    p[_SPREAD], p[_LONGITUDINAL] = (slip.icr_spread, slip.longitudinal) if slip.enabled else (1, 0)
    p[_SLIP_NOISE] = slip.noise if slip.enabled else 0.0
    p[_K_LEFT] = p[_K_RIGHT] = p[_TRACK_RATIO] = 1.0
    p[_SPREAD_RIGHT_TURN] = p[_SPREAD]
    if slip.enabled:  # the description's sideways skid (none unless it says)
        p[_LATERAL], p[_ICR_FORWARD] = slip.lateral, slip.icr_forward
    if truth is not None:
        p[_TRACK] = drive.track_width * truth.track
        p[_TRACK_RATIO] = truth.track
        p[_K_LEFT], p[_K_RIGHT] = truth.left_wheel, truth.right_wheel
        p[_SPREAD], p[_SPREAD_RIGHT_TURN] = truth.spread_left_turn, truth.spread_right_turn
        p[_SPREAD_PER_RATE] = truth.spread_per_rate
        p[_LONGITUDINAL] = truth.longitudinal
        p[_LATERAL], p[_ICR_FORWARD] = truth.lateral, truth.icr_forward
        p[_SLIP_NOISE] = truth.slip_noise
        if truth.omni_angles is not None and drive.kind == "holonomic":
            p[_OMNI] = 1.0
            ratios = (truth.left_wheel, truth.right_wheel, truth.third_wheel)
            radius = drive.track_width / 2
            ground = omni_ground_matrix(truth.omni_angles, radius, ratios, radius * truth.track)
            p[_GROUND : _GROUND + 9] = ground.reshape(-1)
    if pt is not None:
        p[_PAN_TILT] = 1.0
        if pt.pan_limits_deg is None:
            p[_PAN_WRAP] = 1.0
        else:
            p[_PAN_LO], p[_PAN_HI] = (math.radians(v) for v in pt.pan_limits_deg)
        p[_TILT_LO], p[_TILT_HI] = (math.radians(v) for v in pt.tilt_limits_deg)
    p[_REACH] = reach
    p[_OX], p[_OY] = origin
    p[_RESOLUTION] = resolution
    p[_OUTLINE_REACH] = float(np.hypot(outline[:, 0], outline[:, 1]).max()) if len(outline) else 0.0
    return p


def draws_noise(params: npt.NDArray[np.float64]) -> bool:
    """Whether each step of a vehicle with these parameters draws one standard normal."""
    return bool(params[_SLIP_NOISE] > 0.0)


@numba.njit(cache=True, nogil=True, inline="always")
def _approach(
    current: float, target: float, tau: float, accel: float, decel: float, dt: float
) -> float:
    desired = target if tau <= 0 else current + (target - current) * (1 - math.exp(-dt / tau))
    change = desired - current
    speeding_up = abs(desired) > abs(current) and desired * current >= 0
    limit = (accel if speeding_up else decel) * dt
    if change > limit:
        return current + limit
    if change < -limit:
        return current - limit
    return desired


@numba.njit(cache=True, nogil=True)
def step_vehicles(
    state: npt.NDArray[np.float64],
    params: npt.NDArray[np.float64],
    grid: npt.NDArray[np.bool_],
    clearance: npt.NDArray[np.float32],
    points: npt.NDArray[np.float64],
    noise: npt.NDArray[np.float64],
    steps: int,
    dt: float,
) -> None:
    """Advance every vehicle (one row of ``state`` each) by ``steps`` steps of ``dt`` seconds.

    A sub-step's footprint ``points`` are looked at on the ``grid`` only near an obstacle or
    the grid's edge (``clearance``: the grid's :func:`~freelook.maps.clearance_of`); elsewhere
    none can touch one (:func:`~._collision.footprint_clear`).

    ``noise[i, k]`` is vehicle i's standard normal for step k (read only when its slip model
    has noise). Motion is sub-stepped so no sub-step moves the footprint by more than half a
    grid cell; a sub-step that would overlap an obstacle is not taken, the motors stall and the
    bumper on that side is pressed.

    Over 80 lines: one loop keeps the parameters in registers; split into helpers (inlined) it
    stepped 1.5 to 1.7 times slower on open floor, where nothing else costs.
    """
    tau, acc, dec, track = params[_TAU], params[_ACC], params[_DEC], params[_TRACK]
    holonomic = params[_HOLONOMIC] != 0.0
    spread, longitudinal, slip_noise = params[_SPREAD], params[_LONGITUDINAL], params[_SLIP_NOISE]
    reach, ox, oy, res = params[_REACH], params[_OX], params[_OY], params[_RESOLUTION]
    outline_reach = params[_OUTLINE_REACH]
    k_left, k_right = params[_K_LEFT], params[_K_RIGHT]
    spread_right, per_rate = params[_SPREAD_RIGHT_TURN], params[_SPREAD_PER_RATE]
    lateral, icr_forward = params[_LATERAL], params[_ICR_FORWARD]
    track_ratio = params[_TRACK_RATIO]
    omni = params[_OMNI] != 0.0
    # the ground matrix as scalars: a view of params read in the loop slowed every base's step
    # by a quarter (sim.fleet_100, pioneers that never read it)
    g0, g1, g2 = params[_GROUND], params[_GROUND + 1], params[_GROUND + 2]
    g3, g4, g5 = params[_GROUND + 3], params[_GROUND + 4], params[_GROUND + 5]
    g6, g7, g8 = params[_GROUND + 6], params[_GROUND + 7], params[_GROUND + 8]
    skids = lateral != 0.0 or icr_forward != 0.0
    for i in range(state.shape[0]):
        s = state[i]
        for k in range(steps):
            if holonomic:
                s[VX] = _approach(s[VX], s[CMD_VX], tau, acc, dec, dt)
                s[VY] = _approach(s[VY], s[CMD_VY], tau, acc, dec, dt)
                yaw_acc = 2 * acc / track
                s[OMEGA_ACTUAL] = _approach(
                    s[OMEGA_ACTUAL], s[CMD_OMEGA], tau, yaw_acc, 2 * dec / track, dt
                )
                # the wheels turn for the commanded twist by the nominal geometry
                half_turn = s[OMEGA_ACTUAL] * track / track_ratio / 2
                wheel_left, wheel_right = s[VX] - half_turn, s[VX] + half_turn
                strafe = s[VY] * 0.5 * (k_left + k_right)
            else:
                s[V_LEFT] = _approach(s[V_LEFT], s[CMD_LEFT], tau, acc, dec, dt)
                s[V_RIGHT] = _approach(s[V_RIGHT], s[CMD_RIGHT], tau, acc, dec, dt)
                wheel_left, wheel_right = s[V_LEFT], s[V_RIGHT]
                strafe = 0.0
            s[LEFT_DISTANCE] += wheel_left * dt
            s[RIGHT_DISTANCE] += wheel_right * dt
            # the ground under each side: the nominal speed the motors hold times the true
            # diameter over nominal
            ground_left = wheel_left * k_left
            ground_right = wheel_right * k_right
            vx = 0.5 * (ground_left + ground_right) * (1.0 - longitudinal)
            turn = ground_right - ground_left
            icr = spread if turn >= 0.0 else spread_right
            if per_rate != 0.0:
                icr += per_rate * abs(turn / track)
            omega = turn / (icr * track)
            vy = strafe * (1.0 - longitudinal)
            if omni:  # three omni wheels: the true geometry's twist, no ICR
                cx, cy, cw = s[VX], s[VY], s[OMEGA_ACTUAL]
                keep = 1.0 - longitudinal
                vx = (g0 * cx + g1 * cy + g2 * cw) * keep
                vy = (g3 * cx + g4 * cy + g5 * cw) * keep
                omega = (g6 * cx + g7 * cy + g8 * cw) * keep
            if slip_noise > 0:
                factor = 1.0 + slip_noise * noise[i, k]
                vx *= factor
                vy *= factor
                omega *= factor
            if skids:
                # a skid outwards in a turn and an ICR off the axle
                vy -= (icr_forward + lateral * vx) * omega
            # pan-tilt unit
            if params[_PAN_TILT] != 0.0 and (s[PAN_RATE] != 0.0 or s[TILT_RATE] != 0.0):
                pan = s[PAN] + s[PAN_RATE] * dt
                if params[_PAN_WRAP] != 0.0:
                    pan = wrap_angle_compiled(pan)
                else:
                    pan = max(params[_PAN_LO], min(params[_PAN_HI], pan))
                s[PAN] = pan
                tilt = s[TILT] + s[TILT_RATE] * dt
                s[TILT] = max(params[_TILT_LO], min(params[_TILT_HI], tilt))
            # move, sub-stepped against the grid
            travel = (math.hypot(vx, vy) + abs(omega) * reach) * dt
            substeps = max(1, math.ceil(travel / (0.5 * res)))
            h = dt / substeps
            front = rear = blocked = False
            x, y, theta = s[X], s[Y], s[THETA]
            for _ in range(substeps):
                mid = theta + 0.5 * omega * h
                c, sn = math.cos(mid), math.sin(mid)
                nx = x + (c * vx - sn * vy) * h
                ny = y + (sn * vx + c * vy) * h
                nth = theta + omega * h
                hits = 0
                if not footprint_clear(clearance, ox, oy, res, nx, ny, outline_reach):
                    hits = footprint_hits(grid, ox, oy, res, nx, ny, nth, points)
                if hits:
                    front = front or (hits & 1) != 0
                    rear = rear or (hits & 2) != 0
                    blocked = True
                    break
                x, y, theta = nx, ny, nth
                s[ROTATION] += omega * h
            s[X], s[Y], s[THETA] = x, y, wrap_angle_compiled(theta)
            if blocked:
                s[CONTACTS] += 1.0
                # the motors stall against the obstacle: no further push into it
                s[V_LEFT] = s[V_RIGHT] = s[VX] = s[VY] = s[OMEGA_ACTUAL] = 0.0
                s[V] = s[OMEGA] = 0.0
            else:
                s[V], s[OMEGA] = vx, omega
            s[BUMPER_FRONT] = 1.0 if front else 0.0
            s[BUMPER_REAR] = 1.0 if rear else 0.0
