"""The robot program's acceptance scenarios: a link cut stops it in time, Free Look needs a pan."""

from __future__ import annotations

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import FreeLookCommand, Mode, SafetyFlags, VelocityCommand
from freelook.maps import load_world


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
