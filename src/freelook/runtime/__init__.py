"""Runtimes that drive the sans-I/O components: lock-step (virtual clock) and real time."""

from freelook.runtime._clock import Clock, ManualClock, MonotonicClock, Runtime
from freelook.runtime._lockstep import Job, LockstepRuntime
from freelook.runtime._realtime import RealtimeRuntime

__all__ = [
    "Clock",
    "Job",
    "LockstepRuntime",
    "ManualClock",
    "MonotonicClock",
    "RealtimeRuntime",
    "Runtime",
]
