"""``freelook jaus``: a JAUS (JUDP) gateway in front of a robot."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["register"]


def jaus(
    robot_url: Annotated[
        str,
        typer.Option(
            "--robot",
            help="The robot's link: udp://HOST:PORT, serial:///dev/DEVICE[?baud=N] or "
            "zenoh://HOST:PORT/ROBOT[?mode=client].",
        ),
    ],
    robot_config: Annotated[
        str, typer.Option("--robot-config", help="Robot description (name or TOML).")
    ] = "pioneer3dx",
    key: Annotated[str | None, typer.Option(help="Native key (else FREELOOK_LINK_KEY).")] = None,
    weak_key: Annotated[
        bool,
        typer.Option(
            "--weak-key", help="Accept a key of under 128 bits of entropy (never in the field)."
        ),
    ] = False,
    station: Annotated[
        int, typer.Option(help="The gateway's station id (its key's entry in the keys file).")
    ] = 2,
    host: Annotated[
        str, typer.Option(help="JUDP address (loopback by default: JAUS has no authentication).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="JUDP port.")] = 3794,
    subsystem: Annotated[int, typer.Option(help="This component's JAUS subsystem id.")] = 1,
    node: Annotated[int, typer.Option(help="Its JAUS node id.")] = 1,
    component: Annotated[int, typer.Option(help="Its JAUS component id.")] = 1,
) -> None:
    """A JAUS component (access control, driving, pose and velocity reports) on JUDP, speaking
    to the robot as an authenticated station under the robot's control arbitration."""
    from freelook.cli._run import run_until_stopped
    from freelook.config import load_robot
    from freelook.errors import FreelookError
    from freelook.jaus import JausId, run_gateway
    from freelook.link import link_key, parse_transport_url

    try:
        url = parse_transport_url(robot_url)
        config = load_robot(robot_config)
        secret = link_key(key, allow_weak=weak_key)
        if secret is None:
            raise FreelookError("the gateway needs the link key: --key or FREELOOK_LINK_KEY")
        if not (1 <= subsystem <= 0xFFFE and 1 <= node <= 0xFE and 1 <= component <= 0xFE):
            raise FreelookError("JAUS ids: subsystem 1…65534, node and component 1…254")
    except FreelookError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None

    try:
        run_until_stopped(
            run_gateway(
                config,
                url,
                secret,
                station=station,
                component=JausId(subsystem, node, component),
                listen=(host, port),
                announce=lambda line: typer.echo(line),
            )
        )
    except (FreelookError, OSError) as err:  # the link, a port in use
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None


def register(app: typer.Typer) -> None:
    """Add ``jaus`` to ``app``."""
    app.command("jaus")(jaus)
