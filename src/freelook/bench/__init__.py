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
]
