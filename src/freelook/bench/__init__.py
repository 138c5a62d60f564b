"""``freelook bench``: benchmarks with baselines measured in the same run."""

from freelook.bench._harness import (
    BenchOptions,
    Case,
    Factory,
    Result,
    benchmark,
    benchmark_with_options,
    iter_selected,
    registered,
    run_case,
)

__all__ = [
    "BenchOptions",
    "Case",
    "Factory",
    "Result",
    "benchmark",
    "benchmark_with_options",
    "iter_selected",
    "registered",
    "run_case",
]
