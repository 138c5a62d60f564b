"""Benchmarks of the simulated sensors."""

from __future__ import annotations

import itertools
import math

import numpy as np

from freelook.bench import Case, benchmark


@benchmark("sim.laser_scan")
def laser_scan() -> Case:
    """One 181-beam scan in ``lab`` vs a per-beam Python loop over the same grid."""
    from freelook.config import LaserConfig
    from freelook.maps import cast_rays_reference, load_world
    from freelook.sim.sensors import Laser

    lab = load_world("lab")
    laser = Laser(LaserConfig(), lab, np.random.default_rng(0))
    grid = lab.obstacles()
    angles = laser.angles + 0.3

    def baseline() -> object:
        return cast_rays_reference(
            grid, lab.origin, lab.resolution, 8.0, 8.0, angles, 30.0, step_fraction=0.5
        )

    # two headings a bit apart: a laser casts again only when the robot has moved
    poses = itertools.cycle(((8.0, 8.0, 0.3), (8.0, 8.0, math.nextafter(0.3, 1.0))))
    return Case(
        run=lambda: laser.scan(*next(poses)), baseline=baseline, target_s=0.3e-3, unit="scan"
    )


@benchmark("sim.sonar")
def sonar() -> Case:
    """Both 8-transducer sonar rings (5 rays per cone) in ``lab``."""
    from freelook.config import SonarConfig
    from freelook.maps import load_world
    from freelook.sim.sensors import SonarRing

    ring = SonarRing(SonarConfig(), load_world("lab"), np.random.default_rng(0))
    poses = itertools.cycle(((8.0, 8.0, 0.3), (8.0, 8.0, math.nextafter(0.3, 1.0))))
    return Case(run=lambda: ring.read(*next(poses)), unit="reading")
