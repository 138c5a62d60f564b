"""``freelook bench``: benchmarks with baselines measured in the same run."""

from freelook.bench._harness import (
    SUITES,
    Case,
    Result,
    benchmark,
    discover,
    iter_selected,
    registered,
    run_case,
)

__all__ = [
    "SUITES",
    "Case",
    "Result",
    "benchmark",
    "discover",
    "iter_selected",
    "registered",
    "run_case",
]
