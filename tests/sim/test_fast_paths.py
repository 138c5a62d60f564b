"""The simulator's fast paths held to the plain forms to the bit: slip noise and gyro normals
drawn ahead in blocks, the vehicle's one-read accessors, the laser's bad returns."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import numpy.typing as npt
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import GyroConfig, LaserConfig, PhysicalTruth, load_error_model, load_robot
from freelook.maps import clearance_of, load_world
from freelook.sim import Simulator
from freelook.sim.sensors import RateGyro, spoil_returns
from freelook.sim.sensors._sensors import OUTLIER_SHORTFALL
from freelook.sim.vehicle import Vehicle
from freelook.sim.vehicle import _physics as ph


def test_a_block_of_normals_is_the_draws_one_at_a_time() -> None:
    """What drawing ahead rests on: one generator's normals in one block are its normals
    drawn singly or a few at a time, in the same order."""
    piecewise = np.random.default_rng(3)
    singles = [float(piecewise.standard_normal()) for _ in range(300)]
    rows = [piecewise.standard_normal((1, k)) for k in (1, 7, 100)]
    block = np.random.default_rng(3).standard_normal(408)
    assert block[:300].tobytes() == np.array(singles).tobytes()
    assert block[300:].tobytes() == np.concatenate(rows, axis=1).tobytes()


@settings(max_examples=25, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.lists(
        st.tuples(st.integers(1, 400), st.floats(-0.6, 0.6), st.floats(-0.6, 0.6)), max_size=12
    ),
)
def test_slip_noise_drawn_ahead_is_a_draw_per_step_call(
    seed: int, calls: list[tuple[int, float, float]]
) -> None:
    """Each call's steps read the next normals of the vehicle's stream, as drawing
    ``(1, steps)`` normals per call did (calls of many steps cross the blocks' ends)."""
    robot, world = load_robot("taros"), load_world("lab")
    vehicle = Vehicle(robot, world, np.random.default_rng(seed), (8.0, 8.0, 0.3))
    assert ph.draws_noise(vehicle.params)
    plain = vehicle.state_array.copy()
    rng = np.random.default_rng(seed)
    for steps, left, right in calls:
        vehicle.command_wheels(left, right)
        plain[0, ph.CMD_LEFT], plain[0, ph.CMD_RIGHT] = vehicle.cmd_left, vehicle.cmd_right
        vehicle.step(0.005, steps)
        noise = rng.standard_normal((1, steps))
        grid = world.obstacles()
        ph.step_vehicles(
            plain, vehicle.params, grid, clearance_of(grid), vehicle.points, noise, steps, 0.005
        )
        assert vehicle.state_array.tobytes() == plain.tobytes()


def test_a_vehicle_not_stepped_leaves_its_generator_alone() -> None:
    """A fleet takes its vehicles' generators for its own draws."""
    rng = np.random.default_rng(5)
    before = rng.bit_generator.state
    Vehicle(load_robot("taros"), load_world("lab"), rng, (8.0, 8.0, 0.0))
    assert rng.bit_generator.state == before


class _PlainGyro:
    """The gyro drawing its two normals per sample as it goes."""

    def __init__(self, config: GyroConfig, rng: np.random.Generator) -> None:
        self.rng = rng
        self.bias = math.radians(rng.uniform(-config.turn_on_bias_deg_s, config.turn_on_bias_deg_s))
        self.scale = 1.0 + rng.uniform(-config.scale_factor_error, config.scale_factor_error)
        self.arw = math.radians(config.angle_random_walk_deg_sqrt_h) / 60.0
        self.bias_walk = math.radians(config.bias_instability_deg_h) / 3600.0 / math.sqrt(3600.0)

    def measure(self, true_rate: float, dt: float) -> float:
        self.bias += self.bias_walk * math.sqrt(dt) * float(self.rng.standard_normal())
        noise = self.arw / math.sqrt(dt) * float(self.rng.standard_normal())
        return self.scale * true_rate + self.bias + noise


@settings(max_examples=40, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.lists(
        st.tuples(st.floats(-3.0, 3.0), st.sampled_from([0.01, 0.02, 0.005, 0.0137])),
        max_size=700,
    ),
)
def test_gyro_samples_are_the_draw_as_you_go_form_to_the_bit(
    seed: int, samples: list[tuple[float, float]]
) -> None:
    cfg = GyroConfig()
    gyro, plain = (
        RateGyro(cfg, np.random.default_rng(seed)),
        _PlainGyro(cfg, np.random.default_rng(seed)),
    )
    assert (gyro.bias, gyro.scale) == (plain.bias, plain.scale)
    for rate, dt in samples:
        assert gyro.measure(rate, dt).hex() == plain.measure(rate, dt).hex()
        assert gyro.bias.hex() == plain.bias.hex()


def test_one_read_accessors_are_the_attributes() -> None:
    sim = Simulator(load_robot("pioneer3dx"), load_world("lab"), seed=2, pose=(8.0, 8.0, 0.4))
    sim.set_wheel_speeds(0.3, 0.1)
    sim.set_pan_tilt_rates(0.2, -0.1)
    sim.run_for(0.7)
    v = sim.vehicle
    row = v.state_array[0]
    assert (
        v.pose()
        == (v.x, v.y, v.theta)
        == (float(row[ph.X]), float(row[ph.Y]), float(row[ph.THETA]))
    )
    assert v.wheel_distances() == (v.left_distance, v.right_distance)
    assert v.wheel_distances() == (float(row[ph.LEFT_DISTANCE]), float(row[ph.RIGHT_DISTANCE]))
    assert v.pan_tilt() == (v.pan, v.tilt) != (0.0, 0.0)
    assert v.bumpers() == (v.bumper_front, v.bumper_rear)
    assert all(type(value) is float for value in (*v.pose(), *v.wheel_distances(), v.rotation))
    v.x = 7.5
    assert row[ph.X] == 7.5
    assert v.pose()[0] == 7.5


def _plain_spoil(
    ranges: npt.NDArray[np.float64],
    truth: PhysicalTruth,
    config: LaserConfig,
    rng: np.random.Generator,
) -> None:
    """The error model's bad returns as numpy's masks put them."""
    u = rng.random((2, ranges.shape[0]))
    outliers = u[0] < truth.outlier_rate
    short = ranges[outliers] * (1.0 - OUTLIER_SHORTFALL * u[1][outliers])
    ranges[outliers] = np.maximum(short, config.range_min)
    dropouts = (u[0] >= truth.outlier_rate) & (u[0] < truth.outlier_rate + truth.dropout_rate)
    ranges[dropouts] = config.range_max


@settings(max_examples=60, deadline=None)
@given(
    st.integers(0, 2**32 - 1),
    st.lists(st.floats(0.0, 40.0), min_size=1, max_size=200),
    st.floats(0.0, 0.5),
    st.floats(0.0, 0.5),
    st.floats(0.0, 0.5),
)
def test_bad_returns_are_numpys_masks_to_the_bit(
    seed: int, ranges: list[float], outliers: float, dropouts: float, range_min: float
) -> None:
    """The compiled pass over a scan's bad returns reads the same uniforms and writes what
    numpy's masks did, beam for beam."""
    truth = dataclasses.replace(
        load_error_model("pioneer3dx").draw(seed % 1000),
        outlier_rate=outliers,
        dropout_rate=dropouts,
    )
    laser = LaserConfig(range_min=range_min)
    ours, plain = np.array(ranges), np.array(ranges)
    rng, plain_rng = np.random.default_rng(seed), np.random.default_rng(seed)
    for _ in range(3):
        spoil_returns(ours, truth, laser, rng)
        _plain_spoil(plain, truth, laser, plain_rng)
        assert ours.tobytes() == plain.tobytes()
    assert rng.bit_generator.state == plain_rng.bit_generator.state
