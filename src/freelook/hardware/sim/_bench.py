"""Benchmarks of the robot program: one control cycle, and the whole program in lock-step."""

from __future__ import annotations

import statistics
import time

from freelook.bench import Case, benchmark


@benchmark("robot.control_cycle")
def control_cycle() -> Case:
    """One cycle: estimation (odometry, heading filter), Free Look, safety on a full scan."""
    from freelook.config import load_robot
    from freelook.hardware.sim import SimulatedRobot
    from freelook.link import FreeLookCommand
    from freelook.maps import load_world

    robot = SimulatedRobot(
        load_robot("pioneer3dx"), load_world("lab"), seed=1, use_localization=False
    )
    robot.send(FreeLookCommand(0.3, 0.05, 0.1))
    robot.run_for(0.5)
    clock = [robot.now()]

    def run() -> object:
        clock[0] += 0.02
        return robot.core.control.step(clock[0])

    return Case(run=run, target_s=1e-3, unit="cycle")


@benchmark("robot.lockstep_program")
def lockstep_program() -> Case:
    """One simulated second of the whole robot program with MCL, sensors at their real rates;
    baseline: the bare simulator (no robot program) in the same run."""
    from freelook.config import load_robot
    from freelook.hardware.sim import SimulatedRobot
    from freelook.link import VelocityCommand
    from freelook.maps import load_world
    from freelook.sim import Simulator

    config, lab = load_robot("pioneer3dx"), load_world("lab")
    robot = SimulatedRobot(config, lab, seed=1, pose=(3.0, 3.0, 0.0))
    bare = Simulator(config, lab, seed=1, pose=(3.0, 3.0, 0.0))
    bare.set_wheel_speeds(0.3, 0.35)
    walls: list[float] = []
    turn = [0.2]

    def run() -> None:
        turn[0] = -turn[0]
        robot.send(VelocityCommand(0.3, turn[0]))
        t0 = time.perf_counter()
        robot.run_for(1.0)
        walls.append(time.perf_counter() - t0)

    return Case(
        run=run,
        baseline=lambda: bare.run_for(1.0),
        target_s=1 / 40,
        unit="sim-second",
        extra=lambda: {"realtime_factor": 1.0 / statistics.median(walls)},
    )
