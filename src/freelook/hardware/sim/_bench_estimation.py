"""Benchmarks of localization and the heading filter, on scans the simulator casts."""

from __future__ import annotations

import math

import numpy as np

from freelook.bench import Case, benchmark


def _mcl_case(particles: int) -> Case:
    from freelook.config import EstimationConfig, LaserConfig
    from freelook.estimation import MonteCarloLocalization
    from freelook.maps import load_world
    from freelook.sim.sensors import Laser

    lab = load_world("lab")
    laser_config = LaserConfig(mount_forward=0.17)
    laser = Laser(laser_config, lab, np.random.default_rng(0))
    ranges = laser.scan(3.0, 3.0, 0.3)
    config = EstimationConfig(mcl_particles=particles, mcl_beams=60)
    mcl = MonteCarloLocalization(lab, config, laser.angles, (0.17, 0.0), 30.0, seed=1)
    mcl.initialize(3.0, 3.0, 0.3, 0.1, 0.05)

    def run() -> object:
        mcl.predict(0.01, 0.0, 0.002)
        return mcl.update(ranges, force=True)

    # baseline: the same sensor model, one particle at a time in Python (on 200 particles)
    grid_table, (ox, oy, side, _) = mcl.field.sharp
    pick = np.linspace(0, len(ranges) - 1, 60).astype(int)
    bx = 0.17 + ranges[pick] * np.cos(laser.angles[pick])
    by = ranges[pick] * np.sin(laser.angles[pick])
    sample = mcl.particles[:200].tolist()

    def baseline() -> object:
        weights = []
        for x, y, th in sample:
            c, s = math.cos(th), math.sin(th)
            total = 0.0
            for k in range(60):
                ex = x + c * bx[k] - s * by[k]
                ey = y + s * bx[k] + c * by[k]
                i, j = int((ey - oy) / side), int((ex - ox) / side)
                total += float(grid_table[i, j])
            weights.append(total)
        return weights

    return Case(
        run=run,
        baseline=baseline,
        baseline_ops_per_call=200,
        ops_per_call=1,
        target_s=2e-3 if particles <= 2000 else 13e-3,
        unit="update",
    )


@benchmark("estimation.mcl_2000x60")
def mcl_2000() -> Case:
    """One MCL update with 2000 particles × 60 beams (baseline per particle, scaled)."""
    case = _mcl_case(2000)
    return Case(
        run=case.run,
        baseline=case.baseline,
        baseline_ops_per_call=200 / 2000,
        target_s=case.target_s,
        unit="update",
    )


@benchmark("estimation.mcl_20000x60")
def mcl_20000() -> Case:
    """One MCL update with 20,000 particles × 60 beams."""
    case = _mcl_case(20_000)
    return Case(
        run=case.run,
        baseline=case.baseline,
        baseline_ops_per_call=200 / 20_000,
        target_s=case.target_s,
        unit="update",
    )


@benchmark("estimation.search_first_scan")
def search_first_scan() -> Case:
    """A global search's first scan in lab: 200,000 uniform candidates screened on a few beams,
    the likely ones scored on all 60 (baseline: every candidate on all 60 beams against the
    four-times finer field, as the search's first scan once did)."""
    from freelook.config import EstimationConfig, LaserConfig
    from freelook.estimation import MonteCarloLocalization
    from freelook.maps import load_world
    from freelook.sim.sensors import Laser

    lab = load_world("lab")
    laser_config = LaserConfig(mount_forward=0.17)
    laser = Laser(laser_config, lab, np.random.default_rng(0))
    ranges = laser.scan(3.0, 3.0, 0.3)
    config = EstimationConfig(mcl_particles=2000, mcl_beams=60)
    mcl = MonteCarloLocalization(lab, config, laser.angles, (0.17, 0.0), 30.0, seed=1)

    def run() -> object:
        mcl.global_init()
        return mcl.update(ranges, force=True)

    pick = np.linspace(0, len(ranges) - 1, 60).astype(int)
    bx = 0.17 + ranges[pick] * np.cos(laser.angles[pick])
    by = ranges[pick] * np.sin(laser.angles[pick])
    mcl.global_init()
    candidates = mcl._uniform_poses(200_000)

    def baseline() -> object:
        return mcl.field.score(candidates, bx, by, mcl.field.sharp, scattered=True)

    return Case(run=run, baseline=baseline, unit="scan", interleave=True)


@benchmark("estimation.heading_kf")
def heading_kf() -> Case:
    from freelook.estimation import HeadingKalmanFilter

    kf = HeadingKalmanFilter()

    def run() -> None:
        kf.predict(0.1, 0.01)
        kf.update_encoder_rate(0.1)

    return Case(run=run, unit="step")
