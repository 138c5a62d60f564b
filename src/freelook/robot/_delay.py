"""The round trip the robot measures, to its delay rule (``"delay_speed"``).

The link session measures a round trip from each station's echoes of the robot's own packets
(:class:`~freelook.link._clock_sync.RoundTrips`); the one of the station holding control is what its
operator sees through, and goes to the rule. A link that measures none (the thesis profile,
or no sessions) leaves the rule at its slowest cap, and the start says so. Every station's
round trip also goes to the program's :class:`~freelook.robot._sight.DriverSight`, which
judges that station's reception reports at it.
"""

from __future__ import annotations

import logging

from freelook.link import LinkSession
from freelook.robot._core import RobotCore
from freelook.safety import DelaySpeedRule

__all__ = ["feed_round_trips", "feed_sight"]

log = logging.getLogger("freelook.robot")


def feed_round_trips(session: LinkSession, core: RobotCore) -> list[DelaySpeedRule]:
    """Give ``core``'s delay rules the round trips ``session`` measures with the station in
    control; the rules fed (none: the configuration names no delay rule)."""
    rules = [rule for rule in core.safety.rules if isinstance(rule, DelaySpeedRule)]
    if not rules:
        return rules
    if session.role != "robot":
        slowest = rules[0].config.max_round_trip
        log.warning(
            "delay_speed: this link measures no round trip (sessions of the native profile "
            "do): the speed is capped as at a %.1f s round trip",
            slowest,
        )
        return rules

    def measured(station: int, trip: float, now: float) -> None:
        if core.holds_control(station, now):
            for rule in rules:
                rule.measured(now, trip)

    session.round_trips.on_round_trip = measured
    return rules


def feed_sight(session: LinkSession, core: RobotCore) -> None:
    """Give ``core``'s sight every station's round trip ``session`` measures (besides what
    :func:`feed_round_trips` wired); a link without sessions measures none, and the sight
    judges its stations as at no delay."""
    if session.role != "robot":
        return
    before = session.round_trips.on_round_trip

    def measured(station: int, trip: float, now: float) -> None:
        core.sight.round_trip(station, trip)
        if before is not None:
            before(station, trip, now)

    session.round_trips.on_round_trip = measured
