"""Runtimes that drive the sans-I/O components: lock-step (virtual clock) and real time; and
the lock on the process's one pool of compiled parallel loops."""

from freelook.runtime._clock import Clock, ManualClock, MonotonicClock, Runtime
from freelook.runtime._lockstep import Job, LockstepRuntime
from freelook.runtime._parallel import PARALLEL_POOL
from freelook.runtime._realtime import RealtimeRuntime

__all__ = [
    "PARALLEL_POOL",
    "Clock",
    "Job",
    "LockstepRuntime",
    "ManualClock",
    "MonotonicClock",
    "RealtimeRuntime",
    "Runtime",
]
