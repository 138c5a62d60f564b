"""Vehicle physics: odometry vs ground truth, slip, collisions, motor lag, pan-tilt, determinism."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.maps import World, load_world
from freelook.sim import Simulator
from freelook.sim.vehicle import Vehicle, perimeter_points


def open_floor(size: float = 60.0) -> World:
    res = 0.05
    n = round(size / res)
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    return World("floor", grid, res, (-size / 2, -size / 2))


def dead_reckon(counts: list[tuple[int, int]], metres_per_count: float, d: float) -> np.ndarray:
    x = y = th = 0.0
    prev = counts[0]
    for left, right in counts[1:]:
        dl = (left - prev[0]) * metres_per_count
        dr = (right - prev[1]) * metres_per_count
        prev = (left, right)
        ds, dth = (dl + dr) / 2, (dr - dl) / d
        x += ds * math.cos(th + dth / 2)
        y += ds * math.sin(th + dth / 2)
        th += dth
    return np.array([x, y, th])


def test_odometry_matches_ground_truth_without_slip() -> None:
    robot = load_robot("pioneer3dx").model_copy(
        update={"slip": load_robot("pioneer3dx").slip.model_copy(update={"enabled": False})}
    )
    sim = Simulator(robot, open_floor(), seed=1, pose=(0.0, 0.0, 0.0))
    counts = [(0, 0)]
    sim.set_wheel_speeds(0.8, 0.9)  # a 20 m drive on a wide arc
    dt = 0.01
    steps = 0
    while sim.vehicle.left_distance + sim.vehicle.right_distance < 40.0:
        sim.run_for(dt)
        counts.append(sim.latest_encoders[1:] if sim.latest_encoders else (0, 0))  # type: ignore[arg-type]
        steps += 1
    truth = sim.ground_truth
    est = dead_reckon(counts, sim.encoders.metres_per_count, robot.drive.track_width)
    # one count of heading quantization (2 counts / d) over the 20 m path bounds the error
    bound = 20.0 * 2 * sim.encoders.metres_per_count / robot.drive.track_width * 2.5
    assert math.hypot(est[0] - truth.x, est[1] - truth.y) < bound
    assert abs(math.remainder(est[2] - truth.theta, 2 * math.pi)) < 1e-3
    assert not truth.bumper_front


def test_slip_shows_as_heading_drift_while_the_gyro_sees_the_truth() -> None:
    robot = load_robot("foi-ugv")
    sim = Simulator(robot, open_floor(), seed=3, pose=(0.0, 0.0, 0.0))
    sim.set_wheel_speeds(-0.3, 0.3)
    counts = [(0, 0)]
    gyro_angle = 0.0
    dt = 0.01
    while True:
        sim.run_for(dt)
        counts.append(sim.latest_encoders[1:])  # type: ignore[index]
        gyro_angle += sim.latest_gyro[1] * dt  # type: ignore[index]
        est = dead_reckon(counts[-2:], sim.encoders.metres_per_count, robot.drive.track_width)
        if sum(1 for _ in counts) and sim.vehicle.rotation >= 2 * math.pi:
            break
    encoder_heading = dead_reckon(counts, sim.encoders.metres_per_count, robot.drive.track_width)[2]
    true_rotation = sim.vehicle.rotation
    drift_deg = math.degrees(encoder_heading - true_rotation)
    assert 2.0 < drift_deg < 6.0  # the encoders over-report the turn by about one percent
    assert abs(gyro_angle - true_rotation) < math.radians(2.0)  # gyro: truth + bias + noise
    del est


def test_no_tunnelling_and_every_contact_bumps() -> None:
    lab = load_world("lab")
    robot = load_robot("pioneer3dx")
    rng = np.random.default_rng(11)
    fp = robot.footprint
    fine = np.vstack(
        [
            perimeter_points(fp.length * f, fp.width * f, fp.center_forward, lab.resolution / 5)
            for f in (1.0, 0.75, 0.5, 0.25)
        ]
    )
    grid = lab.obstacles()
    trials = contacts = 0
    while trials < 1000:
        x, y, th = rng.uniform(0.5, 17.5), rng.uniform(0.5, 13.0), rng.uniform(-math.pi, math.pi)
        try:
            vehicle = Vehicle(robot, lab, np.random.default_rng(trials), (x, y, th))
        except ValueError:
            continue  # start pose inside an obstacle
        trials += 1
        mode = trials % 3
        vmax = robot.drive.max_wheel_speed
        left, right = ((vmax, vmax), (-vmax, -vmax), (vmax, vmax * 0.3))[mode]
        vehicle.command_wheels(left, right)
        bumped = False
        for _ in range(400):  # 2 s at 5 ms
            vehicle.step(0.005)
            bumped |= vehicle.bumper_front or vehicle.bumper_rear
            c, s = math.cos(vehicle.theta), math.sin(vehicle.theta)
            px = vehicle.x + c * fine[:, 0] - s * fine[:, 1]
            py = vehicle.y + s * fine[:, 0] + c * fine[:, 1]
            i = np.floor((py - lab.origin[1]) / lab.resolution).astype(int)
            j = np.floor((px - lab.origin[0]) / lab.resolution).astype(int)
            assert not grid[i, j].any(), f"trial {trials}: footprint overlaps an obstacle"
        if vehicle.contacts:
            contacts += 1
            assert bumped
    assert contacts > 200  # the trials did hit walls


def test_motor_lag_and_acceleration_limit() -> None:
    robot = load_robot("pioneer3dx")
    vehicle = Vehicle(robot, open_floor(), np.random.default_rng(0), (0.0, 0.0, 0.0))
    vehicle.command_wheels(1.0, 1.0)
    vehicle.step(0.1)
    assert 0.0 < vehicle.v_left <= robot.drive.max_acceleration * 0.1 + 1e-12
    for _ in range(200):
        vehicle.step(0.01)
    assert vehicle.v_left == pytest.approx(1.0, abs=1e-3)
    vehicle.command_wheels(0.0, 0.0)
    vehicle.step(0.1)
    assert vehicle.v_left >= 1.0 - robot.drive.max_deceleration * 0.1 - 1e-9


def test_pan_rate_and_mechanical_limits() -> None:
    p3 = load_robot("pioneer3dx")
    vehicle = Vehicle(p3, open_floor(), np.random.default_rng(0), (0.0, 0.0, 0.0))
    vehicle.command_pan_tilt(10.0, 0.0)  # clamped to 100 °/s
    for _ in range(100):
        vehicle.step(0.005)
    assert vehicle.pan == pytest.approx(math.radians(50), abs=1e-9)
    for _ in range(1000):
        vehicle.step(0.005)
    assert vehicle.pan == pytest.approx(math.radians(100))  # mechanical limit
    foi = load_robot("foi-ugv")  # slip-ring pan: unlimited, wrapped
    vehicle = Vehicle(foi, open_floor(), np.random.default_rng(0), (0.0, 0.0, 0.0))
    vehicle.command_pan_tilt(math.radians(180), 0.0)
    for _ in range(300):
        vehicle.step(0.005)
    assert vehicle.pan == pytest.approx(math.radians(270 - 360), abs=1e-9)


def test_holonomic_base_moves_sideways() -> None:
    robot = load_robot("pioneer3dx")
    holo = robot.model_copy(update={"drive": robot.drive.model_copy(update={"kind": "holonomic"})})
    vehicle = Vehicle(holo, open_floor(), np.random.default_rng(0), (0.0, 0.0, 0.0))
    vehicle.command_twist(0.0, 0.5, 0.0)
    for _ in range(400):
        vehicle.step(0.005)
    assert vehicle.y > 0.8
    assert abs(vehicle.x) < 1e-9
    assert vehicle.theta == 0.0


def _run_digest(seed: int) -> str:
    sim = Simulator(load_robot("foi-ugv"), load_world("lab"), seed=seed)
    digest = hashlib.sha256()
    sim.set_wheel_speeds(0.4, 0.5)
    for _ in range(100):
        sim.run_for(0.02)
        truth = sim.ground_truth
        digest.update(np.array([truth.x, truth.y, truth.theta]).tobytes())
        if sim.latest_laser:
            digest.update(sim.latest_laser.ranges.tobytes())
        if sim.latest_gyro:
            digest.update(np.array(sim.latest_gyro).tobytes())
    return digest.hexdigest()


def test_same_seed_same_run_other_seed_differs() -> None:
    assert _run_digest(42) == _run_digest(42)
    assert _run_digest(42) != _run_digest(43)
