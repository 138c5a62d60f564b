"""What the tables say alike: a run's seeds."""

from __future__ import annotations

__all__ = ["seed_range"]


def seed_range(seed: int, trials: int) -> str:
    """The seeds of ``trials`` runs from ``seed`` on, as a row names them ("seeds 1–3")."""
    return f"seed {seed}" if trials == 1 else f"seeds {seed}–{seed + trials - 1}"
