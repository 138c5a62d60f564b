"""The M2P2 as Kievit-Kylar had it: a holonomic base on three omni wheels, its motors turning
each wheel for the commanded twist by the nominal geometry, the ground answering through each
wheel's true diameter. An exact base drives its twist; one wheel oversized curves a straight
drive the way the wheel matrix says; wheels that turn without gripping move nothing."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from freelook.config import PhysicalTruth, load_robot, physical_robot
from freelook.kinematics import omni_ground_matrix, omni_wheel_matrix
from freelook.maps import load_world
from freelook.sim.vehicle import Vehicle

START = (5.0, 4.0, 0.0)


def _exact(truth: PhysicalTruth, **changes: float) -> PhysicalTruth:
    """``truth`` with every wheel its nominal size and no slip, then ``changes``."""
    exact = dataclasses.replace(
        truth, left_wheel=1.0, right_wheel=1.0, third_wheel=1.0, track=1.0,
        longitudinal=0.0, slip_noise=0.0,
    )  # fmt: skip
    return dataclasses.replace(exact, **changes)


def _drive(truth: PhysicalTruth, twist: tuple[float, float, float]) -> tuple[float, ...]:
    vehicle = Vehicle(load_robot("m2p2"), load_world("eod"), np.random.default_rng(0), START, truth)
    vehicle.command_twist(*twist)
    vehicle.step(0.01, 300)
    return vehicle.pose()


def test_the_m2p2_s_error_model_puts_it_on_three_omni_wheels_120_degrees_apart() -> None:
    truth = physical_robot(load_robot("m2p2"), 501)
    assert truth is not None
    assert truth.omni_angles is not None
    gaps = np.diff(np.degrees(truth.omni_angles))
    assert gaps == pytest.approx([120.0, 120.0])
    assert truth.third_wheel != 1.0  # a wheel of its own, drawn from the seed
    matrix = omni_wheel_matrix(truth.omni_angles, 0.31)
    assert abs(np.linalg.det(matrix)) > 0.1  # three wheels give the twist back


@pytest.mark.parametrize("twist", [(0.3, 0.0, 0.0), (0.0, 0.3, 0.0), (0.0, 0.0, 0.5)])
def test_a_base_of_exact_wheels_drives_the_twist_it_is_sent(
    twist: tuple[float, float, float],
) -> None:
    truth = physical_robot(load_robot("m2p2"), 501)
    assert truth is not None
    x, y, theta = _drive(_exact(truth), twist)
    # 3 s, the motors' lag and acceleration ramp taken off the commanded distance
    moved = (x - START[0], y - START[1], theta)
    for got, wanted in zip(moved, twist, strict=True):
        if wanted == 0.0:
            assert got == pytest.approx(0.0, abs=1e-9)
        else:
            assert 2.7 * wanted < got < 3.0 * wanted


def test_one_wheel_oversized_curves_a_straight_drive_as_the_wheel_matrix_says() -> None:
    truth = physical_robot(load_robot("m2p2"), 501)
    assert truth is not None
    assert truth.omni_angles is not None
    big = _exact(truth, left_wheel=1.03)  # the front-left wheel, at 60°
    ground = omni_ground_matrix(truth.omni_angles, 0.31, (1.03, 1.0, 1.0))
    _, vy, omega = ground @ np.array([0.3, 0.0, 0.0])
    assert abs(omega) > 1e-3  # the oversized wheel turns the base (to the right, here)
    assert abs(vy) > 1e-3  # and pushes it sideways
    _, y, theta = _drive(big, (0.3, 0.0, 0.0))
    assert math.copysign(1.0, theta) == math.copysign(1.0, omega)
    assert theta == pytest.approx(omega * 2.95, rel=0.1)
    assert abs(y - START[1]) > 1e-3
    # the same error on a straight drive of the exact base: none
    assert _drive(_exact(truth), (0.3, 0.0, 0.0))[2] == pytest.approx(0.0, abs=1e-12)


def test_wheels_that_turn_without_gripping_move_nothing() -> None:
    truth = physical_robot(load_robot("m2p2"), 501)
    assert truth is not None
    frozen = _exact(truth, left_wheel=0.0, right_wheel=0.0, third_wheel=0.0)
    assert _drive(frozen, (0.3, 0.2, 0.4)) == pytest.approx(START, abs=1e-12)
