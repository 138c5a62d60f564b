"""Direct when possible: which path carries a link that meets through a relay (sans-I/O).

Both ends reach each other through a relay first; each then learns its own public (NAT-mapped)
UDP address from a STUN reflector, and the two exchange those candidates through the relay.
A :class:`DirectPath` is one end's choice for one peer, on the caller's clock:

* **punching**: once the peer's candidates are known, copies of the link's own packets (the
  session's authenticated packets, nothing else) go to each candidate as probes, at most one
  a candidate every ``probe_spacing`` s; for the first ``opener_for`` s with a small TTL, so
  each NAT maps the peer's address before the peer's first probe reaches it (a probe that
  arrives first would take the mapping's port on a Linux NAT);
* **direct**: a packet the session verified came straight from the peer (at
  :attr:`chosen`), and the peer says, through the relay, that it hears this end's direct
  packets: the round trip works both ways, and everything goes direct;
* **relay**: nothing verified came direct for ``silence`` s, or the peer stopped hearing
  this end: back to the relay at once, and a new punch ``again`` s later (a path that worked
  may work again: a stall of either end, a NAT that forgot its mapping). A punch that found
  no round trip in ``punch_for`` s waits ``retry`` s.

A packet counts only once the session verified it (its key, its replay window): a forged or
replayed probe is refused there and moves nothing here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["DirectPath", "DirectTiming", "PathName"]

Address = tuple[str, int]
PathName = Literal["relay", "direct"]


@dataclass(frozen=True, slots=True)
class DirectTiming:
    probe_spacing: float = 0.1  # s between two probes to one candidate
    opener_for: float = 0.3  # s of small-TTL probes when a punch begins
    punch_for: float = 5.0  # s a punch tries before it gives up
    #: s without a verified direct packet (or the peer hearing) to fall back: well inside the
    #: station's reopen_after (1 s), so a lost direct path never costs the session
    silence: float = 0.5
    retry: float = 10.0  # s from a punch that found no round trip to the next
    again: float = 2.0  # s from losing a direct path that worked to the next punch


@dataclass(slots=True)
class DirectPath:
    """One end's path to one peer (see the module)."""

    timing: DirectTiming = field(default_factory=DirectTiming)
    candidates: tuple[Address, ...] = ()  # the peer's, as it sent them
    chosen: Address | None = None  # where the peer's verified direct packets come from
    state: Literal["idle", "punching", "direct", "waiting"] = "idle"
    punches: int = 0  # punches begun
    fallbacks: int = 0  # times the path went back to the relay from direct
    _began: float = -math.inf  # when the current punch began
    _heard: float = -math.inf  # the newest verified direct packet
    _hears_us: float = -math.inf  # the newest report that the peer hears us direct
    _retry_at: float = -math.inf
    _probed: dict[Address, float] = field(default_factory=dict)  # candidate → last probe

    def peer_candidates(self, candidates: tuple[Address, ...], now: float) -> None:
        """The peer's candidates arrived (through the relay): a punch begins if none runs."""
        self.candidates = candidates[:8]
        self._tick(now)

    def peer_hears(self, hears: bool, now: float) -> None:
        """The peer's report: whether it heard this end's direct packets lately."""
        if hears:
            self._hears_us = now
        self._tick(now)

    def verified(self, source: Address, now: float) -> None:
        """The session verified a packet that came direct from ``source``."""
        if self.state not in ("punching", "direct"):
            return  # not asked for: a punch that gave up ignores stragglers
        self._heard = now
        self.chosen = source
        self._tick(now)

    def hears(self, now: float) -> bool:
        """Whether this end heard the peer direct lately (its report to the peer)."""
        return now - self._heard <= self.timing.silence

    def path(self, now: float) -> PathName:
        self._tick(now)
        return "direct" if self.state == "direct" else "relay"

    def probes(self, now: float) -> list[tuple[Address, bool]]:
        """Where to copy the packet being sent now, and whether with a small TTL (an
        opener); each returned candidate counts as probed now."""
        self._tick(now)
        if self.state != "punching":
            return []
        low = now - self._began < self.timing.opener_for
        targets = list(self.candidates)
        if self.chosen is not None and self.chosen not in targets:
            targets.append(self.chosen)
        due = []
        for target in targets:
            if now - self._probed.get(target, -math.inf) >= self.timing.probe_spacing:
                self._probed[target] = now
                due.append((target, low))
        return due

    def _tick(self, now: float) -> None:
        timing = self.timing
        if self.state == "direct":
            heard = now - self._heard <= timing.silence
            if not heard or now - self._hears_us > timing.silence:
                self.state, self._retry_at = "waiting", now + timing.again
                self.fallbacks += 1
            return
        if self.state == "punching":
            if self.hears(now) and now - self._hears_us <= timing.silence:
                self.state = "direct"
            elif now - self._began > timing.punch_for:
                self.state, self._retry_at = "waiting", now + timing.retry
            return
        if self.candidates and now >= self._retry_at:
            self.state, self._began = "punching", now
            self._probed.clear()
            self.punches += 1
