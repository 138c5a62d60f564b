"""Failed guesses of a secret (the cockpit's token, the Foxglove bridge's), counted per source.

A source that fails ``budget`` times within ``window`` seconds is refused unchecked until that
window has passed (as fail2ban does): its guesses no longer reach the secret, and it costs a
dictionary lookup. Refusals are reported in aggregate, one line per ``report_every`` seconds at
most, so a guessing source cannot fill the log either. Sans-I/O: the caller passes the time.

A source that holds the secret never fails, so it is never throttled; one that shares an
address with a guesser (a browser on the same host) waits out the guesser's window for a new
page or socket; connections already open are not affected.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["GuessThrottle"]


@dataclass
class _Source:
    since: float  # when its window began
    failures: int = 0


@dataclass
class GuessThrottle:
    """Per-source failure budget and the aggregate report of what was refused."""

    budget: int = 20
    window: float = 10.0
    report_every: float = 10.0
    #: sources remembered at most (the oldest is forgotten first): a spread of addresses
    #: cannot grow the table without bound
    max_sources: int = 4096
    _sources: dict[str, _Source] = field(default_factory=dict)
    _checked: int = 0  # failures checked against the secret since the last report
    _unchecked: int = 0  # refused for the budget since the last report
    _seen: set[str] = field(default_factory=set)
    _reported: float | None = None

    def blocked(self, source: str, now: float) -> bool:
        """Whether ``source`` is over its budget now (then refuse it without checking; the
        refusal is counted)."""
        entry = self._sources.get(source)
        if entry is None:
            return False
        if now - entry.since >= self.window:
            del self._sources[source]
            return False
        if entry.failures < self.budget:
            return False
        self._unchecked += 1
        self._note(source)
        return True

    def failed(self, source: str, now: float) -> None:
        """``source`` presented a wrong secret (checked)."""
        entry = self._sources.get(source)
        if entry is None or now - entry.since >= self.window:
            self._sources.pop(source, None)
            while len(self._sources) >= self.max_sources:
                del self._sources[next(iter(self._sources))]
            entry = self._sources[source] = _Source(now)
        entry.failures += 1
        self._checked += 1
        self._note(source)

    def _note(self, source: str) -> None:
        if len(self._seen) < self.max_sources:
            self._seen.add(source)

    def report(self, now: float) -> str | None:
        """One line on what was refused since the last report, at most every
        ``report_every`` seconds (None: nothing to say yet)."""
        if not (self._checked or self._unchecked):
            return None
        if self._reported is not None and now - self._reported < self.report_every:
            return None
        throttled = sum(1 for s in self._sources.values() if s.failures >= self.budget)
        line = (
            f"refused {self._checked + self._unchecked} attempt(s) with a wrong or missing "
            f"secret from {len(self._seen)} source(s)"
            + (f" ({', '.join(sorted(self._seen)[:3])}{', …' if len(self._seen) > 3 else ''})")
            + (
                f"; {self._unchecked} refused unchecked, {throttled} source(s) over "
                f"{self.budget} in {self.window:g} s"
                if self._unchecked or throttled
                else ""
            )
        )
        self._checked = self._unchecked = 0
        self._seen.clear()
        self._reported = now
        return line
