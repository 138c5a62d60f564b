"""Small bounded caches of what is worked out from a map once and read by many."""

from __future__ import annotations

from typing import TypeVar

__all__ = ["remember"]

_K = TypeVar("_K")
_V = TypeVar("_V")
_KEPT = 8  # entries a cache remembers; the oldest goes


def remember(cache: dict[_K, _V], key: _K, value: _V) -> None:
    """Keep ``value`` under ``key`` as the newest entry, the oldest forgotten beyond
    :data:`_KEPT` (a key kept again replaces its entry and forgets nothing else)."""
    cache.pop(key, None)
    if len(cache) >= _KEPT:
        del cache[next(iter(cache))]
    cache[key] = value
