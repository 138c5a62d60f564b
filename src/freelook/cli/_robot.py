"""``freelook robot``: run the robot program (simulated backend) and serve it on a link."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["register"]


def robot(
    robot_name: Annotated[str, typer.Option("--robot", help="Robot name or TOML file.")] = (
        "pioneer3dx"
    ),
    world: Annotated[str, typer.Option(help="World name or map file.")] = "lab",
    listen: Annotated[
        str, typer.Option(help="udp://HOST:PORT or serial:///dev/…?baud=N")
    ] = "udp://127.0.0.1:47001",
    wire: Annotated[str, typer.Option(help="Wire profile: thesis or native.")] = "native",
    key: Annotated[
        str | None, typer.Option(help="Native link key (else FREELOOK_LINK_KEY).")
    ] = None,
    insecure: Annotated[
        bool, typer.Option("--insecure", help="Native profile without authentication.")
    ] = False,
    seed: Annotated[int, typer.Option(help="Simulator seed.")] = 0,
) -> None:
    """Run the simulated robot and serve it (Ctrl-C stops it)."""
    import asyncio
    import contextlib

    from freelook.config import load_robot
    from freelook.errors import FreelookError
    from freelook.link import derive_key, key_from_env
    from freelook.maps import load_world
    from freelook.robot._server import RobotServer, ServerOptions

    if wire not in ("thesis", "native"):
        typer.echo(f"unknown wire profile {wire!r} (thesis or native)", err=True)
        raise typer.Exit(2)
    try:
        config = load_robot(robot_name)
        the_world = load_world(world)
        secret = derive_key(key) if key else key_from_env()
        if wire == "native" and secret is None and not insecure:
            raise FreelookError(
                "the native profile needs a key: --key, FREELOOK_LINK_KEY, or --insecure"
            )
        server = RobotServer(
            config,
            the_world,
            ServerOptions(
                listen=listen, wire=wire, key=secret, allow_unauthenticated=insecure, seed=seed
            ),
        )
    except FreelookError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    typer.echo(f"robot {config.name} in {the_world.name}: {wire} profile on {listen}")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(server.run())


def register(app: typer.Typer) -> None:
    """Add the ``robot`` command to ``app``."""
    app.command("robot")(robot)
