"""Benchmark of the simulated arm against the simulator it rides on."""

from __future__ import annotations

from freelook.bench import Case, benchmark


@benchmark("sim.arm_step")
def arm_step() -> Case:
    """One simulated second of the TAROS arm jogging two joints as the simulator steps it
    (every 10 ms, a command every 20 ms), against one simulated second of the TAROS vehicle
    with its sensors in ``eod`` (5 ms physics): the arm should add at most 10 % to the
    simulator's step time."""
    from freelook.arm import load_arm
    from freelook.config import load_robot
    from freelook.maps import load_world
    from freelook.sim import ARM_PERIOD, Simulator
    from freelook.sim.arm import SimulatedArm

    robot = load_robot("taros")
    assert robot.arm is not None
    arm = SimulatedArm(load_arm(robot.arm.urdf, robot.arm.srdf))
    # the vehicle alone: a robot config with an [arm] gives the simulator its arm
    sim = Simulator(
        robot.model_copy(update={"arm": None}), load_world("eod"), seed=1, physics_period=0.005
    )
    sim.set_wheel_speeds(0.2, 0.25)

    def run() -> None:
        steps = round(1.0 / ARM_PERIOD)
        for k in range(steps):
            if k % round(0.02 / ARM_PERIOD) == 0:  # a 20 ms control cycle
                forward = k % (steps // 2) < steps // 4
                arm.command_velocities([0.1 if forward else -0.1, 0.05, 0.0, 0.0, 0.0])
            arm.step(ARM_PERIOD)

    return Case(
        run=run,
        baseline=lambda: sim.run_for(1.0),
        unit="sim-second",
        max_baseline_ratio=0.1,
    )
