"""Command-line options that several commands share, word for word."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["Seed", "WeakKey", "Wire"]

Wire = Annotated[str, typer.Option(help="Wire profile: thesis or native.")]
WeakKey = Annotated[
    bool,
    typer.Option(
        "--weak-key", help="Accept a key of under 128 bits of entropy (never in the field)."
    ),
]
Seed = Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Simulator seed (0 … 2³² − 1).")]
