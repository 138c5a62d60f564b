"""Benchmark of the safety check per scan."""

from __future__ import annotations

import math

import numpy as np

from freelook.bench import Case, benchmark


@benchmark("safety.check_181")
def check_181() -> Case:
    """Zones + approach check for one 181-beam scan plus 16 sonars, vs a per-point loop."""
    from freelook.config import load_robot
    from freelook.safety import SafetyFilter

    robot = load_robot("pioneer3dx")
    f = SafetyFilter(robot.safety, robot.footprint, robot.drive)
    rng = np.random.default_rng(0)
    angles = np.concatenate(
        [np.linspace(-math.pi / 2, math.pi / 2, 181), rng.uniform(-math.pi, math.pi, 16)]
    )
    ranges = rng.uniform(0.8, 4.0, len(angles))
    points = np.column_stack((ranges * np.cos(angles), ranges * np.sin(angles)))
    clock = [0.0]

    def run() -> object:
        clock[0] += 0.02
        f.command_received(clock[0])
        return f.filter(0.8, 0.3, points, clock[0])

    fp = robot.footprint
    half_l, half_w = fp.length / 2 + 0.05, fp.width / 2 + 0.05
    times = np.linspace(0, 1.5, 24)[1:]

    def baseline() -> object:
        nearest = min(math.hypot(px, py) for px, py in points.tolist())
        for t in times.tolist():
            th = 0.3 * t
            x = 0.8 / 0.3 * math.sin(th)
            y = 0.8 / 0.3 * (1 - math.cos(th))
            c, s = math.cos(th), math.sin(th)
            for px, py in points.tolist():
                lx = c * (px - x) + s * (py - y)
                ly = -s * (px - x) + c * (py - y)
                if abs(lx - fp.center_forward) < half_l and abs(ly) < half_w:
                    return t, nearest
        return None, nearest

    return Case(run=run, baseline=baseline, target_s=0.3e-3, unit="scan")
