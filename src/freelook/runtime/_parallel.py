"""The process's pool of compiled parallel loops, lent to one call at a time.

numba runs every ``prange`` loop of the process on one thread pool. Its portable threading
layer (workqueue, what numba falls back to without TBB or OpenMP) ends the process when a
second thread launches a parallel loop while one runs: a fleet's robot programs localizing at
once would. Every call of a parallel kernel holds :data:`PARALLEL_POOL`. The lock lives with the
runtimes so that the cores that call parallel kernels stay free of threads.
"""

from __future__ import annotations

import threading

__all__ = ["PARALLEL_POOL"]

#: held around each call of a compiled parallel kernel
PARALLEL_POOL = threading.Lock()
