"""Sensors: laser against analytic distances, sonar, gyro statistics, encoder quantization."""

from __future__ import annotations

import hashlib
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import GyroConfig, LaserConfig, SonarConfig
from freelook.maps import (
    World,
    cast_fan,
    cast_rays,
    cast_rays_reference,
    clearance_of,
    load_world,
)
from freelook.sim.sensors import (
    Laser,
    RateGyro,
    SonarRing,
    WheelEncoders,
)

RES = 0.02


def rectangular_room(width: float = 6.0, height: float = 4.0) -> World:
    """Walls are the cells outside [0, width] × [0, height] (one cell thick)."""
    cols, rows = round(width / RES) + 2, round(height / RES) + 2
    grid = np.zeros((rows, cols), dtype=bool)
    grid[0, :] = grid[-1, :] = True
    grid[:, 0] = grid[:, -1] = True
    return World("room", grid, RES, (-RES, -RES))


def analytic(x: float, y: float, angle: float, width: float, height: float) -> float:
    c, s = math.cos(angle), math.sin(angle)
    ts = []
    if c > 1e-12:
        ts.append((width - x) / c)
    if c < -1e-12:
        ts.append(-x / c)
    if s > 1e-12:
        ts.append((height - y) / s)
    if s < -1e-12:
        ts.append(-y / s)
    return min(ts)


@pytest.mark.parametrize("noise", [0.0, 0.01])
def test_laser_matches_analytic_distances(noise: float) -> None:
    room = rectangular_room()
    cfg = LaserConfig(mount_forward=0.2, noise_std=noise, range_max=30.0)
    laser = Laser(cfg, room, np.random.default_rng(3))
    rng = np.random.default_rng(4)
    for _ in range(20):
        x, y, th = rng.uniform(1, 5), rng.uniform(1, 3), rng.uniform(-math.pi, math.pi)
        ranges = laser.scan(x, y, th)
        lx, ly = x + 0.2 * math.cos(th), y + 0.2 * math.sin(th)
        expected = np.array([analytic(lx, ly, th + a, 6.0, 4.0) for a in laser.angles])
        tolerance = 3 * noise if noise else RES * math.sqrt(2)
        tolerance += 1e-9 if noise == 0 else RES * math.sqrt(2)
        assert np.max(np.abs(ranges - expected)) <= tolerance


def test_compiled_scan_equals_python_reference_within_a_cell() -> None:
    lab = load_world("lab")
    angles = np.linspace(-math.pi, math.pi, 361)
    rng = np.random.default_rng(1)
    for _ in range(10):
        while True:
            x, y = rng.uniform(0.5, 17.5), rng.uniform(0.5, 13)
            if lab.is_free(x, y):
                break
        fast = cast_rays(lab.obstacles(), lab.origin, lab.resolution, x, y, angles, 30.0)
        slow = cast_rays_reference(lab.obstacles(), lab.origin, lab.resolution, x, y, angles, 30.0)
        assert np.max(np.abs(fast - slow)) <= lab.resolution


def test_sonar_sees_the_nearest_wall_in_its_cone() -> None:
    room = rectangular_room()
    sonar = SonarRing(SonarConfig(noise_std=0.0), room, np.random.default_rng(0))
    readings = sonar.read(3.0, 2.0, 0.0)
    assert readings.shape == (16,)
    front = int(np.argmin(np.abs(sonar.bearings[:8])))  # a front transducer near 0°
    expected = 3.0 - sonar.config.ring_radius * math.cos(sonar.bearings[front])
    assert readings[front] == pytest.approx(expected, abs=0.1)
    assert np.all(readings <= 5.0)


def test_gyro_bias_and_noise_are_plausible() -> None:
    cfg = GyroConfig()
    biases = []
    for seed in range(200):
        gyro = RateGyro(cfg, np.random.default_rng(seed))
        biases.append(gyro.bias)
        assert abs(gyro.bias) <= math.radians(cfg.turn_on_bias_deg_s)
    assert np.std(biases) > math.radians(0.1)  # spread over the ±0.5 °/s range
    gyro = RateGyro(cfg, np.random.default_rng(7))
    dt = 0.01
    samples = np.array([gyro.measure(0.0, dt) for _ in range(20_000)])
    arw = math.radians(cfg.angle_random_walk_deg_sqrt_h) / 60.0  # rad/√s
    assert np.std(samples) == pytest.approx(arw / math.sqrt(dt), rel=0.05)
    assert np.mean(samples) == pytest.approx(gyro.bias, abs=5 * arw / math.sqrt(dt * 20_000) + 1e-4)
    scaled = RateGyro(cfg, np.random.default_rng(7))
    rate = scaled.measure(1.0, dt) - scaled.bias
    assert abs(rate - 1.0) < 0.004 + 5 * arw / math.sqrt(dt)


@given(st.floats(-100, 100), st.floats(-100, 100))
def test_encoders_quantize(left: float, right: float) -> None:
    enc = WheelEncoders(33_500, 0.1953)
    cl, cr = enc.update(left, right)
    assert abs(cl * enc.metres_per_count - left) < enc.metres_per_count
    assert abs(cr * enc.metres_per_count - right) < enc.metres_per_count
    assert enc.metres_per_count == pytest.approx(math.pi * 0.1953 / 33_500)


def test_noise_is_seeded() -> None:
    lab = load_world("lab")

    def digest(seed: int) -> str:
        laser = Laser(LaserConfig(), lab, np.random.default_rng(seed))
        return hashlib.sha256(laser.scan(3.0, 3.0, 0.2).tobytes()).hexdigest()

    assert digest(5) == digest(5)
    assert digest(5) != digest(6)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.05), st.integers(1, 40))
def test_laser_scans_are_the_numpy_form_to_the_bit(seed: int, noise: float, scans: int) -> None:
    """The laser's fan cast from the mount, each return plus the next normal of the laser's
    stream (drawn a scan's returns at a time), clipped: the compiled scan, its normals drawn
    ahead in blocks (40 scans run past the first block), its cast kept while the robot stands
    (each pose is held for one to three scans)."""
    lab = load_world("lab")
    cfg = LaserConfig(mount_forward=0.15, mount_left=0.02, noise_std=noise, range_max=8.0)
    laser = Laser(cfg, lab, np.random.default_rng(seed))
    stream = np.random.default_rng(seed)
    poses = np.random.default_rng(seed + 1)
    clearance = clearance_of(lab.obstacles())
    units = np.column_stack((np.cos(laser.angles), np.sin(laser.angles)))
    held = 0
    for _ in range(scans):
        if held == 0:
            x, y = poses.uniform(1, 17), poses.uniform(1, 13)
            th = poses.uniform(-math.pi, math.pi)
            held = int(poses.integers(1, 4))
        held -= 1
        c, s = math.cos(th), math.sin(th)
        lx, ly = x + c * 0.15 - s * 0.02, y + s * 0.15 + c * 0.02
        ranges = np.empty(len(units))
        cast_fan(clearance, (*lab.origin, lab.resolution), (lx, ly, th), units, 8.0, ranges)
        if noise > 0:
            hits = ranges < 8.0
            ranges[hits] += stream.normal(0.0, noise, int(hits.sum()))
        expected = np.clip(ranges, cfg.range_min, 8.0)
        np.testing.assert_array_equal(laser.scan(x, y, th), expected)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.floats(0.0, 0.05), st.integers(1, 300))
def test_sonar_readings_are_the_numpy_form_to_the_bit(seed: int, noise: float, reads: int) -> None:
    """Each transducer's nearest echo of five rays over its cone from its mount, plus the next
    normal of the ring's stream when something echoes, clipped: the compiled read, its normals
    drawn ahead in blocks (300 reads of 16 run past the first), its cast kept while the robot
    stands (each pose is held for one to three reads)."""
    lab = load_world("lab")
    cfg = SonarConfig(noise_std=noise, range_max=5.0)
    sonar = SonarRing(cfg, lab, np.random.default_rng(seed))
    stream = np.random.default_rng(seed)
    poses = np.random.default_rng(seed + 1)
    half = math.radians(cfg.cone_deg) / 2
    offsets = np.linspace(-half, half, SonarRing.RAYS_PER_CONE)
    held = 0
    for _ in range(reads):
        if held == 0:
            x, y = poses.uniform(1, 17), poses.uniform(1, 13)
            th = poses.uniform(-math.pi, math.pi)
            held = int(poses.integers(1, 4))
        held -= 1
        c, s = math.cos(th), math.sin(th)
        sx = x + c * sonar.mount_x - s * sonar.mount_y
        sy = y + s * sonar.mount_x + c * sonar.mount_y
        expected = np.array(
            [
                cast_rays(
                    lab.obstacles(), lab.origin, lab.resolution, px, py, th + b + offsets, 5.0
                ).min()
                for px, py, b in zip(sx, sy, sonar.bearings, strict=True)
            ]
        )
        if noise > 0:
            echoes = expected < 5.0
            expected[echoes] += stream.normal(0.0, noise, int(echoes.sum()))
        np.testing.assert_array_equal(sonar.read(x, y, th), np.clip(expected, 0.0, 5.0))


def _doored_lab() -> World:
    """The lab with a door in its outer wall: its rooms are no longer walled in."""
    lab = load_world("lab")
    grid = lab.obstacles().copy()
    rows = grid.shape[0]
    grid[rows // 2, :] = False  # a corridor right through, to both edges
    return World("doored lab", grid, lab.resolution, lab.origin)


@pytest.mark.parametrize("world", [load_world("lab"), _doored_lab()], ids=["lab", "doored"])
@pytest.mark.parametrize("noise", [0.0, 0.01])
def test_a_scan_passed_over_draws_the_noise_its_cast_would(world: World, noise: float) -> None:
    """Scans read one in three: each read scan is the one scanning every time gives, whether
    the unread ones were passed over (walled in) or had to be cast (a door to the edge)."""
    cfg = LaserConfig(mount_forward=0.17, noise_std=noise, range_max=30.0)
    every, some = (Laser(cfg, world, np.random.default_rng(11)) for _ in range(2))
    poses = np.random.default_rng(12)
    passed_over = 0
    for k in range(60):
        x, y, th = poses.uniform(1, 17), poses.uniform(1, 13), poses.uniform(-math.pi, math.pi)
        expected = every.scan(x, y, th)
        if k % 3 == 2:
            np.testing.assert_array_equal(some.scan(x, y, th), expected)
        elif some.skip(x, y, th):
            passed_over += 1
        else:
            some.scan(x, y, th)
    walled_in = world.name == "lab"
    assert (passed_over == 40) if walled_in else (passed_over < 40)


def test_a_scan_is_passed_over_only_when_every_beam_surely_returns() -> None:
    lab = load_world("lab")
    laser = Laser(LaserConfig(range_max=30.0), lab, np.random.default_rng(1))
    assert laser.skip(3.0, 3.0, 0.2)
    for x, y in [(math.nan, 3.0), (3.0, math.inf), (-50.0, 3.0), (3.0, 1e300)]:
        assert not laser.skip(x, y, 0.2)  # off the grid, or not a number: no return at all
    assert not laser.skip(3.0, 3.0, math.nan)
    # a laser that cannot reach across the grid may miss from anywhere
    short = Laser(LaserConfig(range_max=8.0), lab, np.random.default_rng(1))
    assert not short.skip(3.0, 3.0, 0.2)
