"""The simulator draws a laser turned on its mount (``[laser] yaw_deg``) where it looks: its fan
centred on the yaw, in the lone simulator and in a fleet, and its HAL bearings with it."""

from __future__ import annotations

import math

import numpy as np
import pytest

from freelook.config import LaserConfig, load_robot
from freelook.maps import load_world
from freelook.sim import Fleet, Simulator
from freelook.sim.sensors import Laser


def test_a_laser_turned_on_its_mount_sees_what_the_robot_turned_round_sees() -> None:
    lab = load_world("lab")
    rng = np.random.default_rng(0)
    ahead = Laser(LaserConfig(noise_std=0.0), lab, rng)
    behind = Laser(LaserConfig(noise_std=0.0, yaw_deg=180.0), lab, rng)
    assert np.allclose(behind.angles, ahead.angles + math.pi)
    x, y, theta = 3.0, 3.0, 0.4
    assert np.allclose(behind.scan(x, y, theta), ahead.scan(x, y, theta + math.pi))


def test_the_simulator_and_a_fleet_report_the_turned_fan_s_bearings() -> None:
    config = load_robot("pioneer3dx")
    assert config.laser is not None
    turned = config.model_copy(update={"laser": config.laser.model_copy(update={"yaw_deg": -90.0})})
    lab = load_world("lab")
    sim = Simulator(turned, lab, seed=1, pose=(3.0, 3.0, 0.0))
    assert sim.laser is not None
    assert math.degrees(sim.laser.angles[0]) == pytest.approx(-180.0)
    assert math.degrees(sim.laser.angles[-1]) == pytest.approx(0.0)
    fleet = Fleet(turned, lab, [(3.0, 3.0, 0.0)], seeds=[1])
    assert np.array_equal(fleet.angles, sim.laser.angles)
    # unturned, the same numbers as ever
    plain = Simulator(config, lab, seed=1, pose=(3.0, 3.0, 0.0))
    assert plain.laser is not None
    assert np.array_equal(plain.laser.angles, np.linspace(-math.pi / 2, math.pi / 2, 181))
