"""The papers' experiments on the lock-step simulator (shared with the tests)."""

from freelook.experiments._arm_fuzz import arm_fuzz
from freelook.experiments._bomb_disposal import bomb_disposal
from freelook.experiments._cluster import ClusterError, on_cluster
from freelook.experiments._registry import (
    EXPERIMENTS,
    ExperimentResult,
    Row,
    localization_experiment,
    run_experiment,
)

__all__ = [
    "EXPERIMENTS",
    "ClusterError",
    "ExperimentResult",
    "Row",
    "arm_fuzz",
    "bomb_disposal",
    "localization_experiment",
    "on_cluster",
    "run_experiment",
]
