"""Click-to-go's section, ``[goal]``: how the robot drives to a clicked goal on its own (the
mode: ``robot/_modes.py``; the controller: ``control/_goal.py``), and from which round trip the
cockpit offers it."""

from __future__ import annotations

from pydantic import Field

from freelook.config._strict import Strict

__all__ = ["GoalConfig"]


class GoalConfig(Strict):
    """A goal the operator clicks, driven to by the robot under its own safety, at the linear
    drive's speed limit (``[limits] linear_max_speed``)."""

    tolerance: float = Field(
        default=0.15, gt=0.0, le=2.0, description="m from the goal at which it is reached"
    )
    margin: float = Field(
        default=0.1,
        ge=0.0,
        le=1.0,
        description="m kept beside and ahead of the footprint when a way is judged clear",
    )
    lookahead: float = Field(
        default=1.2,
        gt=0.1,
        le=10.0,
        description="m a heading must be clear for (the goal's distance when nearer)",
    )
    max_distance: float = Field(
        default=30.0, gt=0.0, le=1000.0, description="m: a farther goal is refused"
    )
    give_up: float = Field(
        default=30.0,
        gt=0.0,
        le=600.0,
        description="s without coming 5 cm nearer before the robot stops short and says so",
    )
    offer_round_trip: float = Field(
        default=1.0,
        ge=0.0,
        le=60.0,
        description="s: above this round trip the cockpit offers click-to-go (a key arms it "
        "at any delay)",
    )
