"""The papers' experiments on the lock-step simulator (shared with the tests)."""

from freelook.experiments._arm_fuzz import arm_fuzz
from freelook.experiments._bomb_disposal import bomb_disposal
from freelook.experiments._calibration import (
    Calibration,
    LapMeasurement,
    calibrate,
    load_measurement,
    measured_robots,
    sensitivity_models,
    shipped_mismatches,
    with_fitted,
)
from freelook.experiments._cluster import ClusterError, on_cluster
from freelook.experiments._faults import Fault, injected
from freelook.experiments._registry import (
    EXPERIMENTS,
    ExperimentResult,
    Row,
    localization_experiment,
    run_experiment,
)

__all__ = [
    "EXPERIMENTS",
    "Calibration",
    "ClusterError",
    "ExperimentResult",
    "Fault",
    "LapMeasurement",
    "Row",
    "arm_fuzz",
    "bomb_disposal",
    "calibrate",
    "injected",
    "load_measurement",
    "localization_experiment",
    "measured_robots",
    "on_cluster",
    "run_experiment",
    "sensitivity_models",
    "shipped_mismatches",
    "with_fitted",
]
