"""The thesis's keyboard increments (the thesis §5.3.1): ↑/↓ ±20 mm/s, ←/→ ±2 °/s, space stops."""

from __future__ import annotations

import math
from typing import Literal

__all__ = ["KeyboardDrive", "KeyboardKey"]

KeyboardKey = Literal["up", "down", "left", "right", "space"]


class KeyboardDrive:
    """Integrates key presses into a held velocity command, clamped to the mode limits."""

    def __init__(
        self,
        speed_step: float = 0.02,
        turn_step: float = math.radians(2.0),
        max_speed: float = 0.5,
        max_turn_rate: float = math.radians(50.0),
    ) -> None:
        self.speed_step = speed_step
        self.turn_step = turn_step
        self.max_speed = max_speed
        self.max_turn_rate = max_turn_rate
        self.v = 0.0
        self.omega = 0.0

    def press(self, key: KeyboardKey) -> tuple[float, float]:
        """Apply one key press; return the new (v, ω)."""
        if key == "space":
            self.v = 0.0
            self.omega = 0.0
        elif key in ("up", "down"):
            step = self.speed_step if key == "up" else -self.speed_step
            self.v = _clamp(
                round((self.v + step) / self.speed_step) * self.speed_step, self.max_speed
            )
        elif key in ("left", "right"):
            step = self.turn_step if key == "left" else -self.turn_step
            self.omega = _clamp(
                round((self.omega + step) / self.turn_step) * self.turn_step, self.max_turn_rate
            )
        else:
            raise ValueError(f"unknown key {key!r}")
        return self.v, self.omega


def _clamp(value: float, limit: float) -> float:
    return max(-limit, min(limit, value))
