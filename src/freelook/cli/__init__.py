"""The ``freelook`` command line.

Each command group lives in its own module with a ``register(app)`` function; heavy imports
happen inside the commands so that ``freelook --help`` stays instant.
"""

from __future__ import annotations

import typer

from freelook.cli import (
    _bench,
    _calibrate,
    _certs,
    _config,
    _experiment,
    _fleet,
    _hit,
    _jaus,
    _keys,
    _link,
    _operator,
    _plot,
    _record,
    _robot,
    _ros2,
    _world,
)

__all__ = ["app", "main"]

app = typer.Typer(
    name="freelook",
    help="Teleoperation for ground robots: Free Look Control, safety, link, cockpit, simulator.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)

for _module in (
    _config,
    _plot,
    _bench,
    _world,
    _link,
    _robot,
    _operator,
    _fleet,
    _record,
    _experiment,
    _calibrate,
    _hit,
    _jaus,
    _keys,
    _certs,
    _ros2,
):
    _module.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
