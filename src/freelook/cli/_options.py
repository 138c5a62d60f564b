"""Command-line options that several commands share, word for word."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from freelook.link import LinkShaping

__all__ = ["LinkDelay", "LinkJitter", "LinkLoss", "Seed", "WeakKey", "Wire", "link_shaping"]

Wire = Annotated[str, typer.Option(help="Wire profile: thesis or native.")]
WeakKey = Annotated[
    bool,
    typer.Option(
        "--weak-key", help="Accept a key of under 128 bits of entropy (never in the field)."
    ),
]
Seed = Annotated[int, typer.Option(min=0, max=2**32 - 1, help="Simulator seed (0 … 2³² − 1).")]
LinkDelay = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=60.0,
        help="S of one-way delay this program adds to everything it sends: the link of a "
        "radio rehearsed on this machine (with sim, each way).",
    ),
]
LinkJitter = Annotated[
    float,
    typer.Option(
        min=0.0,
        max=60.0,
        help="S of extra delay, uniform from 0, on each packet sent (the order is kept).",
    ),
]
LinkLoss = Annotated[
    float,
    typer.Option(min=0.0, max=1.0, help="Share of the packets sent that are lost (0…1, seeded)."),
]


def link_shaping(delay: float, jitter: float, loss: float, seed: int) -> LinkShaping | None:
    """The shaping the three options ask for (None: none asked)."""
    from freelook.link import LinkShaping

    shaping = LinkShaping(delay, jitter, loss, seed)
    return shaping if shaping.shapes else None
