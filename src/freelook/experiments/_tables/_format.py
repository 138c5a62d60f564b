"""What the tables share: a row's verdict, a run's seeds."""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["Verdict", "seed_range"]


class Verdict(NamedTuple):
    """A row's target, and whether the runs meet it."""

    target: str
    met: bool


def seed_range(seed: int, trials: int) -> str:
    """The seeds of ``trials`` runs from ``seed`` on, as a row names them ("seeds 1–3")."""
    return f"seed {seed}" if trials == 1 else f"seeds {seed}–{seed + trials - 1}"
