"""``freelook ros2``: tools for ROS 2 robots (``describe``: a description from the live topics)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from freelook.hardware.ros2 import Description

__all__ = ["register", "say_description"]

ros2_app = typer.Typer(help="Tools for ROS 2 robots.", no_args_is_help=True)

#: s a watch may last
SECONDS = (0.5, 60.0)


def say_description(description: Description, echo: Callable[[str], None] = typer.echo) -> None:
    """What a watch found and what it assumed, a line each."""
    for line in description.found:
        echo(f"  found: {line}")
    for line in description.assumed:
        echo(f"  assumed: {line}")


@ros2_app.command("describe")
def describe(
    output: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="The TOML file to write (default: print it)."),
    ] = None,
    namespace: Annotated[
        str, typer.Option(help="The robot's namespace (as --hardware ros2://NAMESPACE).")
    ] = "",
    seconds: Annotated[float, typer.Option(help="How long to watch the topics (0.5–60 s).")] = 3.0,
    force: Annotated[bool, typer.Option("--force", help="Overwrite the output file.")] = False,
) -> None:
    """Watch a running ROS 2 robot and write a starting description of it: its scan's
    geometry and rate, odometry and IMU rates, camera and size, joints, cmd_vel's type; what
    the topics cannot say (footprint, zones, the sensors' poses) is marked assumed."""
    from freelook.cli._fail import fail
    from freelook.errors import FreelookError
    from freelook.hardware import check_backend
    from freelook.hardware.ros2 import describe_robot, parse_ros2_url

    try:
        ns = parse_ros2_url(f"ros2://{namespace}")
        if not SECONDS[0] <= seconds <= SECONDS[1]:
            raise FreelookError(f"--seconds {seconds:g}: from {SECONDS[0]:g} to {SECONDS[1]:g}")
        if output is not None and output.exists() and not force:
            raise FreelookError(f"{output} exists: --force overwrites it")
        check_backend("ros2")
        name = output.stem if output is not None else (ns.replace("/", "-") or "ros2-robot")
        description = describe_robot(ns, seconds, name=name)
    except FreelookError as err:
        fail(err)
    except KeyboardInterrupt:  # Ctrl-C while it watches: nothing written
        typer.echo("freelook: stopped, nothing written", err=True)
        raise typer.Exit(130) from None
    if output is None:
        typer.echo(description.text, nl=False)
        say_description(description, lambda line: typer.echo(line, err=True))
        return
    try:
        output.write_text(description.text, encoding="utf-8")
    except OSError as err:
        typer.echo(f"{output}: cannot write: {err.strerror}", err=True)
        raise typer.Exit(2) from None
    where = f"ros2://{description.namespace}" if description.namespace else "ros2"
    typer.echo(f"wrote {output} ({description.config.name})")
    say_description(description)
    typer.echo(f"next: freelook robot --hardware {where} --robot {output}")


def register(app: typer.Typer) -> None:
    """Add the ``ros2`` group to ``app``."""
    app.add_typer(ros2_app, name="ros2")
