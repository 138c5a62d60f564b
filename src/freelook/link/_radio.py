"""Radios that die and stay dead until restarted, and the watch that restarts one.

The thesis's half-duplex radios sometimes stopped for good when their buffers overran (seed
004 §7.2: "the whole system had to be restarted"). :class:`DeadRadio` is a pair of such nodes
(the station's and the robot's): once one fails, both directions through the pair fall silent
and stay silent until that node is restarted, and a restarted node needs ``boot`` seconds
before it carries packets again. Restarting the node that did not fail changes nothing.

:class:`RadioWatch` (sans-I/O) is what the thesis listed as future work, "auto communications
recovery": an end that has heard nothing from its peer for ``silence`` seconds restarts its own
radio, and again every ``retry`` seconds while the silence lasts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

__all__ = ["DeadRadio", "RadioNode", "RadioWatch"]

RadioNode = Literal["station", "robot"]


@dataclass
class DeadRadio:
    """Two radio nodes; ``failures`` are (time, node) when a node dies. Use as the
    ``lockups`` of both :class:`ImpairedChannel` directions through the pair."""

    failures: list[tuple[float, RadioNode]] = field(default_factory=list)
    boot: float = 1.0
    #: (time, node) of every restart asked for, in order
    restarts: list[tuple[float, RadioNode]] = field(default_factory=list)
    #: per failure, the time its node carried packets again (None: still dead)
    revived: list[float | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.failures.sort()
        self.revived = [None] * len(self.failures)

    def restart(self, node: RadioNode, now: float) -> None:
        """Power-cycle ``node`` at ``now``: a failure of that node already begun ends ``boot``
        seconds later (a restart mid-boot starts the boot again)."""
        self.restarts.append((now, node))
        for k, (at, failed) in enumerate(self.failures):
            revived = self.revived[k]
            if failed == node and at <= now and (revived is None or revived > now):
                self.revived[k] = now + self.boot

    def silent(self, now: float) -> bool:
        """Whether the pair carries nothing at ``now``."""
        for (at, _), revived in zip(self.failures, self.revived, strict=True):
            if at <= now and (revived is None or now < revived):
                return True
        return False

    def dead_at(self, now: float) -> int:
        """How many failures have happened by ``now``."""
        return sum(at <= now for at, _ in self.failures)


class RadioWatch:
    """Restart this end's radio after ``silence`` s without a packet from the peer, then every
    ``retry`` s while the silence lasts. ``update`` says when to restart."""

    def __init__(self, silence: float = 2.0, retry: float = 5.0, start: float = 0.0) -> None:
        """Silence counts from ``start`` until the first packet."""
        if silence <= 0 or retry <= 0:
            raise ValueError(f"need silence > 0 and retry > 0, got {silence}, {retry}")
        self.silence = silence
        self.retry = retry
        self.last_heard = start
        self._last_restart: float | None = None
        self.restarts = 0

    def heard(self, now: float) -> None:
        """A packet from the peer was accepted at ``now``."""
        self.last_heard = now

    def update(self, now: float) -> bool:
        """True when the radio should be restarted now."""
        if now - self.last_heard < self.silence:
            return False
        if (
            self._last_restart is not None
            and self._last_restart >= self.last_heard
            and now - self._last_restart < self.retry
        ):
            return False
        self._last_restart = now
        self.restarts += 1
        return True
