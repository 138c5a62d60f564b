"""Benchmark of the longest experiment run, ``freelook experiment reckless --trials 1000``
(4500 trials of 20 s), projected from a sample of its own trials on this machine's cores.

The full run takes minutes; the sample takes every :data:`SAMPLE_STRIDE`-th trial of each
section, runs them on the experiment's worker processes, and scales each section's CPU time per
trial up to its full count. CPU time is measured in the workers while they run side by side, so
what two busy cores cost each other (caches, clock) is in the figure.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Mapping

from freelook.bench import Case, benchmark
from freelook.experiments._parallel import map_trials, workers
from freelook.experiments._reckless import (
    Driver,
    RecklessCondition,
    Safety,
    ZoneRule,
    reckless_trial,
)
from freelook.experiments._tables import RecklessJob, reckless_jobs, reckless_sections

__all__ = ["SAMPLE_STRIDE", "projected_wall", "reckless_sample", "trial_cpu_seconds"]

#: the sample takes every this many-th trial of each section (91 of each 1000); odd, so half
#: the sampled trials cut the link, as half of each section's do
SAMPLE_STRIDE = 11
_FULL_TRIALS = 1000
_TARGET_S = 300.0

_warm: set[tuple[RecklessCondition, ZoneRule, Safety, Driver]] = set()


def trial_cpu_seconds(
    seed: int,
    cut_link: bool,
    condition: RecklessCondition,
    duration: float,
    rule: ZoneRule,
    safety: Safety = "freelook",
    driver: Driver = "pushing",
    trial: int = 0,
) -> float:
    """CPU seconds one reckless trial takes in this process. The first trial of each kind a
    process runs is preceded by one untimed (its compiled kernels load from numba's cache
    then, once per process, as in the full run)."""
    kind = (condition, rule, safety, driver)
    if kind not in _warm:  # (a short trial of ours: the kernels are the same)
        reckless_trial(0, True, condition, duration, rule, safety, driver)
        _warm.add(kind)
    start = time.process_time()
    reckless_trial(seed, cut_link, condition, duration, rule, safety, driver, trial)
    return time.process_time() - start


def projected_wall(
    cpu_per_trial: Mapping[str, float], trials: Mapping[str, int], cores: int
) -> float:
    """Seconds the full run takes on ``cores`` busy workers: each section's CPU seconds per
    trial times its trials, summed, shared over the cores."""
    return sum(cpu_per_trial[name] * trials[name] for name in trials) / max(1, cores)


def reckless_sample(full: int) -> tuple[list[RecklessJob], dict[str, int]]:
    """Every :data:`SAMPLE_STRIDE`-th trial of each section of ``--trials full`` (seed 1),
    and each section's full count by name."""
    jobs = reckless_jobs(full, 1)
    sample: list[RecklessJob] = []
    trials: dict[str, int] = {}
    start = 0
    for *_, n in reckless_sections(full):
        section = jobs[start : start + n]
        # the thesis's passage drive and our set's are one kind of trial: their counts add
        name = _section(section[0])
        trials[name] = trials.get(name, 0) + n
        sample.extend(section[::SAMPLE_STRIDE])
        start += n
    return sample, trials


def _section(job: RecklessJob) -> str:
    _, _, condition, _, rule, safety, driver, trial = job
    table = "_table_7_1" if trial else ""
    return f"{condition.name.lower()}_{rule}_{safety}_{driver}{table}"


@benchmark("experiment.reckless_1000")
def reckless_1000() -> Case:
    """``freelook experiment reckless --trials 1000`` projected from every 11th trial of each
    section, on one worker process per core as the command runs them."""
    cores = os.cpu_count() or 1
    sample, trials = reckless_sample(_FULL_TRIALS)
    per_trial: dict[str, float] = {}

    def run() -> None:
        with workers(cores):
            seconds = map_trials(trial_cpu_seconds, sample, lambda done, total: None)
        by_section: dict[str, list[float]] = {}
        for job, cpu in zip(sample, seconds, strict=True):
            by_section.setdefault(_section(job), []).append(cpu)
        per_trial.update({name: statistics.fmean(v) for name, v in by_section.items()})

    def projected() -> float:
        return projected_wall(per_trial, trials, cores)

    def extra() -> dict[str, float]:
        figures = {f"{name}_ms_per_trial": 1e3 * s for name, s in per_trial.items()}
        figures["projected_s"] = projected()
        figures["core_s"] = projected() * cores
        figures["sampled_trials"] = len(sample)
        return figures

    return Case(
        run=run,
        calls=1,
        unit="sample",
        target_s=_TARGET_S,
        measured=projected,
        target_label="≤ 300 s projected",
        extra=extra,
    )
