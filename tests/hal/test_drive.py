"""The one drive command and the one ratio-keeping scale of the HAL."""

from __future__ import annotations

import math

import pytest

from freelook.config import load_robot
from freelook.hal import DriveCommand, scale_within
from freelook.hardware.sim import simulated_hardware
from freelook.kinematics import tank_control
from freelook.maps import load_world
from freelook.sim import Simulator


def test_scale_within_keeps_every_ratio_and_meets_the_tightest_limit() -> None:
    values = (0.9, -2.0, 0.3)
    s = scale_within(values, (0.6, 1.0, None))
    assert s == pytest.approx(0.5)  # |−2.0|·s ≤ 1.0 is the tightest
    scaled = [v * s for v in values]
    assert abs(scaled[0]) <= 0.6
    assert abs(scaled[1]) <= 1.0 + 1e-12
    assert scaled[0] / scaled[2] == pytest.approx(values[0] / values[2])


def test_scale_within_never_raises_and_ignores_zero_and_unlimited_values() -> None:
    assert scale_within((0.1, 0.0), (1.0, 0.0)) == 1.0
    assert scale_within((5.0, 7.0), (None, None)) == 1.0
    assert scale_within((), ()) == 1.0
    with pytest.raises(ValueError, match="shorter"):
        scale_within((1.0, 2.0), (1.0,))


def test_a_twist_command_carries_the_track_speeds_tank_control_gives() -> None:
    d = 0.42
    command = DriveCommand.of_twist(0.3, -0.8, d, vy=0.1)
    wheels = tank_control(0.3, -0.8, d)
    assert (command.v_left, command.v_right) == (wheels.v_left, wheels.v_right)
    assert (command.v, command.omega, command.vy) == (0.3, -0.8, 0.1)
    back = DriveCommand.of_wheels(command.v_left, command.v_right, d)
    assert (back.v, back.omega) == pytest.approx((0.3, -0.8))
    assert back.vy == 0.0


@pytest.mark.parametrize(("kind", "moves_sideways"), [("differential", False), ("holonomic", True)])
def test_the_simulated_base_reads_the_form_it_takes(kind: str, moves_sideways: bool) -> None:
    """A wheeled base reads the track speeds (here ones that go straight, whatever the twist
    says); a holonomic one reads the twist, sideways speed and all."""
    config = load_robot("pioneer3dx")
    config = config.model_copy(update={"drive": config.drive.model_copy(update={"kind": kind})})
    sim = Simulator(config, load_world("square"), seed=1)
    drive = simulated_hardware(sim, camera=False).drive
    assert drive.kind == kind
    start = sim.ground_truth
    for _ in range(50):
        drive.command(DriveCommand(0.2, 1.5, 0.2, 0.2, vy=0.2))
        sim.run_for(0.02)
    end = sim.ground_truth
    c, s = math.cos(start.theta), math.sin(start.theta)
    dx, dy = end.x - start.x, end.y - start.y
    forward, left = c * dx + s * dy, -s * dx + c * dy
    turned = math.remainder(end.theta - start.theta, math.tau)
    if moves_sideways:
        assert turned == pytest.approx(1.5, abs=0.3)
        assert math.hypot(forward, left) == pytest.approx(math.hypot(0.2, 0.2), abs=0.08)
    else:
        assert abs(turned) < 0.02  # the twist's turn is not read
        assert abs(left) < 0.01
        assert forward == pytest.approx(0.2, abs=0.05)
