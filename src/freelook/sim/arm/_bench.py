"""Benchmark of the simulated arm against the simulator it rides on."""

from __future__ import annotations

from freelook.bench import Case, benchmark


@benchmark("sim.arm_step")
def arm_step() -> Case:
    """One simulated second (5 ms physics, a command every 20 ms) of the TAROS arm jogging two
    joints, against one simulated second of the TAROS vehicle with its sensors in ``eod``: the
    arm should add at most 10 % to the simulator's step time."""
    from freelook.arm import load_arm
    from freelook.config import load_robot
    from freelook.maps import load_world
    from freelook.sim import Simulator
    from freelook.sim.arm import SimulatedArm

    robot = load_robot("taros")
    assert robot.arm is not None
    arm = SimulatedArm(load_arm(robot.arm.urdf, robot.arm.srdf))
    sim = Simulator(robot, load_world("eod"), seed=1, physics_period=0.005)
    sim.set_wheel_speeds(0.2, 0.25)

    def run() -> None:
        for k in range(200):
            if k % 4 == 0:  # a 20 ms control cycle
                arm.command_velocities([0.1 if k % 100 < 50 else -0.1, 0.05, 0.0, 0.0, 0.0])
            arm.step(0.005)

    return Case(
        run=run,
        baseline=lambda: sim.run_for(1.0),
        unit="sim-second",
        max_baseline_ratio=0.1,
    )
