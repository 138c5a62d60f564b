"""The event loop the programs run on: uvloop's where it is installed, else asyncio's own.

uvloop (libuv, compiled) carries a packet from socket to callback in less time than asyncio's
selector loop: the link's command round trip on loopback is 1.6–1.7 × a raw blocking-socket
echo on it against 2.0–2.1 × on asyncio's (``freelook bench link.udp_round_trip``). Both loops
run the same code; on a platform without uvloop (Windows) asyncio's serves.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from typing import Any, TypeVar

__all__ = ["loop_name", "run_event_loop"]

T = TypeVar("T")

try:
    import uvloop
except ImportError:  # pragma: no cover - uvloop is installed wherever it builds
    uvloop = None  # type: ignore[assignment]


def run_event_loop(main: Coroutine[Any, Any, T]) -> T:
    """Run ``main`` to its end on a new event loop, as :func:`asyncio.run` does."""
    if uvloop is None:  # pragma: no cover
        return asyncio.run(main)
    return uvloop.run(main)


def loop_name() -> str:
    """The event loop :func:`run_event_loop` runs on: "uvloop" or "asyncio"."""
    return "asyncio" if uvloop is None else "uvloop"
