"""Runtimes that drive the sans-I/O components: lock-step (virtual clock) and real time; the
event loop the programs run on; and the lock on the process's one pool of compiled parallel
loops."""

from freelook.runtime._clock import Clock, ManualClock, MonotonicClock, Runtime
from freelook.runtime._event_loop import loop_name, run_event_loop
from freelook.runtime._lockstep import Job, LockstepRuntime
from freelook.runtime._malloc import M_ARENA_MAX, M_MMAP_THRESHOLD, M_TRIM_THRESHOLD, mallopt
from freelook.runtime._parallel import PARALLEL_POOL
from freelook.runtime._realtime import RealtimeRuntime

__all__ = [
    "M_ARENA_MAX",
    "M_MMAP_THRESHOLD",
    "M_TRIM_THRESHOLD",
    "PARALLEL_POOL",
    "Clock",
    "Job",
    "LockstepRuntime",
    "ManualClock",
    "MonotonicClock",
    "RealtimeRuntime",
    "Runtime",
    "loop_name",
    "mallopt",
    "run_event_loop",
]
