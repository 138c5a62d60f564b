"""glibc's allocator tuned for a process's lifetime (``mallopt``): the robot program and the
experiments' trial workers each set it once, at their start."""

from __future__ import annotations

import ctypes
import ctypes.util

__all__ = ["M_ARENA_MAX", "M_MMAP_THRESHOLD", "M_TRIM_THRESHOLD", "mallopt"]

# glibc's mallopt parameters (<malloc.h>)
M_TRIM_THRESHOLD = -1
M_MMAP_THRESHOLD = -3
M_ARENA_MAX = -8


def mallopt(*settings: tuple[int, int]) -> bool:
    """Each (parameter, value) given to glibc's ``mallopt`` in order, until one is refused;
    whether all took. False, and nothing set, where the C library has none (not glibc)."""
    path = ctypes.util.find_library("c")
    call = getattr(ctypes.CDLL(path), "mallopt", None) if path is not None else None
    if call is None:
        return False
    return all(bool(call(parameter, value)) for parameter, value in settings)
