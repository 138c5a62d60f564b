"""How a command says what went wrong: one line per problem, exit code 2, no traceback."""

from __future__ import annotations

from typing import NoReturn

import typer

from freelook.errors import ConfigError, FreelookError

__all__ = ["fail"]


def fail(err: FreelookError | OSError) -> NoReturn:
    """Print ``err`` (a configuration error: each problem on its line, naming the file and
    the field, as ``freelook config check`` does) and exit with code 2."""
    for line in err.problems if isinstance(err, ConfigError) else [str(err)]:
        typer.echo(line, err=True)
    raise typer.Exit(2)
