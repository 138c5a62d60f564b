"""Refused session requests, per source, as lines for a log a flood cannot fill (sans-I/O).

A station with a wrong key or an unknown station id hears nothing back: the robot must not
answer what it cannot verify. Its log says so instead: the first refused packet of a source at
once, then at most one line per source every ``period`` seconds, counting what came meanwhile.
"""

from __future__ import annotations

from collections import Counter, OrderedDict
from dataclasses import dataclass, field

__all__ = ["SESSION_REFUSALS", "RefusalLog"]

#: The refusals that mean "this source has no session here": a tag that does not verify (a
#: wrong key), a station without a key or a session, a source that spent its budget of those.
SESSION_REFUSALS = frozenset({"auth", "session", "rate"})


@dataclass(slots=True)
class _Source:
    logged: float  # when its last line went out
    counts: Counter[str] = field(default_factory=Counter)  # refusals since, by reason


class RefusalLog:
    """Turns refused packets into rate-limited lines, one source at a time.

    Bounded: it remembers at most ``max_sources`` sources (the oldest are forgotten; a
    forgotten source that comes back is reported again at once)."""

    def __init__(self, period: float = 10.0, max_sources: int = 256) -> None:
        self.period = period
        self.max_sources = max_sources
        self._sources: OrderedDict[object, _Source] = OrderedDict()

    @property
    def remembered(self) -> int:
        """How many sources it keeps a count for."""
        return len(self._sources)

    def note(self, source: object, reason: str, detail: str, now: float) -> str | None:
        """A packet from ``source`` was refused for ``reason`` (``detail``: the error's
        words); the line to log now, or None while this source's line is not due."""
        if reason not in SESSION_REFUSALS:
            return None
        seen = self._sources.get(source)
        if seen is None:
            self._sources[source] = _Source(now)
            while len(self._sources) > self.max_sources:
                self._sources.popitem(last=False)
            return (
                f"refused packets from {_name(source)} ({reason}: {detail}): no session here "
                "for them (a wrong key or station id, or a session from before a restart); "
                "they get no answer"
            )
        self._sources.move_to_end(source)
        seen.counts[reason] += 1
        if now - seen.logged < self.period:
            return None
        total = sum(seen.counts.values())
        reasons = ", ".join(f"{name} {n}" for name, n in sorted(seen.counts.items()))
        line = (
            f"refused {total} more packet{'s' if total != 1 else ''} from {_name(source)} "
            f"in {now - seen.logged:.0f} s ({reasons}; last: {detail})"
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
