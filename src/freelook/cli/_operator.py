"""``freelook sim`` (the one-command demo) and ``freelook operator``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]


def sim(
    robot: Annotated[str, typer.Option(help="Robot name or TOML file.")] = "pioneer3dx",
    world: Annotated[str, typer.Option(help="World name or map file.")] = "lab",
    port: Annotated[int, typer.Option(help="Web port.")] = 8080,
    host: Annotated[str, typer.Option(help="Web address (beyond loopback needs a token).")] = (
        "127.0.0.1"
    ),
    record: Annotated[Path | None, typer.Option(help="Record to this file.")] = None,
    no_record: Annotated[bool, typer.Option("--no-record", help="Do not record.")] = False,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Do not open a browser.")] = (
        False
    ),
    seed: Annotated[int, typer.Option(help="Simulator seed.")] = 0,
) -> None:
    """Simulated robot + robot server + operator + browser cockpit, in one command."""
    import asyncio
    import contextlib
    import signal

    from freelook.config import load_robot
    from freelook.errors import FreelookError
    from freelook.operator._app import SessionOptions, default_run_path, run_session
    from freelook.sim.world import load_world

    try:
        config = load_robot(robot)
        the_world = load_world(world)
    except FreelookError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    path = None if no_record else (record or default_run_path())
    options = SessionOptions(
        host=host, port=port, record=path, open_browser=not no_browser, seed=seed
    )

    def stop(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, stop)  # a service manager's stop is a clean stop too
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(run_session(config, the_world, options, announce=lambda line: typer.echo(line)))
    typer.echo("freelook: stopped")


def register(app: typer.Typer) -> None:
    """Add ``sim`` to ``app``."""
    app.command("sim")(sim)
