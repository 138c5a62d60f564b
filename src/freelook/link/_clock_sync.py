"""The operator's estimate of the robot's clock and of the link's delays (sans-I/O).

Each :class:`ClockEcho` gives the four times of an NTP exchange: ``t1`` the operator's stamp
on a packet, ``t2`` its arrival on the robot's clock, ``t3`` the echo's stamp (robot's clock),
``t4`` the echo's arrival here. Its round trip is ``(t4 − t1) − (t3 − t2)`` and the offset
``θ = robot clock − operator clock`` it implies is ``((t2 − t1) + (t3 − t4)) / 2``, wrong by
at most half its round trip however the delay splits between the two ways. A queue that fills
in one direction (a burst) lengthens the round trip and skews that sample only, so, as NTP's
clock filter does, the estimate takes the offset of the sample with the shortest round trip of
the last ``window`` seconds: the one least delayed either way. The delays shown to the operator
(round trip, one way each) are the newest sample's, under that offset.
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable
from typing import NamedTuple

from freelook.link._messages import (
    ArmVelocityCommand,
    ClockEcho,
    FreeLookCommand,
    GoalStart,
    GripperCommand,
    LinearDriveStart,
    PanTiltCommand,
    TankCommand,
    TrajectoryStart,
    VelocityCommand,
    WheelSpeedCommand,
)

#: s: how far the wire's whole-microsecond stamps may put a hold or a round trip below zero
_RESOLUTION = 1e-5

__all__ = [
    "ACTING_COMMANDS",
    "EXPIRING_COMMANDS",
    "ClockEstimator",
    "ClockSample",
    "EchoSchedule",
    "RoundTrips",
    "StampAge",
]

#: commands that act while they last: each stops acting at its expiry (the robot's watchdog)
ACTING_COMMANDS: frozenset[type] = frozenset(
    {
        VelocityCommand,
        WheelSpeedCommand,
        TankCommand,
        FreeLookCommand,
        PanTiltCommand,
        ArmVelocityCommand,
        GripperCommand,
    }
)
#: commands the operator stamps with an expiry and the robot refuses late: whatever moves the
#: robot (a goal too). Stops (an e-stop, a drive's or a trajectory's stop) never expire.
EXPIRING_COMMANDS: frozenset[type] = ACTING_COMMANDS | {
    LinearDriveStart,
    TrajectoryStart,
    GoalStart,
}


class ClockSample(NamedTuple):
    """One exchange, reduced: when it ended (operator's clock), its round trip and offset."""

    at: float
    round_trip: float
    offset: float
    up: float  # t2 − t1: one-way delay up plus the offset
    down: float  # t4 − t3: one-way delay down minus the offset


class ClockEstimator:
    """Robot clock offset and link delays from echo exchanges; every input checked."""

    def __init__(self, window: float = 20.0, max_samples: int = 128) -> None:
        if not (math.isfinite(window) and window > 0):
            raise ValueError(f"window {window!r} s must be finite and positive")
        if max_samples < 1:
            raise ValueError(f"max_samples {max_samples} must be at least 1")
        self.window = window
        self._samples: deque[ClockSample] = deque(maxlen=max_samples)
        self._latest = -math.inf  # the newest arrival (operator's clock)
        self.refused = 0  # exchanges whose times cannot be (non-finite, negative hold or trip)

    def add(self, t1: float, t2: float, t3: float, t4: float) -> bool:
        """Take one exchange; False (and counted) when its times cannot be true."""
        times = (t1, t2, t3, t4)
        hold = t3 - t2
        trip = (t4 - t1) - hold
        slack = -_RESOLUTION  # the wire's stamps are whole microseconds
        if not all(math.isfinite(t) for t in times) or hold < slack or trip < slack:
            self.refused += 1
            return False
        trip = max(0.0, trip)
        offset = ((t2 - t1) + (t3 - t4)) / 2
        self._samples.append(ClockSample(t4, trip, offset, t2 - t1, t4 - t3))
        self._latest = max(self._latest, t4)
        while self._samples and self._samples[0].at < self._latest - self.window:
            self._samples.popleft()
        return True

    @property
    def samples(self) -> int:
        """Exchanges the window holds."""
        return len(self._samples)

    @property
    def ready(self) -> bool:
        """Whether any exchange was taken (the estimate exists)."""
        return bool(self._samples)

    def _best(self) -> ClockSample | None:
        return min(self._samples, key=lambda s: s.round_trip, default=None)

    @property
    def offset(self) -> float | None:
        """Robot clock minus operator clock (s), from the least delayed exchange."""
        best = self._best()
        return None if best is None else best.offset

    @property
    def error_bound(self) -> float | None:
        """How far :attr:`offset` may be off at most: half that exchange's round trip (s)."""
        best = self._best()
        return None if best is None else best.round_trip / 2

    @property
    def round_trip(self) -> float | None:
        """The newest exchange's round trip (s)."""
        return self._samples[-1].round_trip if self._samples else None

    @property
    def min_round_trip(self) -> float | None:
        """The shortest round trip of the window (s)."""
        best = self._best()
        return None if best is None else best.round_trip

    @property
    def delay_up(self) -> float | None:
        """The newest exchange's delay operator → robot under the estimated offset (s)."""
        offset = self.offset
        if offset is None:
            return None
        return max(0.0, self._samples[-1].up - offset)

    @property
    def delay_down(self) -> float | None:
        """The newest exchange's delay robot → operator under the estimated offset (s)."""
        offset = self.offset
        if offset is None:
            return None
        return max(0.0, self._samples[-1].down + offset)

    def robot_time(self, local: float) -> float | None:
        """The robot's clock at ``local`` on this end's (None before any exchange)."""
        offset = self.offset
        return None if offset is None else local + offset

    def local_time(self, robot: float) -> float | None:
        """This end's clock when the robot's read ``robot`` (None before any exchange)."""
        offset = self.offset
        return None if offset is None else robot - offset


class EchoSchedule:
    """The robot end's side of the exchange: for each station, the packet that reached it
    fastest (smallest arrival minus stamp) since its last echo, echoed every ``spacing`` s."""

    def __init__(self, spacing: float = 0.25) -> None:
        self.spacing = spacing
        self._best: dict[int, tuple[float, float]] = {}
        self._due: dict[int, float] = {}

    def saw(self, station: int, sent: float, received: float) -> None:
        """A packet from ``station`` stamped ``sent`` arrived at ``received`` (robot clock)."""
        if not (math.isfinite(sent) and math.isfinite(received)):
            return
        best = self._best.get(station)
        if best is None or received - sent < best[1] - best[0]:
            self._best[station] = (sent, received)
        # a station's first echo after a spacing's worth of its packets, to pick from
        self._due.setdefault(station, received + self.spacing)

    def due(self, station: int, now: float) -> ClockEcho | None:
        """The echo for ``station`` when one is due at ``now`` (robot clock; and there is one
        to give)."""
        if now < self._due.get(station, math.inf):
            return None
        best = self._best.pop(station, None)
        if best is None:
            return None
        self._due[station] = now + self.spacing
        return ClockEcho(*best)

    def forget(self, station: int) -> None:
        """A station the link dropped: nothing of it is kept."""
        self._best.pop(station, None)
        self._due.pop(station, None)


class RoundTrips:
    """The robot end's own measure of the round trip, from a station's echoes of the robot's
    packets (the station echoes as the robot does: :class:`EchoSchedule`).

    Only the robot's clock is believed: the echoed stamp must be one of the robot's own recent
    stamps (so the round trip is at least as long as the time since it was sent), and the
    station's claimed hold (its echo's stamp minus the packet's arrival, on its clock) is
    taken as at most ``max_hold`` s, so a station that claims a long hold shortens the round
    trip by no more than that; an echo that cannot be true is refused and counted. Each round
    trip measured is said to :attr:`on_round_trip` (station, round trip, the caller's now)."""

    def __init__(self, max_hold: float = 0.5, remember: int = 1024) -> None:
        self.max_hold = max_hold
        self._stamps: deque[int] = deque(maxlen=remember)
        self._known: set[int] = set()
        self.refused = 0
        self.on_round_trip: Callable[[int, float, float], None] | None = None

    def sent(self, stamp: float) -> None:
        """A packet of this end left stamped ``stamp`` (wire clock)."""
        key = int(stamp * 1e6)  # the wire's whole microseconds
        if self._stamps and self._stamps[-1] == key:
            return
        if len(self._stamps) == self._stamps.maxlen:
            self._known.discard(self._stamps[0])
        self._stamps.append(key)
        self._known.add(key)

    def echoed(
        self, station: int, echo: ClockEcho, stamp: float, arrival: float, now: float
    ) -> float | None:
        """The round trip (s) an echo from ``station`` stamped ``stamp`` (its clock) arriving
        at ``arrival`` (this end's wire clock; ``now`` on the caller's) gives; None, counted,
        when it cannot be true."""
        times = (echo.sent, echo.received, stamp, arrival)
        if not all(math.isfinite(t) for t in times) or round(echo.sent * 1e6) not in self._known:
            self.refused += 1
            return None
        hold = stamp - echo.received
        trip = arrival - echo.sent - min(self.max_hold, max(0.0, hold))
        if hold < -_RESOLUTION or trip < -_RESOLUTION:
            self.refused += 1
            return None
        trip = max(0.0, trip)
        if self.on_round_trip is not None:
            self.on_round_trip(station, trip, now)
        return trip


class StampAge:
    """The receiver's own measure of how old a packet is, for a sender whose clock it does
    not know and that states no expiry (the thesis profile's millisecond tick): its delay
    (arrival minus stamp) minus the smallest delay seen from that sender, so the two clocks
    need not agree; a packet of the least delayed kind is 0 s old. A delay that grows by more
    than ``rebase_after`` at once is a tick that wrapped or a sender that restarted: the
    smallest delay starts again from it."""

    def __init__(self, rebase_after: float = 3600.0, max_senders: int = 256) -> None:
        self.rebase_after = rebase_after
        self.max_senders = max_senders
        self._least: dict[int, float] = {}

    def age(self, sender: int, stamp: float, arrival: float) -> float:
        """How old the packet stamped ``stamp`` arriving at ``arrival`` is (s, ≥ 0); inf for
        times that are not finite."""
        if not (math.isfinite(stamp) and math.isfinite(arrival)):
            return math.inf
        delay = arrival - stamp
        least = self._least.get(sender)
        if least is None or delay < least or delay - least > self.rebase_after:
            if least is None and len(self._least) >= self.max_senders:
                del self._least[next(iter(self._least))]
            self._least[sender] = least = delay
        return delay - least
