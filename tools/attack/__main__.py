"""``python -m tools.attack``: the seeded adversarial campaign against real freelook processes
on loopback (docs/security.md): inputs tried, crashes and unauthorised effects per interface,
and the driver's telemetry and video share under each flood. Exit code 1 when anything crashed
or an unauthorised effect was seen. Run from the repository's root, in the project's venv."""

from __future__ import annotations

from typing import Annotated

import typer

__all__ = ["attack_command", "main"]


def attack_command(
    seed: Annotated[int, typer.Option("--seed", help="Draws the same inputs again.")] = 0,
    count: Annotated[
        int | None,
        typer.Option("--count", min=10, max=10_000_000, help="Hostile inputs per interface."),
    ] = None,
    thorough: Annotated[
        bool,
        typer.Option(
            "--thorough", help="Ten times the inputs, every flood, longer floods (many minutes)."
        ),
    ] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(
            "--only",
            help="A probe to run (repeatable): udp, serial, web, cockpit, jaus, judp, "
            "ros2, zenoh, files, decoders, keys, memory, video, forged, floods.",
        ),
    ] = None,
) -> None:
    """Attack a robot, a station, its cockpit, Foxglove bridge and JAUS gateway, and the
    files and decoders the commands read, all started here on loopback; print the figures."""
    import dataclasses

    from tools.attack import PROBES, CampaignOptions, campaign_lines, run_campaign

    unknown = sorted(set(only or ()) - PROBES.keys())
    if unknown:
        typer.echo(f"unknown probe {unknown[0]!r} (one of {', '.join(PROBES)})", err=True)
        raise typer.Exit(2)
    options = CampaignOptions.thorough(seed) if thorough else CampaignOptions(seed)
    if count is not None:
        options = dataclasses.replace(options, count=count)
    options = dataclasses.replace(options, only=frozenset(only or ()))
    tallies = run_campaign(options, progress=lambda line: typer.echo(line, err=True))
    for line in campaign_lines(tallies):
        typer.echo(line)
    if any(t.crashes or t.unauthorised for t in tallies):
        raise typer.Exit(1)


def main() -> None:
    app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
    app.command()(attack_command)
    app()


if __name__ == "__main__":
    main()
