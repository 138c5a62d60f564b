"""A description's sideways skid ([slip] icr_forward, lateral) moves the simulated body in its
turns; unset it is zero, and every shipped robot is simulated as it was."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.config import builtin_robots, load_robot, physical_robot
from freelook.maps import World
from freelook.sim import Simulator
from freelook.sim.vehicle import physics_params


def open_floor(size: float = 20.0) -> World:
    res = 0.05
    n = round(size / res)
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    return World("floor", grid, res, (-size / 2, -size / 2))


def skid_steer(icr_forward: float = 0.0, lateral: float = 0.0) -> Simulator:
    config = load_robot("ros2-diff-base")
    config = config.model_copy(
        update={
            "drive": config.drive.model_copy(update={"kind": "skid_steer"}),
            "slip": config.slip.model_copy(
                update={"icr_spread": 1.5, "icr_forward": icr_forward, "lateral": lateral}
            ),
        }
    )
    return Simulator(config, open_floor(), seed=1, pose=(0.0, 0.0, 0.0))


def turn_quarter(sim: Simulator) -> None:
    """A point turn left until the body has turned 90°."""
    sim.set_wheel_speeds(-0.3, 0.3)
    while sim.vehicle.theta < math.pi / 2 - 0.01:
        sim.run_for(0.01)
    sim.set_wheel_speeds(0.0, 0.0)
    sim.run_for(0.5)


def test_a_point_turn_without_a_described_skid_stays_on_the_spot() -> None:
    sim = skid_steer()
    turn_quarter(sim)
    assert math.hypot(sim.vehicle.x, sim.vehicle.y) < 1e-9


@pytest.mark.parametrize("icr_forward", [0.15, -0.15])
def test_a_point_turn_swings_the_axle_round_an_icr_off_it(icr_forward: float) -> None:
    # the body turns about the ICR icr_forward ahead of the axle: a quarter turn carries the
    # axle's centre along a quarter circle of that radius
    sim = skid_steer(icr_forward=icr_forward)
    turn_quarter(sim)
    theta = sim.vehicle.theta
    expected = (icr_forward * (1 - math.cos(theta)), -icr_forward * math.sin(theta))
    assert (sim.vehicle.x, sim.vehicle.y) == pytest.approx(expected, abs=0.01)
    assert math.hypot(sim.vehicle.x, sim.vehicle.y) > 0.15


def test_a_described_lateral_skid_slides_an_arc_outwards() -> None:
    plain, skidding = skid_steer(), skid_steer(lateral=0.2)
    for sim in (plain, skidding):
        sim.set_wheel_speeds(0.3, 0.6)
        sim.run_for(2.0)
    # turning left, the skid pushes the body to the right of the plain arc: closer to its start
    # line on the inside of the turn is further out, so the skidding body's y falls short
    assert skidding.vehicle.y < plain.vehicle.y - 0.01


@pytest.mark.parametrize("name", builtin_robots())
def test_no_shipped_robot_is_given_a_skid_it_did_not_have(name: str) -> None:
    # the kernel skids only where a lateral or icr_forward is not zero: with none described,
    # a robot without an error model turns on the spot as before, and one with an error model
    # takes that model's (the experiments' rows are unchanged)
    config = load_robot(name)
    outline = np.zeros((1, 2))
    bare = physics_params(config, 1.0, (0.0, 0.0), 0.05, outline)
    assert config.slip.icr_forward == 0.0
    assert config.slip.lateral == 0.0
    assert not bare[23:25].any()
    truth = physical_robot(config, 7)
    if truth is not None:
        drawn = physics_params(config, 1.0, (0.0, 0.0), 0.05, outline, truth)
        assert (drawn[23], drawn[24]) == (truth.lateral, truth.icr_forward)
