"""Trials on worker processes: the figures of one process, each worker computing on one thread."""

from __future__ import annotations

import resource

import numba
import numpy as np
import pytest

from freelook.experiments._parallel import map_trials, workers
from freelook.experiments._reckless import RecklessCondition, reckless_trial


def _quiet(done: int, total: int) -> None:
    pass


def test_workers_compute_on_one_thread_and_give_the_figures_of_one_process() -> None:
    # a search from a wrong start scores its cloud with the kernel split over threads
    trials = [(7 + k, k == 1, RecklessCondition.LOCALIZED_MAP, 8.0) for k in range(2)]
    with workers(2):
        threads = map_trials(numba.get_num_threads, [(), ()], _quiet)
        parallel = map_trials(reckless_trial, trials, _quiet)
    assert threads == [1, 1]
    assert map_trials(reckless_trial, trials, _quiet) == parallel


def _page_faults_of_reuse(size: int) -> float:
    """Page faults per round of allocating, using and freeing two arrays of ``size`` floats,
    after a first round (a global search's candidates are arrays of megabytes)."""
    rng = np.random.default_rng(1)

    def round_() -> None:
        a = rng.random(size)
        b = a * 2.0
        del a, b

    round_()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(20):
        round_()
    return (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before) / 20


def test_workers_reuse_the_memory_they_free_instead_of_faulting_in_fresh_pages() -> None:
    if not _glibc():
        pytest.skip("the C library has no mallopt")
    with workers(2):
        faults = map_trials(_page_faults_of_reuse, [(200_000,), (600_000,)], _quiet)
    # from fresh pages every round, as glibc does by default: about 780 faults a round
    assert max(faults) < 10, faults


def _glibc() -> bool:
    import ctypes
    import ctypes.util

    path = ctypes.util.find_library("c")
    return path is not None and hasattr(ctypes.CDLL(path), "mallopt")
