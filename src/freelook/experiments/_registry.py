"""``freelook experiment``: the papers' experiments, our numbers beside theirs.

Each experiment runs scenarios from :mod:`freelook.experiments._scenarios` (the same ones the
tests use) on the lock-step simulator and returns a table: what the paper reports, what we
measure, and whether we meet the target.
"""

from __future__ import annotations

from collections.abc import Callable

from freelook.experiments._arm_fuzz import arm_fuzz
from freelook.experiments._bomb_disposal import bomb_disposal
from freelook.experiments._figures_table import flc_figures_table
from freelook.experiments._localization_table import localization_in_lab, localization_on_map
from freelook.experiments._parallel import workers
from freelook.experiments._result import ExperimentResult, Progress, Row
from freelook.experiments._tables import (
    ellipse_table,
    latency_table,
    packet_drop_table,
    reckless_table,
    square_laps_table,
    translation_table,
)

__all__ = [
    "EXPERIMENTS",
    "ExperimentResult",
    "Row",
    "localization_experiment",
    "run_experiment",
]


def _localization(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    return localization_experiment("lab", trials, seed, progress)


def localization_experiment(
    world: str, trials: int, seed: int, progress: Progress, jobs: int | None = None
) -> ExperimentResult:
    """Monte Carlo localization on ``world`` (a built-in name or a map file): in the lab, the
    tour from a known start and the global search on the tour; on any map, the global search
    at random free places while the robot drives slowly, and what the map costs to set up.
    ``jobs`` worker processes share the trials (None: as the enclosing :func:`workers` said)."""
    with workers(jobs):
        if world != "lab":
            return localization_on_map(world, trials, seed, progress)
        return localization_in_lab(trials, seed, progress)


EXPERIMENTS: dict[str, tuple[Callable[[int, int, Progress], ExperimentResult], int, int]] = {
    # name: (function, full trials, reduced trials for CI)
    "square-laps": (square_laps_table, 10, 1),
    "translation-offset": (translation_table, 8, 2),
    "flc-figures": (flc_figures_table, 3, 1),
    "ellipse": (ellipse_table, 5, 1),
    "packet-drop": (packet_drop_table, 3, 1),
    "reckless": (reckless_table, 1000, 4),
    "localization": (_localization, 50, 2),
    "arm-fuzz": (arm_fuzz, 1000, 3),
    "bomb-disposal": (bomb_disposal, 100, 2),
    "latency": (latency_table, 5, 1),
}


def run_experiment(
    name: str,
    trials: int | None,
    seed: int,
    progress: Progress,
    reduced: bool = False,
    jobs: int = 1,
) -> ExperimentResult:
    """Run experiment ``name``; ``jobs`` worker processes share its trials."""
    function, full, small = EXPERIMENTS[name]
    n = trials if trials is not None else (small if reduced else full)
    with workers(jobs):
        result = function(max(1, n), seed, progress)
    result.command = f"freelook experiment {name} --trials {n} --seed {seed}"
    result.details["trials"] = n
    return result
