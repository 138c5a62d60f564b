"""The robot program's acceptance scenarios, in reduced form (the full runs are experiments)."""

from __future__ import annotations

import pytest

from freelook.config import load_robot
from freelook.experiments import _scenarios as sc
from freelook.hardware.sim import SimulatedRobot
from freelook.link import FreeLookCommand, Mode, SafetyFlags, VelocityCommand
from freelook.maps import load_world


def test_square_laps_camera_drift_within_0_6_degrees() -> None:
    drifts = sc.square_laps_trial(seed=3, clockwise=True, laps=5)
    assert abs(drifts[-1]) <= 0.6
    without = sc.square_laps_trial(seed=3, clockwise=True, laps=5, use_localization=False)
    assert abs(without[-1]) > abs(drifts[-1])  # laser localization is what keeps it small


def test_forward_translation_from_a_turned_start_stays_on_line() -> None:
    assert sc.translation_offset_trial(seed=4) <= 0.02


@pytest.mark.parametrize("cut", [False, True])
def test_reckless_operator_never_collides_and_can_always_get_out(cut: bool) -> None:
    for seed in range(3):
        result = sc.reckless_trial(seed * 2 + int(cut), cut_link=cut)
        assert not result.collided
        assert result.escaped
        if cut:
            assert result.stopped_after_cut is not None


def test_link_cut_stops_within_watchdog_cycle_and_braking() -> None:
    config = load_robot("pioneer3dx")
    robot = SimulatedRobot(
        config, load_world("square"), seed=5, pose=(7.0, 7.0, 0.0), use_localization=False
    )
    for _ in range(60):
        robot.send(VelocityCommand(0.5, 0.0))
        robot.run_for(0.047)
    speed = robot.sim.ground_truth.v
    assert speed > 0.45
    cut = robot.now()
    stopped = None
    while robot.now() - cut < 3.0:
        robot.run_for(0.01)
        if stopped is None and robot.sim.ground_truth.v < 1e-3:
            stopped = robot.now() - cut
    assert robot.core.last_output.flags & SafetyFlags.WATCHDOG
    assert any(e.kind == "watchdog" for e in robot.core.events)
    bound = (
        config.safety.watchdog_timeout
        + config.link.control_period
        + speed / config.drive.max_deceleration
        + 5 * config.drive.motor_time_constant
    )
    assert stopped is not None
    assert stopped <= bound


def test_robot_side_ellipse_at_25_percent_loss() -> None:
    result = sc.ellipse_trial(seed=1, loss=0.25, robot_side=True)
    assert result.completion_time <= 1.02 * result.ideal_time
    assert result.max_error <= 0.010
    assert 20 < result.drop_percent_up < 30


def test_free_look_refused_without_a_pan_unit() -> None:
    config = load_robot("pioneer3dx").model_copy(update={"pan_tilt": None})
    robot = SimulatedRobot(
        config, load_world("square"), pose=(7.0, 7.0, 0.0), use_localization=False
    )
    robot.send(FreeLookCommand(0.3, 0.0, 0.0))
    robot.run_for(0.5)
    assert robot.core.mode != Mode.FREE_LOOK
    assert "cannot pan" in robot.core.rejections[-1]
    assert robot.sim.ground_truth.v == 0.0
