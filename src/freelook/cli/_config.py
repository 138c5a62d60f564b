"""``freelook config``: validate and list robot descriptions."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

config_app = typer.Typer(help="Validate and list robot descriptions.", no_args_is_help=True)


@config_app.command("check")
def check(
    files: Annotated[list[Path], typer.Argument(help="TOML robot descriptions to validate.")],
) -> None:
    """Validate robot description files (and the URDF/SRDF of an arm); print every problem with
    file and field (exit 2)."""
    from freelook.arm import load_arm
    from freelook.config import PAN_TILT_MOUNT, load_robot
    from freelook.errors import ConfigError

    failed = False
    for path in files:
        try:
            robot = load_robot(path)
            if robot.arm is not None:
                model = load_arm(robot.arm.urdf, robot.arm.srdf)
                links = set(model.link_names)
                unknown = [
                    f"{path}: cameras.{i}.mount: no link {cam.mount!r} in {robot.arm.urdf} "
                    f"(links: {', '.join(model.link_names)})"
                    for i, cam in enumerate(robot.cameras)
                    if cam.mount != PAN_TILT_MOUNT and cam.mount not in links
                ]
                if unknown:
                    raise ConfigError(f"{path}: camera on an unknown link", unknown)
        except ConfigError as exc:
            failed = True
            for line in exc.problems:
                typer.echo(line, err=True)
            continue
        typer.echo(f"{path}: ok ({robot.name}, {robot.drive.kind})")
    if failed:
        raise typer.Exit(2)


@config_app.command("list")
def list_robots() -> None:
    """List the built-in robots."""
    from freelook.config import builtin_robots, load_robot

    for name in builtin_robots():
        typer.echo(f"{name}: {load_robot(name).description}")


def register(app: typer.Typer) -> None:
    """Add the ``config`` group to ``app``."""
    app.add_typer(config_app, name="config")
