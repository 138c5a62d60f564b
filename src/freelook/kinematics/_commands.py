"""The command a differential/tracked base executes: track speeds plus camera pan rate."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["WheelCommand"]


class WheelCommand(NamedTuple):
    """Left/right track surface speeds (m/s) and camera pan rate k (rad/s); a named tuple, as
    the robot makes one or two every control cycle."""

    v_left: float
    v_right: float
    pan_rate: float = 0.0
