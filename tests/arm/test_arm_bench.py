"""The arm's benchmarks build and do their work (timing is the bench command's business)."""

from __future__ import annotations

import pytest

from freelook.arm import bench_cases  # noqa: F401 (registers the arm's cases)
from freelook.bench import BenchOptions, registered
from freelook.sim import bench_cases as _sim_cases  # noqa: F401 (sim.arm_step)


@pytest.mark.parametrize("name", ["arm.check_taros", "arm.check_m2p2"])
def test_check_benchmarks_measure_a_check_that_acts(name: str) -> None:
    case = registered()[name](BenchOptions())
    case.run()
    assert case.baseline is not None  # python-fcl is installed with the dev extras
    case.baseline()
    assert case.extra is not None
    figures = case.extra()
    assert figures["slow_pairs"] + figures["stop_pairs"] > 0


def test_plan_benchmark_reaches_every_goal() -> None:
    case = registered()["arm.plan_reach_taros"](BenchOptions())
    assert case.extra is not None
    figures = case.extra()
    assert figures["reached"] == 1.0
    assert figures["median_error_mm"] < 30


def test_arm_step_benchmark_runs() -> None:
    case = registered()["sim.arm_step"](BenchOptions())
    case.run()
    assert case.max_baseline_ratio == 0.1
