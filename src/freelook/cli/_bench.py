"""``freelook bench``: run named benchmarks and report ratios against same-run baselines."""

from __future__ import annotations

import json
from pathlib import Path
from types import ModuleType
from typing import Annotated

import typer

__all__ = ["load_cases", "register"]


def load_cases() -> tuple[ModuleType, ...]:
    """Import every package's benchmark cases; each registers its own with freelook.bench."""
    from freelook.arm import bench_cases as arm
    from freelook.experiments import bench_cases as experiments
    from freelook.hardware import bench_cases as hardware
    from freelook.kinematics import bench_cases as kinematics
    from freelook.launch import bench_cases as launch
    from freelook.link import bench_cases as link
    from freelook.operator import bench_cases as operator
    from freelook.record import bench_cases as record
    from freelook.safety import bench_cases as safety
    from freelook.sim import bench_cases as sim
    from freelook.video import bench_cases as video

    return (
        arm,
        experiments,
        hardware,
        kinematics,
        launch,
        link,
        operator,
        record,
        safety,
        sim,
        video,
    )


def _fmt(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale:
            return f"{seconds / scale:.3g} {unit}"
    return f"{seconds / 1e-9:.3g} ns"


def _target(seconds: float | None, ratio: float | None) -> str:
    parts = [] if seconds is None else [_fmt(seconds)]
    if ratio is not None:
        parts.append(f"≤ {ratio:g}× baseline")
    return ", ".join(parts) or "-"


def bench(
    names: Annotated[
        list[str] | None, typer.Argument(help="Benchmark names or prefixes (default: all).")
    ] = None,
    json_out: Annotated[Path | None, typer.Option("--json", help="Write results as JSON.")] = None,
    min_time: Annotated[float, typer.Option(help="Seconds to time each side at least.")] = 0.5,
    list_only: Annotated[bool, typer.Option("--list", help="List benchmarks and exit.")] = False,
    soak_minutes: Annotated[
        float, typer.Option(help="Simulated minutes of the memory soak (the long form: 30).")
    ] = 10.0,
) -> None:
    """Run benchmarks: median time per operation and speed-up over a same-run baseline."""
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from freelook.bench import BenchOptions, iter_selected, run_case

    load_cases()
    options = BenchOptions(soak_minutes=soak_minutes)
    selected = list(iter_selected(names or []))
    if list_only:
        for name, _ in selected:
            typer.echo(name)
        return
    if not selected:
        typer.echo(f"no benchmark matches {names}", err=True)
        raise typer.Exit(2)
    results = []
    with Progress(transient=True) as progress:
        task = progress.add_task("benchmarks", total=len(selected))
        for name, factory in selected:
            progress.update(task, description=name)
            results.append(run_case(name, factory(options), min_time=min_time))
            progress.advance(task)
    table = Table(title="freelook bench")
    for column in (
        "benchmark",
        "median/op",
        "p95/op",
        "baseline/op",
        "speed-up",
        "target",
        "ok",
        "extra",
    ):
        table.add_column(column)
    for r in results:
        ok = "" if r.meets_target is None else ("yes" if r.meets_target else "NO")
        extra = ", ".join(f"{k}={v:.4g}" for k, v in r.extra.items())
        table.add_row(
            r.name,
            _fmt(r.median_s),
            _fmt(r.p95_s),
            _fmt(r.baseline_median_s),
            "-" if r.speedup is None else f"{r.speedup:.1f}×",
            r.target_label or _target(r.target_s, r.max_baseline_ratio),
            ok,
            extra,
        )
    Console(width=160).print(table)
    if json_out is not None:
        json_out.write_text(json.dumps([r.as_dict() for r in results], indent=2) + "\n")


def register(app: typer.Typer) -> None:
    """Add the ``bench`` command to ``app``."""
    app.command("bench")(bench)
