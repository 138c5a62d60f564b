"""Trials side by side: independent seeded trials spread over worker processes.

Every trial is a pure function of its arguments (its seed included), so the figures are the
same whichever process runs it, in whatever order they finish, on a machine of any number of
cores.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Any, Protocol, TypeVar

from threadpoolctl import threadpool_limits

from freelook.experiments._result import Progress
from freelook.runtime import M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, mallopt

__all__ = ["TrialRunner", "map_trials", "set_jobs", "set_runner", "workers"]

T = TypeVar("T")
_JOBS = [1]


class TrialRunner(Protocol):
    """Runs trials somewhere other than this machine's processes (a cluster's workers)."""

    def map(
        self,
        trial: Callable[..., T],
        arguments: Sequence[tuple[Any, ...]],
        progress: Progress,
        done: int,
        total: int,
    ) -> list[T]:
        """``trial(*a)`` for each ``a``, in order, each on a worker set up by
        :func:`on_worker`; ``progress(done + k, total)`` as they finish."""
        ...


_RUNNER: list[TrialRunner | None] = [None]

#: the largest block glibc may serve from its heap rather than from a mapping of its own
_HEAP_BLOCKS = 32 * 1024 * 1024
#: free memory a worker keeps at the top of its heap instead of handing it back
_KEPT_FREE = 256 * 1024 * 1024


def _keep_freed_memory() -> bool:
    """Let glibc's allocator reuse freed memory instead of handing it back to the kernel.

    A global search allocates and frees arrays of megabytes (200,000 candidate poses) many
    times a trial; by default each comes from fresh pages, which the kernel zeroes on first
    touch: 5,000 page faults and 10 ms of system time in a reckless trial from a wrong start.
    Returns False where the C library has no ``mallopt`` (not glibc)."""
    return mallopt((M_MMAP_THRESHOLD, _HEAP_BLOCKS), (M_TRIM_THRESHOLD, _KEPT_FREE))


def _start_worker() -> None:
    """A worker process computes on one thread: the workers already fill the cores. A kernel
    split over threads (localization's search) would wait on the other workers' turns for
    each of its parts, and BLAS's helper threads spin between calls on a core another worker
    needs. It keeps the memory it frees for its next trials (:func:`_keep_freed_memory`)."""
    import numba

    numba.set_num_threads(1)
    threadpool_limits(1, user_api="blas")
    _keep_freed_memory()


_SET_UP = [False]


def on_worker(trial: Callable[..., T], arguments: tuple[Any, ...]) -> T:
    """``trial(*arguments)`` on a worker that another program started (a cluster's): the
    process is set up once, as :func:`_start_worker` sets up this machine's (BLAS's limit holds
    for the whole process: setting it in each trial would cost 4 ms), and numba computes on one
    thread in the thread that runs the trial (numba's thread count is per thread)."""
    import numba

    if not _SET_UP[0]:
        _start_worker()
        _SET_UP[0] = True
    numba.set_num_threads(1)
    return trial(*arguments)


def set_runner(runner: TrialRunner | None) -> None:
    """Where trials run: on ``runner`` (a cluster), or on this machine's processes (None)."""
    _RUNNER[0] = runner


def set_jobs(jobs: int) -> None:
    """How many worker processes trials may use (1: run them in this process)."""
    _JOBS[0] = max(1, jobs)


@contextmanager
def workers(jobs: int | None) -> Iterator[None]:
    """Trials inside run on ``jobs`` worker processes (:func:`set_jobs`), one after (None:
    as :func:`set_jobs` last said, left so)."""
    if jobs is None:
        yield
        return
    set_jobs(jobs)
    try:
        yield
    finally:
        set_jobs(1)


def map_trials(
    trial: Callable[..., T],
    arguments: Sequence[tuple[Any, ...]],
    progress: Progress,
    done: int = 0,
    total: int | None = None,
) -> list[T]:
    """``trial(*a)`` for each ``a``, in order; ``progress(done + k, total)`` as they finish.

    BLAS computes on one thread here as in the workers: split over threads, a long sum (a
    global search's pose estimate over 20,000 particles) rounds differently, so the figures
    would depend on the machine's cores and on ``jobs``.
    """
    total = total if total is not None else done + len(arguments)
    if _RUNNER[0] is not None and arguments:
        return _RUNNER[0].map(trial, arguments, progress, done, total)
    if _JOBS[0] == 1 or len(arguments) < 2:
        results = []
        with threadpool_limits(1, user_api="blas"):
            for k, args in enumerate(arguments):
                results.append(trial(*args))
                progress(done + k + 1, total)
        return results
    with ProcessPoolExecutor(max_workers=_JOBS[0], initializer=_start_worker) as pool:
        futures = [pool.submit(trial, *args) for args in arguments]
        out = []
        for k, future in enumerate(futures):
            out.append(future.result())
            progress(done + k + 1, total)
        return out
