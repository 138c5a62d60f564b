"""The compiled vehicle kernel against a plain-Python step of the same drive model.

``ReferenceVehicle`` is the vehicle physics as it was written before it was compiled, one
Python call per step. Both are driven with the same seeded commands and noise, near walls so
that collisions happen, and must agree to float rounding.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import RobotConfig, load_robot
from freelook.experiments._added_laser import with_added_laser
from freelook.geometry import wrap_angle
from freelook.maps import World, clearance_of, load_world
from freelook.sim import Simulator
from freelook.sim.vehicle import Vehicle, footprint_clear, footprint_hits


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


class ReferenceVehicle:
    """One Python call per step; its geometry (footprint points, reach) taken from ``twin``."""

    def __init__(self, twin: Vehicle, rng: np.random.Generator) -> None:
        self.config = twin.config
        self.world = twin.world
        self.rng = rng
        self.grid = twin.world.obstacles()
        self.points = twin._points
        self.reach = twin._reach
        self.x, self.y, self.theta = twin.x, twin.y, twin.theta
        self.v_left = self.v_right = self.vx = self.vy = self.omega_actual = 0.0
        self.cmd_left = self.cmd_right = self.cmd_vx = self.cmd_vy = self.cmd_omega = 0.0
        self.pan_rate = self.tilt_rate = self.pan = self.tilt = 0.0
        self.left_distance = self.right_distance = self.v = self.omega = self.rotation = 0.0
        self.bumper_front = self.bumper_rear = False
        self.contacts = 0

    def command(self, left: float, right: float, pan_rate: float, tilt_rate: float) -> None:
        drive = self.config.drive
        if drive.kind == "holonomic":
            self.cmd_vx, self.cmd_vy, self.cmd_omega = (left + right) / 2, 0.1 * left, 0.5 * right
        else:
            vmax = drive.max_wheel_speed
            self.cmd_left = max(-vmax, min(vmax, left))
            self.cmd_right = max(-vmax, min(vmax, right))
        pt = self.config.pan_tilt
        if pt is not None:
            pan_max, tilt_max = pt.max_pan_rate, math.radians(pt.max_tilt_rate_deg)
            self.pan_rate = max(-pan_max, min(pan_max, pan_rate)) if pt.has_pan else 0.0
            self.tilt_rate = max(-tilt_max, min(tilt_max, tilt_rate)) if pt.has_tilt else 0.0

    def step(self, dt: float) -> None:
        drive, slip = self.config.drive, self.config.slip
        tau, acc, dec = drive.motor_time_constant, drive.max_acceleration, drive.max_deceleration
        if drive.kind == "holonomic":
            self.vx = _approach(self.vx, self.cmd_vx, tau, acc, dec, dt)
            self.vy = _approach(self.vy, self.cmd_vy, tau, acc, dec, dt)
            yaw_acc = 2 * acc / drive.track_width
            self.omega_actual = _approach(
                self.omega_actual, self.cmd_omega, tau, yaw_acc, 2 * dec / drive.track_width, dt
            )
            # the wheels turn for the twist; the ground answers as under tracks
            half = self.omega_actual * drive.track_width / 2
            left, right, strafe = self.vx - half, self.vx + half, self.vy
        else:
            self.v_left = _approach(self.v_left, self.cmd_left, tau, acc, dec, dt)
            self.v_right = _approach(self.v_right, self.cmd_right, tau, acc, dec, dt)
            left, right, strafe = self.v_left, self.v_right, 0.0
        self.left_distance += left * dt
        self.right_distance += right * dt
        spread, longitudinal = (slip.icr_spread, slip.longitudinal) if slip.enabled else (1, 0)
        vx = 0.5 * (left + right) * (1.0 - longitudinal)
        omega = (right - left) / (spread * drive.track_width)
        vy = strafe * (1.0 - longitudinal)
        if slip.enabled and slip.noise > 0:
            noise = 1.0 + slip.noise * float(self.rng.standard_normal())
            vx *= noise
            vy *= noise
            omega *= noise
        pt = self.config.pan_tilt
        if pt is not None and (self.pan_rate != 0.0 or self.tilt_rate != 0.0):
            pan = self.pan + self.pan_rate * dt
            if pt.pan_limits_deg is None:
                pan = wrap_angle(pan)
            else:
                lo, hi = (math.radians(v) for v in pt.pan_limits_deg)
                pan = max(lo, min(hi, pan))
            lo_t, hi_t = (math.radians(v) for v in pt.tilt_limits_deg)
            self.pan = pan
            self.tilt = max(lo_t, min(hi_t, self.tilt + self.tilt_rate * dt))
        self._move(vx, vy, omega, dt)

    def _move(self, vx: float, vy: float, omega: float, dt: float) -> None:
        travel = (math.hypot(vx, vy) + abs(omega) * self.reach) * dt
        substeps = max(1, math.ceil(travel / (0.5 * self.world.resolution)))
        h = dt / substeps
        front = rear = blocked = False
        ox, oy = self.world.origin
        for _ in range(substeps):
            mid = self.theta + 0.5 * omega * h
            c, s = math.cos(mid), math.sin(mid)
            nx = self.x + (c * vx - s * vy) * h
            ny = self.y + (s * vx + c * vy) * h
            nth = self.theta + omega * h
            hits = footprint_hits(
                self.grid, ox, oy, self.world.resolution, nx, ny, nth, self.points
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
            self.v_left = self.v_right = self.vx = self.vy = self.omega_actual = 0.0
            self.v, self.omega = 0.0, 0.0
        else:
            self.v, self.omega = vx, omega
        self.bumper_front, self.bumper_rear = front, rear


def _holonomic() -> RobotConfig:
    robot = load_robot("pioneer3dx")
    return robot.model_copy(update={"drive": robot.drive.model_copy(update={"kind": "holonomic"})})


def _wrapping_pan() -> RobotConfig:
    robot = load_robot("foi-ugv")
    assert robot.pan_tilt is not None
    pt = robot.pan_tilt.model_copy(update={"pan_limits_deg": None})
    return robot.model_copy(update={"pan_tilt": pt})


ROBOTS = {
    "pioneer3dx": lambda: load_robot("pioneer3dx"),
    "foi-ugv": lambda: load_robot("foi-ugv"),  # tracked, slip with noise
    "holonomic": _holonomic,
    "slip-ring pan": _wrapping_pan,
}


def _room(size: float = 4.0) -> World:
    """A walled square room with a pillar: any drive of a few metres meets a wall."""
    res = 0.05
    n = round(size / res)
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    grid[n // 2 - 3 : n // 2 + 3, n // 4 : n // 4 + 6] = True
    return World("room", grid, res, (0.0, 0.0))


def _free_pose(world: World, robot: RobotConfig, rng: np.random.Generator) -> Vehicle:
    x0, x1, y0, y1 = world.extent
    while True:
        pose = (rng.uniform(x0, x1), rng.uniform(y0, y1), rng.uniform(-3, 3))
        try:
            return Vehicle(robot, world, np.random.default_rng(0), pose)
        except ValueError:
            continue


@pytest.mark.parametrize("name", sorted(ROBOTS))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_compiled_steps_agree_with_python_steps(name: str, seed: int) -> None:
    robot, lab = ROBOTS[name](), _room()
    rng = np.random.default_rng(seed)
    compiled = _free_pose(lab, robot, rng)
    compiled.rng = np.random.default_rng(seed)
    reference = ReferenceVehicle(compiled, np.random.default_rng(seed))
    vmax = robot.drive.max_wheel_speed
    contacts = 0
    direction = 1.0 if seed % 2 else -1.0
    for block in range(100):  # 10 s in 0.1 s blocks, fresh commands each block
        # mostly straight at speed, so that walls are met
        speed = direction * rng.uniform(0.5, 1.0) * vmax
        left, right = speed * rng.uniform(0.8, 1.0, 2)
        pan_rate, tilt_rate = rng.uniform(-2, 2, 2)
        reference.command(left, right, pan_rate, tilt_rate)
        if robot.drive.kind == "holonomic":
            compiled.command_twist((left + right) / 2, 0.1 * left, 0.5 * right)
        else:
            compiled.command_wheels(left, right)
        compiled.command_pan_tilt(pan_rate, tilt_rate)
        if block % 2:
            compiled.step(0.005, 20)  # the whole block in one call
        else:
            for _ in range(20):
                compiled.step(0.005)
        for _ in range(20):
            reference.step(0.005)
        for field in ("x", "y", "theta", "v", "omega", "pan", "tilt", "rotation"):
            assert getattr(compiled, field) == pytest.approx(getattr(reference, field), abs=1e-9), (
                field
            )
        assert compiled.left_distance == pytest.approx(reference.left_distance, abs=1e-9)
        assert compiled.right_distance == pytest.approx(reference.right_distance, abs=1e-9)
        assert (compiled.bumper_front, compiled.bumper_rear) == (
            reference.bumper_front,
            reference.bumper_rear,
        )
        assert compiled.contacts == reference.contacts
        contacts = reference.contacts
    if robot.drive.kind != "holonomic":
        assert contacts > 0  # the drive met a wall: the collision path was compared too


def test_simulator_ground_truth_after_ten_seconds_is_seeded() -> None:
    """Two simulators from one seed end at the same pose; the slip noise makes seeds differ."""
    robot, lab = load_robot("foi-ugv"), load_world("lab")

    def final(seed: int) -> tuple[float, float, float]:
        sim = Simulator(robot, lab, seed=seed, pose=(8.0, 8.0, 0.0))
        sim.set_wheel_speeds(0.3, 0.4)
        sim.run_for(10.0)
        truth = sim.ground_truth
        return truth.x, truth.y, truth.theta

    assert final(4) == final(4)
    assert final(4) != final(5)


def test_on_a_lockstep_runtime_sensors_never_split_a_physics_step() -> None:
    """Lasers at 75 Hz fall between 5 ms ticks: they see the last tick, and the vehicle moves
    exactly as one stepped on the fixed grid with the same noise stream."""
    # the FOI UGV with the laser freelook adds (its paper's robot had none)
    robot, lab = with_added_laser(load_robot("foi-ugv")), load_world("lab")
    sim = Simulator(robot, lab, seed=2, pose=(8.0, 8.0, 0.0))
    sim.set_wheel_speeds(0.3, 0.4)
    sim.run_for(2.0)
    vehicle_rng = np.random.default_rng(np.random.SeedSequence(2).spawn(5)[0])
    alone = Vehicle(robot, lab, vehicle_rng, (8.0, 8.0, 0.0))
    alone.command_wheels(0.3, 0.4)
    for _ in range(401):  # ticks at 0, 5 ms, …, 2 s
        alone.step(0.005)
    assert sim.latest_laser is not None
    assert sim.latest_laser.stamp % 0.005 > 1e-6  # the last scan fell between two ticks
    assert sim.vehicle.state() == alone.state()


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.3))
def test_a_footprint_found_clear_by_its_clearance_touches_no_obstacle(
    seed: int, density: float
) -> None:
    """Random walls and poses (near them, at the grid's edge, in the open): where the
    clearance says an outline's reach is clear, no heading of the outline touches an obstacle
    cell or leaves the grid; the open floor is found clear. The poses tried are built, not
    hoped for: some deep in the open floor, some in the cells whose clearance is only just
    enough (where a wrong clearance would show), and random ones anywhere."""
    rng = np.random.default_rng(seed)
    grid = rng.random((40, 50)) < density * rng.random((40, 50))
    grid[10:30, 12:38] = False  # some open floor: x 0.3…1.6 m, y 1.2…2.2 m
    grid[9, 11:39] = True  # with a wall along it, whatever the density
    world = World("random", grid, 0.05, (-0.3, 0.7))
    vehicle = Vehicle(load_robot("pioneer3dx"), world, rng, (0.95, 1.7, 0.0))
    points, reach = vehicle.points, float(np.hypot(*vehicle.points.T).max())
    clearance = clearance_of(grid)
    ox, oy = world.origin
    inset = reach + 2 * 0.05  # the reach, a cell the clearance grows obstacles by, a cell spare
    deep = rng.uniform((0.3 + inset, 1.2 + inset), (1.6 - inset, 2.2 - inset), (40, 2))
    for x, y in deep:
        assert footprint_clear(clearance, ox, oy, 0.05, x, y, reach), (x, y)
    cells = reach / 0.05
    just_enough = np.argwhere((clearance > cells + 0.01) & (clearance < cells + 1.5))
    assert len(just_enough) > 0  # the open floor beside its wall always holds some
    picked = just_enough[rng.choice(len(just_enough), min(60, len(just_enough)), replace=False)]
    within = rng.random((len(picked), 2))  # where in its cell the pose lies
    edge = np.column_stack(
        [ox + (picked[:, 1] + within[:, 0]) * 0.05, oy + (picked[:, 0] + within[:, 1]) * 0.05]
    )
    anywhere = rng.uniform((-0.5, 0.5), (2.4, 2.8), (100, 2))
    checked = 0
    for x, y in np.concatenate([deep, edge, anywhere]):
        if not footprint_clear(clearance, ox, oy, 0.05, x, y, reach):
            continue
        checked += 1
        for theta in np.linspace(-math.pi, math.pi, 13):
            assert footprint_hits(grid, ox, oy, 0.05, x, y, theta, points) == 0, (x, y, theta)
    assert checked >= len(deep)
    assert footprint_clear(clearance, ox, oy, 0.05, 0.95, 1.7, reach)  # the open floor's centre
    for odd in (math.nan, math.inf, -1e300):
        assert not footprint_clear(clearance, ox, oy, 0.05, odd, 1.7, reach)
