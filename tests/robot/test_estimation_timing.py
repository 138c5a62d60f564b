"""The robot's heading survives a stalled program: no rotation counted twice or lost."""

from __future__ import annotations

import asyncio
import math
import time

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import VelocityCommand
from freelook.maps import load_world
from freelook.runtime import RealtimeRuntime


def test_a_stall_with_the_world_frozen_does_not_add_rotation() -> None:
    # on a loaded machine the physics and the control cycle can both miss their turns while
    # the gyro keeps sampling a robot that does not move; the next control cycle must count
    # the rotation the gyro saw, not its newest rate held over the whole gap
    config = load_robot("pioneer3dx")
    robot = SimulatedRobot(
        config, load_world("square"), seed=3, pose=(7.0, 7.0, 0.0), use_localization=False
    )
    for _ in range(40):
        robot.send(VelocityCommand(0.0, 0.5))
        robot.run_for(0.025)
    runtime = robot.runtime
    odometry_before, truth_before = robot.core.estimator.odometry.theta, robot.sim.vehicle.rotation
    period = config.link.control_period
    runtime.remove("sim.physics")
    runtime.remove("robot.control")
    robot.run_for(0.3)
    runtime.add_periodic("sim.physics", robot.sim.physics_period, robot.sim.physics)
    runtime.add_periodic("robot.control", period, robot.core.control.step, phase=period)
    for _ in range(20):
        robot.send(VelocityCommand(0.0, 0.5))
        robot.run_for(0.025)
    turned_odometry = robot.core.estimator.odometry.theta - odometry_before
    turned_truth = robot.sim.vehicle.rotation - truth_before
    assert turned_truth > 0.2
    assert abs(math.remainder(turned_odometry - turned_truth, math.tau)) < math.radians(0.5)


def test_a_robot_standing_on_a_stalling_real_time_loop_keeps_its_heading() -> None:
    # as ``freelook sim`` runs it: the real-time runtime, localization on its worker thread; the
    # event loop stalls now and then (a busy machine, a collection, a kernel compiled late);
    # a robot whose tracks stand still must not turn in its own odometry
    config, world = load_robot("taros"), load_world("eod")
    runtime = RealtimeRuntime()
    robot = SimulatedRobot(config, world, seed=0, runtime=runtime, background_localization=True)
    stalls = [0.02, 0.6, 0.05, 1.2, 0.3]

    def stall(now: float) -> None:
        if stalls:
            time.sleep(stalls.pop(0))

    runtime.add_periodic("stall", 0.5, stall, phase=0.25)
    start = robot.core.estimator.odometry.pose
    headings: list[float] = []

    async def watch() -> None:
        for _ in range(16):
            await asyncio.sleep(0.25)  # the heading looked at every quarter second, 4 s long
            headings.append(robot.core.estimator.odometry.theta)
        runtime.stop()

    async def run() -> None:
        await asyncio.gather(runtime.run(), watch())

    try:
        asyncio.run(run())
    finally:
        robot.close()
    assert not stalls  # every stall happened
    x, y, _ = robot.core.estimator.odometry.pose
    assert (x, y) == start[:2]
    drift = max(abs(math.remainder(h - start[2], math.tau)) for h in headings)
    assert drift < 5e-4, headings
