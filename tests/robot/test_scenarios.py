"""The robot program's acceptance scenarios: a link cut stops it in time, Free Look needs a pan."""

from __future__ import annotations

import math

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
    assert robot.core.control.last_output.flags & SafetyFlags.WATCHDOG
    assert any(e.kind == "watchdog" for e in robot.core.log.events)
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
    assert robot.core.modes.mode != Mode.FREE_LOOK
    assert "cannot pan" in robot.core.log.rejections[-1]
    assert robot.sim.ground_truth.v == 0.0


def test_free_look_holds_the_camera_in_the_map_frame_not_on_the_gyro_filters_heading() -> None:
    # the heading filter slipping a degree off (its gyro scale learned against tracks that
    # skid) must not turn a camera the laser keeps on the map
    world = load_world("square")
    pose = (world.start[0] - 1.0, world.start[1] - 1.0, 0.0)
    robot = SimulatedRobot(load_robot("foi-ugv"), world, seed=5, pose=pose)
    robot.run_for(1.0)
    period = robot.config.link.operator_tx_spacing
    hold = FreeLookCommand(0.0, 0.0, 0.0)
    for _ in range(round(1.0 / period)):
        robot.send(hold)
        robot.run_for(period)
    camera = robot.sim.vehicle.theta + robot.sim.vehicle.pan
    heading = robot.core.estimator.heading
    assert heading is not None
    heading.x[0] += math.radians(1.0)
    for _ in range(round(2.0 / period)):
        robot.send(hold)
        robot.run_for(period)
    turned = robot.sim.vehicle.theta + robot.sim.vehicle.pan - camera
    assert abs(math.degrees(turned)) < 0.1
