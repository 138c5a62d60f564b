"""``freelook calibrate``: identify a robot's error model from its paper's named measurement."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer

__all__ = ["register"]

_Robot = Annotated[
    str | None,
    typer.Argument(help="A robot with a named measurement (default: every one), e.g. foi-ugv."),
]
_Measurement = Annotated[
    Path | None,
    typer.Option(help="Fit this measurement file in place of the robot's named one."),
]
_Write = Annotated[
    Path | None,
    typer.Option(help="Write the error model with the fitted constants to this TOML file."),
]
_Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]
_Jobs = Annotated[
    int | None,
    typer.Option(
        min=1, max=64, help="Worker processes sharing each step's laps (default: one per core)."
    ),
]


def calibrate(
    robot: _Robot = None,
    measurement: _Measurement = None,
    write: _Write = None,
    json_out: _Json = False,
    jobs: _Jobs = None,
) -> None:
    """Fit the error model's sprocket difference and ICR spread to the robot's named
    measurement (least squares on the paper's own system, docs/belief-and-truth.md) and
    compare them with the shipped error model: exit 1 when the shipped one is not the fit of
    its named measurement."""
    from dataclasses import asdict

    from freelook.config import builtin_error_models, load_error_model
    from freelook.errors import ConfigError
    from freelook.experiments import calibrate as fit
    from freelook.experiments import (
        load_measurement,
        measured_robots,
        shipped_mismatches,
        with_fitted,
    )

    robots = [robot] if robot is not None else measured_robots()
    if (measurement is not None or write is not None) and len(robots) != 1:
        typer.echo("--measurement and --write go with one robot", err=True)
        raise typer.Exit(2)
    try:
        measured = load_measurement(measurement) if measurement is not None else None
        if measured is not None and robot is not None and measured.robot != robot:
            raise ConfigError(f"{measurement}: a measurement of {measured.robot}, not {robot}")
        cores = jobs if jobs is not None else (os.cpu_count() or 1)
        calibrations = [fit(name, measured, cores) for name in robots]
    except ConfigError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    mismatched = False
    out = []
    for c in calibrations:
        problems = shipped_mismatches(c, load_error_model(c.robot))
        mismatched |= bool(problems) and measured is None
        out.append(
            {
                **asdict(c),
                "measurement": c.measurement.model_dump(),
                "shipped_mismatches": problems,
            }
        )
        if not json_out:
            _print(c, problems)
        if write is not None:
            write.write_text(with_fitted(_shipped_text(c.robot), c), encoding="utf-8")
            typer.echo(f"wrote {write}")
    if json_out:
        typer.echo(json.dumps(out, indent=2, default=str))
    if robot is None and not json_out:
        unmeasured = [r for r in builtin_error_models() if r not in measured_robots()]
        typer.echo(
            "no measurement in their papers identifies "
            + ", ".join(unmeasured)
            + ": their error models are priors, each constant with its source"
            " (config/errors/NAME.toml)"
        )
    if mismatched:
        raise typer.Exit(1)


def _shipped_text(robot: str) -> str:
    from importlib import resources

    return (resources.files("freelook.config.errors") / f"{robot}.toml").read_text("utf-8")


def _print(c: object, problems: list[str]) -> None:
    from freelook.experiments import Calibration

    assert isinstance(c, Calibration)
    m = c.measurement
    typer.echo(f"{c.robot} from {m.name} ({m.source})")
    typer.echo(
        f"  sprocket difference left − right: {c.difference * 100:+.4f} % "
        f"± {c.difference_std * 100:.4f} %"
    )
    typer.echo(f"  ICR spread, both turns:           {c.spread:.6f} ± {c.spread_std:.6f}")
    typer.echo(
        f"  correlation {c.correlation:+.2f}; rms residual {c.rms_deg:.2f}° over "
        f"{len(m.cw) + len(m.ccw)} laps; {c.evaluations} simulations"
    )
    for label, want, got in (("CW ", m.cw, c.fitted_cw), ("CCW", m.ccw, c.fitted_ccw)):
        paper = " ".join(f"{v:+5.1f}" for v in want)
        ours = " ".join(f"{v:+5.1f}" for v in got)
        typer.echo(f"  {label} paper {paper}   fitted {ours}  (deg after each lap)")
    for constant in c.constants:
        typer.echo(f"  {constant.key} = {constant.mean:.6f} ± {constant.std:.2g}")
    if problems:
        typer.echo("  the shipped error model is not this fit:\n    " + "\n    ".join(problems))
    else:
        typer.echo(f"  the shipped config/errors/{c.robot}.toml is this fit")


def register(app: typer.Typer) -> None:
    """Add the ``calibrate`` command to ``app``."""
    app.command("calibrate")(calibrate)
