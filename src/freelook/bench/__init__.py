"""``freelook bench``: benchmarks with baselines measured in the same run."""

from freelook.bench._harness import (
    BenchOptions,
    Case,
    Context,
    Factory,
    Figures,
    Result,
    added_figures,
    benchmark,
    benchmark_with_options,
    figures,
    iter_selected,
    registered,
    run_case,
)
from freelook.bench._processes import stop_process

__all__ = [
    "BenchOptions",
    "Case",
    "Context",
    "Factory",
    "Figures",
    "Result",
    "added_figures",
    "benchmark",
    "benchmark_with_options",
    "figures",
    "iter_selected",
    "registered",
    "run_case",
    "stop_process",
]
