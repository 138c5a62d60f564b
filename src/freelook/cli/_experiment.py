"""``freelook experiment``: reproduce the papers' experiments, our numbers beside theirs."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

if TYPE_CHECKING:  # the experiments (scipy, the arm, every scenario) load when one runs
    from rich.console import Console

    from freelook.experiments import ExperimentResult

__all__ = ["register", "write_markdown"]


_Name = Annotated[str, typer.Argument(help="Experiment name, or 'all'.")]
_Trials = Annotated[int | None, typer.Option(help="Trials (default: the full count).")]
_Seed = Annotated[int, typer.Option(help="First seed.")]
_Reduced = Annotated[bool, typer.Option(help="The small CI form.")]
_Json = Annotated[bool, typer.Option("--json", help="Print JSON.")]
_Markdown = Annotated[
    Path | None, typer.Option("--markdown", help="Write the tables to this Markdown file.")
]
_World = Annotated[
    str | None,
    typer.Option(help="localization only: a built-in world or a map file to localize in."),
]
_Jobs = Annotated[
    int | None,
    typer.Option(
        min=1, max=64, help="Worker processes sharing the trials (default: one per core)."
    ),
]
_Robot = Annotated[
    str | None, typer.Option(help="arm-fuzz, bomb-disposal: the robot (taros, m2p2).")
]
_Record = Annotated[
    Path | None,
    typer.Option(
        help="arm-fuzz: every trial's joint states; bomb-disposal: the task's phase and the"
        " objects' true poses; into this MCAP file."
    ),
]
_Cluster = Annotated[
    str | None,
    typer.Option(
        help="Run the trials on the workers of the Dask cluster whose scheduler is at"
        " dask://HOST:PORT, in place of --jobs (pip install 'freelook[cluster]')."
    ),
]
_Fault = Annotated[
    str | None,
    typer.Option(
        help="Break the system on purpose to see its rows fail: frozen (wheels turn, the"
        " robot does not move), safety-off, gain-0 (the controllers' gains), arm-frozen (its"
        " guard stops every motion)."
    ),
]


_BySeeds = Annotated[
    bool,
    typer.Option(
        "--by-seeds",
        help="--markdown: write the section under the experiment and its seeds, beside the"
        " sections of its other seeds.",
    ),
]


def experiment(
    name: _Name,
    trials: _Trials = None,
    seed: _Seed = 1,
    reduced: _Reduced = False,
    json_out: _Json = False,
    markdown: _Markdown = None,
    world: _World = None,
    jobs: _Jobs = None,
    robot: _Robot = None,
    record: _Record = None,
    cluster: _Cluster = None,
    fault: _Fault = None,
    by_seeds: _BySeeds = False,
) -> None:
    """Run one experiment (or all) on the lock-step simulator."""
    from contextlib import nullcontext
    from dataclasses import asdict

    from rich.console import Console

    from freelook.experiments import ClusterError, Fault, injected, on_cluster

    names = _names(name, world, robot, record)
    try:
        broken = Fault(fault) if fault is not None else None
    except ValueError:
        known = ", ".join(f.value for f in Fault)
        typer.echo(f"unknown fault {fault!r}; known: {known}", err=True)
        raise typer.Exit(2) from None
    # the figures do not depend on it: each trial is a function of its seed alone
    jobs = jobs if jobs is not None else (os.cpu_count() or 1)
    console = Console(stderr=json_out, width=150)
    try:  # the same rows on a cluster: each trial is a function of its seed alone
        with on_cluster(cluster) if cluster is not None else nullcontext(), injected(broken):
            results = _run(names, console, trials, seed, reduced, world, jobs, robot, record)
    except ClusterError as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    for r in results:
        r.command += f" --fault {broken.value}" if broken is not None else ""
        if by_seeds:
            n = r.details.get("trials", 1)  # a count, or the trials themselves
            last = seed + (n if isinstance(n, int) else len(n) if isinstance(n, list) else 1) - 1
            r.section = f"{r.name} seeds {seed}–{last}" + (f" {broken.value}" if broken else "")
            r.command += " --by-seeds"
    if json_out:
        typer.echo(json.dumps([asdict(r) for r in results], indent=2, default=str))
    else:
        _print_tables(console, results)
    if markdown is not None:
        write_markdown(markdown, results)
    missed = [f"{r.name}: {row.what}" for r in results for row in r.rows if row.ok is False]
    if missed:
        typer.echo("targets missed:\n  " + "\n  ".join(missed), err=True)
        raise typer.Exit(1)


def _names(name: str, world: str | None, robot: str | None, record: Path | None) -> list[str]:
    """The experiments ``name`` stands for, with the options checked against them (one line,
    exit code 2, where they do not go together)."""
    from freelook.errors import FreelookError
    from freelook.experiments import EXPERIMENTS
    from freelook.maps import load_world

    names = list(EXPERIMENTS) if name == "all" else [name]
    unknown = [n for n in names if n not in EXPERIMENTS]
    if unknown:
        typer.echo(f"unknown experiment {unknown[0]!r}; known: {', '.join(EXPERIMENTS)}", err=True)
        raise typer.Exit(2)
    if world is not None:
        if names != ["localization"]:
            typer.echo("--world goes with the localization experiment only", err=True)
            raise typer.Exit(2)
        try:
            load_world(world)
        except FreelookError as err:
            typer.echo(str(err), err=True)
            raise typer.Exit(2) from None
    if (robot is not None or record is not None) and names not in (["arm-fuzz"], ["bomb-disposal"]):
        typer.echo("--robot and --record go with arm-fuzz or bomb-disposal only", err=True)
        raise typer.Exit(2)
    return names


def _run(
    names: list[str],
    console: Console,
    trials: int | None,
    seed: int,
    reduced: bool,
    world: str | None,
    jobs: int,
    robot: str | None,
    record: Path | None,
) -> list[ExperimentResult]:
    """Run each experiment in turn, its progress on a bar of its own."""
    from rich.progress import BarColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

    from freelook.experiments import EXPERIMENTS, localization_experiment, run_experiment

    results = []
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
        console=console,
        transient=True,
    ) as bar:
        for each in names:
            task = bar.add_task(each, total=1)

            def progress(done: int, total: int, task: TaskID = task) -> None:
                bar.update(task, completed=done, total=total)

            if each == "bomb-disposal" and (robot is not None or record is not None):
                results.append(_bomb_disposal(trials, seed, progress, reduced, robot, record, jobs))
            elif robot is not None or record is not None:
                results.append(_arm_fuzz(trials, seed, progress, reduced, robot, record))
            elif world is not None:
                _, full, small = EXPERIMENTS[each]
                n = max(1, trials if trials is not None else (small if reduced else full))
                result = localization_experiment(world, n, seed, progress, jobs)
                result.details["trials"] = n
                results.append(result)
            else:
                results.append(run_experiment(each, trials, seed, progress, reduced, jobs))
    return results


def _print_tables(console: Console, results: list[ExperimentResult]) -> None:
    """Each result as a table, our figures beside the paper's, and the command that made it."""
    from rich.table import Table

    for r in results:
        table = Table(title=f"{r.title} ({r.source})", title_justify="left")
        for column in ("", "paper", "freelook", "target", "ok", "conditions"):
            table.add_column(column)
        for row in r.rows:
            ok = "" if row.ok is None else ("yes" if row.ok else "NO")
            table.add_row(row.what, row.paper, row.ours, row.target, ok, row.conditions)
        console.print(table)
        console.print(f"[dim]{r.command}[/dim]")


def _bomb_disposal(
    trials: int | None,
    seed: int,
    progress: Callable[[int, int], None],
    reduced: bool,
    robot: str | None,
    record: Path | None,
    jobs: int,
) -> ExperimentResult:
    """``bomb-disposal`` on another robot, or recorded."""
    from freelook.experiments import EXPERIMENTS, bomb_disposal

    _, full, small = EXPERIMENTS["bomb-disposal"]
    n = max(1, trials if trials is not None else (small if reduced else full))
    result = bomb_disposal(n, seed, progress, robot or "taros", record=record, jobs=jobs)
    options = f" --robot {robot or 'taros'}" + (f" --record {record}" if record else "")
    result.command = f"freelook experiment bomb-disposal --trials {n} --seed {seed}{options}"
    return result


def _arm_fuzz(
    trials: int | None,
    seed: int,
    progress: Callable[[int, int], None],
    reduced: bool,
    robot: str | None,
    record: Path | None,
) -> ExperimentResult:
    """``arm-fuzz`` on another robot's arm, or recorded."""
    from freelook.errors import FreelookError
    from freelook.experiments import EXPERIMENTS, arm_fuzz

    _, full, small = EXPERIMENTS["arm-fuzz"]
    n = max(1, trials if trials is not None else (small if reduced else full))
    try:
        result = arm_fuzz(n, seed, progress, robot or "taros", record=record)
    except (FreelookError, ValueError) as err:
        typer.echo(str(err), err=True)
        raise typer.Exit(2) from None
    options = f" --robot {robot}" if robot else ""
    options += f" --record {record}" if record else ""
    result.command = f"freelook experiment arm-fuzz --trials {n} --seed {seed}{options}"
    result.details["trials"] = n
    return result


_HEADER = [
    "# Results: the papers' experiments on the freelook simulator",
    "",
    "Generated by `freelook experiment all --markdown docs/results.md` (one experiment's "
    "section is rewritten in place by `freelook experiment NAME --markdown docs/results.md`). "
    "Each table puts the paper's figure beside ours, with the command that produced it. A row "
    "with a paper value runs under the paper's own conditions and carries the target; "
    "freelook's improvements are extra rows that say what differs.",
    "",
    "Sections whose title names their seeds (`--by-seeds`) ran on seeds 501–510 and 901–910, "
    "which no model or constant was ever set on: each trial is listed beside the paper's, and "
    "a row that misses says so with its numbers. The FOI UGV's sprocket difference and ICR "
    "spread are fitted to Tables 2–3 by `freelook calibrate foi-ugv` (docs/belief-and-truth.md); "
    "every other constant of the error models names its source in config/errors/. "
    "`--fault frozen|safety-off|gain-0|arm-frozen` breaks the system on purpose, to see the "
    "rows that judge what was broken fail (tests/experiments/test_faults.py asserts they do).",
    "",
]


def _section(result: ExperimentResult) -> list[str]:
    key = result.section or result.name
    seeds = f" ({key.removeprefix(result.name).strip()})" if result.section else ""
    lines = [
        f"<!-- experiment: {key} -->",
        f"## {result.title}{seeds}",
        "",
        f"Source: {result.source}. Command: `{result.command}`",
        "",
        "| | paper | freelook | target | met | conditions |",
        "|---|---|---|---|---|---|",
    ]
    for row in result.rows:
        ok = "" if row.ok is None else ("yes" if row.ok else "**no**")
        lines.append(
            f"| {row.what} | {row.paper} | {row.ours} | {row.target} | {ok} | {row.conditions} |"
        )
    for note in result.notes:
        lines += ["", f"Note: {note}"]
    for table in result.trials:
        lines += ["", f"{table.title}:", "", "| " + " | ".join(table.header) + " |"]
        lines.append("|" + "---|" * len(table.header))
        lines += ["| " + " | ".join(line) + " |" for line in table.lines]
    return [*lines, ""]


def write_markdown(path: Path, results: list[ExperimentResult]) -> None:
    """Write ``results`` into ``path``: each experiment's section replaced where it stands,
    new ones appended, the others kept."""
    sections: dict[str, list[str]] = {}
    order: list[str] = []
    if path.exists():
        current: str | None = None
        for line in path.read_text().splitlines():
            if line.startswith("<!-- experiment: "):
                current = line.removeprefix("<!-- experiment: ").removesuffix(" -->")
                order.append(current)
                sections[current] = []
            elif current is not None:
                sections[current].append(line)
    for result in results:
        key = result.section or result.name
        if key not in sections:
            order.append(key)
        sections[key] = _section(result)[1:]
    lines = list(_HEADER)
    for name in order:
        body = sections[name]
        while body and not body[-1].strip():
            body = body[:-1]
        # one blank line closes each section: a table runs on into the next line otherwise
        lines += [f"<!-- experiment: {name} -->", *body, ""]
    path.write_text("\n".join(lines).rstrip("\n") + "\n")


class _ExperimentHelp(TyperCommand):
    """``experiment``'s help lists the experiments of the registry, each with its trials; it
    is read only when the help is asked for (the registry loads every experiment)."""

    def format_help(self, ctx: Any, formatter: Any) -> None:  # typer's own click types
        from freelook.experiments import EXPERIMENTS

        listed = "\n".join(
            f"- {name}: {full} trials ({reduced} with --reduced)"
            for name, (_, full, reduced) in EXPERIMENTS.items()
        )
        base = (self.help or "").split("\n\nExperiments:", 1)[0]
        self.help = f"{base}\n\nExperiments:\n\n{listed}"
        super().format_help(ctx, formatter)


def register(app: typer.Typer) -> None:
    """Add the ``experiment`` command to ``app``."""
    app.command("experiment", cls=_ExperimentHelp)(experiment)
