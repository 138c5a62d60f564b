"""Trials side by side: independent seeded trials spread over worker processes.

Every trial is a pure function of its arguments (its seed included), so the figures are the
same whichever process runs it and in whatever order they finish.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from typing import Any, TypeVar

from freelook.experiments._result import Progress

__all__ = ["map_trials", "set_jobs"]

T = TypeVar("T")
_JOBS = [1]


def _one_thread() -> None:
    """A worker process computes on one thread: the workers already fill the cores, and a
    kernel split over threads (localization's search) would wait on the other workers' turns
    for each of its parts. Each part's figures are the same whichever thread computes it."""
    import numba

    numba.set_num_threads(1)


def set_jobs(jobs: int) -> None:
    """How many worker processes trials may use (1: run them in this process)."""
    _JOBS[0] = max(1, jobs)


def map_trials(
    trial: Callable[..., T],
    arguments: Sequence[tuple[Any, ...]],
    progress: Progress,
    done: int = 0,
    total: int | None = None,
) -> list[T]:
    """``trial(*a)`` for each ``a``, in order; ``progress(done + k, total)`` as they finish."""
    total = total if total is not None else done + len(arguments)
    if _JOBS[0] == 1 or len(arguments) < 2:
        results = []
        for k, args in enumerate(arguments):
            results.append(trial(*args))
            progress(done + k + 1, total)
        return results
    with ProcessPoolExecutor(max_workers=_JOBS[0], initializer=_one_thread) as pool:
        futures = [pool.submit(trial, *args) for args in arguments]
        out = []
        for k, future in enumerate(futures):
            out.append(future.result())
            progress(done + k + 1, total)
        return out
