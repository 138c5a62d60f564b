"""The delay rule's section, ``[safety.delay_speed]`` (the rule: ``safety/_rule_delay.py``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from freelook.config._strict import Strict

__all__ = ["DelaySpeedConfig"]


class DelaySpeedConfig(Strict):
    """The delay rule (``"delay_speed"`` in ``[safety] rules``): a speed the robot can stop
    from within what the operator has seen, at the round trip the robot measures itself."""

    margin: float = Field(
        default=0.1, ge=0.0, le=2.0, description="m kept short of the clear range ahead"
    )
    clear_range: Literal["sensors", "sensors_and_map"] = Field(
        default="sensors",
        description="what the clear range ahead is measured against: 'sensors' (what the "
        "laser and sonar see now: what the operator's picture shows) or 'sensors_and_map' "
        "(also remembered readings, the map's walls and keep-outs)",
    )
    seen_range: float = Field(
        default=4.0,
        gt=0.0,
        le=100.0,
        description="m ahead counted as clear when nothing is seen there (no farther than the "
        "range sensors reach)",
    )
    min_speed: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="m/s the cap never goes below while the approach check runs: at that creep "
        "the robot's own check stops it short of what is ahead, whatever the round trip (a "
        "cap of 0 left it standing for good at the mouth of a passage its sonar's cones "
        "reach across); 0: the cap may reach a standstill",
    )
    max_round_trip: float = Field(
        default=2.0,
        gt=0.0,
        le=30.0,
        description="s: a longer round trip, or none measured within stale_after, counts as "
        "this long (the slowest cap)",
    )
    stale_after: float = Field(
        default=1.5,
        gt=0.0,
        le=30.0,
        description="s without a new round trip before the last one counts as unknown",
    )
    window: float = Field(
        default=2.0,
        gt=0.0,
        le=30.0,
        description="s of round trips the longest is taken from (a burst counts at once and "
        "for this long)",
    )
