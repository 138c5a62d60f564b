"""The papers' experiments on the lock-step simulator (shared with the tests)."""

from freelook.experiments._registry import EXPERIMENTS, ExperimentResult, Row, run_experiment

__all__ = ["EXPERIMENTS", "ExperimentResult", "Row", "run_experiment"]
