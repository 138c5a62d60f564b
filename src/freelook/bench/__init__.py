"""``freelook bench``: benchmarks with baselines measured in the same run."""

from freelook.bench._harness import (
    SUITES,
    BenchOptions,
    Case,
    Factory,
    Result,
    benchmark,
    benchmark_with_options,
    discover,
    iter_selected,
    registered,
    run_case,
)

__all__ = [
    "SUITES",
    "BenchOptions",
    "Case",
    "Factory",
    "Result",
    "benchmark",
    "benchmark_with_options",
    "discover",
    "iter_selected",
    "registered",
    "run_case",
]
