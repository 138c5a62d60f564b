"""``freelook record``: inspect and repair recorded runs."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

record_app = typer.Typer(help="Inspect and repair recorded runs (MCAP).", no_args_is_help=True)


def _existing(path: Path) -> None:
    """A one-line error and exit code 2 when there is no file at ``path``."""
    if not path.exists():
        typer.echo(f"{path}: no such file", err=True)
        raise typer.Exit(2)


@record_app.command("repair")
def repair_command(
    source: Annotated[Path, typer.Argument(help="A truncated or damaged .mcap file.")],
    output: Annotated[
        Path | None,
        typer.Argument(help="Where to write (default NAME.repaired.mcap).", show_default=False),
    ] = None,
    output_option: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Where to write (as the OUTPUT argument)."),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            "--force",
            help="Replace an existing output (once the repaired file is complete; the output "
            "may be the source itself).",
        ),
    ] = False,
) -> None:
    """Recover every readable chunk of a cut-off recording into a valid file (an existing
    output is left as it is, unless --force)."""
    from freelook.cli._fail import fail
    from freelook.record import RepairError, repair

    _existing(source)
    if output is not None and output_option is not None and output != output_option:
        typer.echo(f"two outputs given: {output} and -o {output_option} (give one)", err=True)
        raise typer.Exit(2)
    destination = output or output_option or source.with_suffix(".repaired.mcap")
    if not force and (destination.exists() or destination.is_symlink()):
        typer.echo(
            f"{destination}: exists; nothing written (name another output, or --force to "
            "replace it)",
            err=True,
        )
        raise typer.Exit(2)
    try:
        report = repair(source, destination, overwrite=force)
    except RepairError as err:
        fail(err)
    typer.echo(
        f"{destination}: {report.messages_recovered} messages from {report.chunks_recovered} "
        f"chunks ({report.chunks_lost} unreadable; "
        f"{'clean end' if report.clean_end else 'stopped at ' + report.stopped_at})"
    )


@record_app.command("info")
def info_command(path: Annotated[Path, typer.Argument(help="A .mcap recording.")]) -> None:
    """Topics, message counts and the time span of a recording (exit 2 when it is damaged)."""
    import datetime as dt

    from freelook.cli._fail import fail
    from freelook.errors import FreelookError
    from freelook.record import recording_info

    try:
        info = recording_info(path)
    except FreelookError as err:
        fail(err)
    for key, value in sorted(info.metadata.items()):
        typer.echo(f"{key}: {value}")
    if info.start is None or info.end is None:
        typer.echo(f"{path}: no messages")
    else:
        start = dt.datetime.fromtimestamp(info.start, dt.UTC).isoformat(timespec="milliseconds")
        typer.echo(
            f"{path}: {info.messages} messages on {len(info.counts)} topics over "
            f"{info.duration:.3f} s from {start}"
        )
    for topic, count in sorted(info.counts.items()):
        typer.echo(f"{count:8d}  {topic}")


def report_command(
    run: Annotated[Path, typer.Argument(help="A recorded run (.mcap).")],
    out_dir: Annotated[
        Path | None,
        typer.Option("-o", "--output", help="Folder for the report (default RUN-report/)."),
    ] = None,
) -> None:
    """Turn a recorded run into an HTML page with plots and the link table."""
    from freelook.cli._fail import fail
    from freelook.errors import FreelookError
    from freelook.record import build_report

    _existing(run)
    destination = out_dir or run.with_name(run.stem + "-report")
    try:
        index = build_report(run, destination)
    except FreelookError as err:  # empty, cut off, damaged: named, with the way out
        fail(err)
    typer.echo(f"report: {index}")


def register(app: typer.Typer) -> None:
    """Add the ``record`` group and the ``report`` command to ``app``."""
    app.add_typer(record_app, name="record")
    app.command("report")(report_command)
