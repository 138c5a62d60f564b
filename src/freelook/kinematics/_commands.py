"""The command a differential/tracked base executes: track speeds plus camera pan rate."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["WheelCommand"]


@dataclass(frozen=True, slots=True)
class WheelCommand:
    """Left/right track surface speeds (m/s) and camera pan rate k (rad/s)."""

    v_left: float
    v_right: float
    pan_rate: float = 0.0
