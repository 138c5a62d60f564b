"""Benchmarks of the kinematics layer."""

from __future__ import annotations

import numpy as np

from freelook.bench import Case, benchmark
from freelook.kinematics._control_modes import free_look_control, free_look_control_batch

L1, L2, D = 0.11, -0.019, 0.35


@benchmark("kinematics.flc_vectorised")
def flc_vectorised() -> Case:
    """FLC mapping of 10⁵ commands at once vs a per-command ``numpy.linalg.solve``."""
    rng = np.random.default_rng(0)
    n = 100_000
    v1, v2, omega, pan = rng.uniform(-1, 1, (4, n))
    m = np.array([[0.5 + L2 / D, 0.5 - L2 / D], [-L1 / D, L1 / D]])
    n_base = 2_000

    def run() -> object:
        return free_look_control_batch(v1, v2, omega, pan, L1, L2, D)

    def baseline() -> object:
        out = np.empty((n_base, 3))
        for i in range(n_base):
            c, s = np.cos(pan[i]), np.sin(pan[i])
            rhs = np.array([c * v1[i] - s * v2[i], s * v1[i] + c * v2[i]])
            left, right = np.linalg.solve(m, rhs)
            out[i] = (left, right, omega[i] - (right - left) / D)
        return out

    return Case(
        run=run, ops_per_call=n, baseline=baseline, baseline_ops_per_call=n_base, unit="command"
    )


@benchmark("kinematics.flc_scalar")
def flc_scalar() -> Case:
    """One FLC command on the scalar path the control cycle uses."""
    return Case(
        run=lambda: free_look_control(0.3, 0.1, 0.2, 0.4, L1, L2, D), target_s=5e-6, unit="command"
    )
