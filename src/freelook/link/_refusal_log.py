"""Refused session requests, per source, as lines for a log a flood cannot fill (sans-I/O).

A station with a wrong key or an unknown station id hears nothing back: the robot must not
answer what it cannot verify. Its log says so instead: the first refused packet of a source at
once, then at most one line per source every ``period`` seconds, counting what came meanwhile;
and however many sources there are (a flood with forged source addresses), at most
``max_lines`` lines per period.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from dataclasses import dataclass, field

__all__ = ["SESSION_REFUSALS", "RefusalLog"]

#: The refusals that mean "this source has no session here": a tag that does not verify (a
#: wrong key), a station without a key or a session, a source that spent its budget of those.
SESSION_REFUSALS = frozenset({"auth", "session", "rate"})


@dataclass(slots=True)
class _Source:
    logged: float | None = None  # when its last line went out (None: never)
    counts: Counter[str] = field(default_factory=Counter)  # refusals since, by reason


class RefusalLog:
    """Turns refused packets into rate-limited lines, one source at a time.

    Bounded three ways: at most one line per source every ``period`` s, at most ``max_lines``
    lines in any ``period`` whatever the number of sources (a source held back is counted and
    reported when its turn comes), and at most ``max_sources`` sources remembered (the oldest
    are forgotten; one that comes back is reported again)."""

    def __init__(self, period: float = 10.0, max_lines: int = 8, max_sources: int = 256) -> None:
        self.period = period
        self.max_lines = max_lines
        self.max_sources = max_sources
        self._sources: OrderedDict[object, _Source] = OrderedDict()
        self._window = -math.inf  # when the current period of ``max_lines`` began
        self._lines = 0
        #: lines held back because ``max_lines`` were out this period
        self.held_back = 0

    @property
    def remembered(self) -> int:
        """How many sources it keeps a count for."""
        return len(self._sources)

    def note(self, source: object, reason: str, error: object, now: float) -> str | None:
        """A packet from ``source`` was refused for ``reason`` (``error``: what refused it,
        put into words only when a line goes out); the line to log now, or None."""
        if reason not in SESSION_REFUSALS:
            return None
        seen = self._sources.get(source)
        if seen is None:
            seen = self._sources[source] = _Source()
            while len(self._sources) > self.max_sources:
                self._sources.popitem(last=False)
        else:
            self._sources.move_to_end(source)
        seen.counts[reason] += 1
        if seen.logged is not None and now - seen.logged < self.period:
            return None
        if now - self._window >= self.period:
            self._window, self._lines = now, 0
        if self._lines >= self.max_lines:
            self.held_back += 1
            return None
        self._lines += 1
        total = sum(seen.counts.values())
        if seen.logged is None:
            count = "" if total == 1 else f"{total} "
            line = (
                f"refused {count}packets from {_name(source)} ({reason}: {error}): no session "
                "here for them (a wrong key or station id, or a session from before a "
                "restart); they get no answer"
            )
        else:
            reasons = ", ".join(f"{name} {n}" for name, n in sorted(seen.counts.items()))
            line = (
                f"refused {total} more packet{'s' if total != 1 else ''} from "
                f"{_name(source)} in {now - seen.logged:.0f} s ({reasons}; last: {error})"
            )
        seen.logged = now
        seen.counts.clear()
        return line


def _name(source: object) -> str:
    """A source as people write it: HOST:PORT for UDP, the tag on Zenoh."""
    if isinstance(source, tuple) and len(source) >= 2:
        host = str(source[0])
        return f"[{host}]:{source[1]}" if ":" in host else f"{host}:{source[1]}"
    return "the serial line" if source is None else str(source)
