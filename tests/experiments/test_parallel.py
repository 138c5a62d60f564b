"""Trials on worker processes: the figures of one process, each worker computing on one thread."""

from __future__ import annotations

import numba

from freelook.experiments._parallel import map_trials, set_jobs
from freelook.experiments._reckless import RecklessCondition, reckless_trial


def _quiet(done: int, total: int) -> None:
    pass


def test_workers_compute_on_one_thread_and_give_the_figures_of_one_process() -> None:
    # a search from a wrong start scores its cloud with the kernel split over threads
    trials = [(7 + k, k == 1, RecklessCondition.LOCALIZED_MAP, 8.0) for k in range(2)]
    try:
        set_jobs(2)
        threads = map_trials(numba.get_num_threads, [(), ()], _quiet)
        parallel = map_trials(reckless_trial, trials, _quiet)
    finally:
        set_jobs(1)
    assert threads == [1, 1]
    assert map_trials(reckless_trial, trials, _quiet) == parallel
