"""Benchmarks of the simulator core: lock-step speed for one robot with all non-camera sensors."""

from __future__ import annotations

import time

from freelook.bench import Case, benchmark


@benchmark("sim.lockstep")
def lockstep() -> Case:
    """One simulated second of pioneer3dx in ``lab``: physics 5 ms, laser 75 Hz, sonar, gyro,
    encoders. Baseline: the same with physics at 1 ms (what a naive fixed-step simulator does)."""
    from freelook.config import load_robot
    from freelook.maps import load_world
    from freelook.sim import Simulator

    robot = load_robot("pioneer3dx")
    lab = load_world("lab")

    def make(period: float) -> Simulator:
        sim = Simulator(robot, lab, seed=1, pose=(8.0, 8.0, 0.0), physics_period=period)
        sim.set_wheel_speeds(0.2, 0.25)
        sim.run_for(0.5)
        return sim

    fast, slow = make(0.005), make(0.001)
    factor: dict[str, float] = {}

    def run() -> None:
        t0 = time.perf_counter()
        fast.run_for(1.0)
        factor["realtime_factor"] = 1.0 / (time.perf_counter() - t0)

    return Case(
        run=run,
        baseline=lambda: slow.run_for(1.0),
        target_s=1 / 200,
        unit="sim-second",
        extra=lambda: dict(factor),
    )
