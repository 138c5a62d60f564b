"""Benchmarks of the simulator core: lock-step speed for one robot with all non-camera sensors."""

from __future__ import annotations

import os
import statistics
import time

from freelook.bench import Case, benchmark


@benchmark("sim.lockstep")
def lockstep() -> Case:
    """One simulated second of pioneer3dx in ``lab``: physics 5 ms, laser 75 Hz, sonar, gyro,
    encoders, every scan read as it comes (a scan no one reads is not cast). Baseline: the
    same with physics at 1 ms (what a naive fixed-step simulator does)."""
    from freelook.config import load_robot
    from freelook.maps import load_world
    from freelook.sim import Simulator

    robot = load_robot("pioneer3dx")
    lab = load_world("lab")

    def make(period: float) -> Simulator:
        sim = Simulator(robot, lab, seed=1, pose=(8.0, 8.0, 0.0), physics_period=period)

        def read(_: float) -> None:
            assert sim.latest_laser is not None

        sim.on_laser.append(read)
        sim.set_wheel_speeds(0.2, 0.25)
        sim.run_for(0.5)
        return sim

    fast, slow = make(0.005), make(0.001)
    walls: list[float] = []

    def run() -> None:
        t0 = time.perf_counter()
        fast.run_for(1.0)
        walls.append(time.perf_counter() - t0)

    return Case(
        run=run,
        baseline=lambda: slow.run_for(1.0),
        target_s=1 / 200,
        unit="sim-second",
        extra=lambda: {"realtime_factor": 1.0 / statistics.median(walls)},
    )


#: IR-SIM's published cost of one robot for one 0.1 s step (with its sensors), ms.
IRSIM_MS_PER_ROBOT_STEP = 0.14


@benchmark("sim.fleet_100")
def fleet_100() -> Case:
    """One simulated second of 100 pioneer3dx in ``lab`` with their lasers (181 beams, 75 Hz),
    driven by a wall-avoiding rule every 0.1 s, stepped on one thread per core.
    Baseline: the same 100 robots as 100 single-robot simulators on one lock-step runtime."""
    import numpy as np

    from freelook.config import load_robot
    from freelook.maps import load_world
    from freelook.runtime import LockstepRuntime
    from freelook.sim import Fleet, Simulator
    from freelook.sim.vehicle import Vehicle

    robot = load_robot("pioneer3dx").model_copy(update={"sonar": None, "gyro": None})
    assert robot.laser is not None
    lab = load_world("lab")
    rng = np.random.default_rng(7)
    x0, x1, y0, y1 = lab.extent
    poses: list[tuple[float, float, float]] = []
    while len(poses) < 100:
        pose = (rng.uniform(x0, x1), rng.uniform(y0, y1), rng.uniform(-np.pi, np.pi))
        try:
            Vehicle(robot, lab, rng, pose)
        except ValueError:
            continue
        poses.append(pose)
    fleet = Fleet(robot, lab, poses, seeds=range(100), workers=os.cpu_count() or 1)
    runtime = LockstepRuntime()
    sims = [Simulator(robot, lab, seed=i, pose=p) for i, p in enumerate(poses)]
    for i, sim in enumerate(sims):
        sim.attach(runtime, prefix=f"robot{i}")
    ahead = np.abs(fleet.angles) < 0.5  # the beams within ±29° of straight ahead

    def rule(ranges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Forward at 0.5 m/s; turn on the spot while something is within 0.8 m ahead."""
        blocked = ranges[:, ahead].min(axis=1) < 0.8
        return np.where(blocked, -0.3, 0.5), np.where(blocked, 0.3, 0.55)

    def run_fleet() -> None:
        for _ in range(10):
            fleet.set_wheel_speeds(*rule(fleet.ranges))
            fleet.run_for(0.1)

    def run_sims() -> None:
        for _ in range(10):
            scans = np.array(
                [s.latest_laser.ranges if s.latest_laser else fleet.ranges[0] for s in sims]
            )
            left, right = rule(scans)
            for sim, vl, vr in zip(sims, left, right, strict=True):
                sim.set_wheel_speeds(float(vl), float(vr))
            runtime.run_for(0.1)

    walls: list[float] = []

    def run() -> None:
        t0 = time.perf_counter()
        run_fleet()
        walls.append(time.perf_counter() - t0)

    def figures() -> dict[str, float]:
        """From the median simulated second (one slow second on a busy machine says little)."""
        wall = statistics.median(walls)
        steps_per_second = 1.0 / fleet.physics_period
        return {
            "realtime_factor": 1.0 / wall,
            "us_per_robot_physics_step": wall / (len(fleet) * steps_per_second) * 1e6,
            # IR-SIM steps 0.1 s at a time: the same simulated time per robot here
            "ms_per_robot_per_0.1s": wall / len(fleet) / 10 * 1e3,
            "irsim_ms_per_robot_step": IRSIM_MS_PER_ROBOT_STEP,
        }

    return Case(
        run=run,
        baseline=run_sims,
        target_s=1 / 10,
        unit="sim-second",
        extra=figures,
    )
