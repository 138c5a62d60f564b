"""CLI commands of this group (see the module's register function)."""

from __future__ import annotations

import typer

__all__ = ["register"]


def register(app: typer.Typer) -> None:
    """Add this group's commands to app."""
