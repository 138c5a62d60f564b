"""The thesis's ellipse table (Table 7.2, §7.1.3, §7.2): the thesis's loop under each trial's
conditions, and freelook's tracking on the robot beside it."""

from __future__ import annotations

import dataclasses
import math
import statistics
from typing import Literal

from freelook.config import load_robot
from freelook.experiments._ellipse import (
    START_INSIDE,
    THESIS_LOOP,
    EllipseConditions,
    EllipseResult,
    freelook_ellipse_trial,
    thesis_ellipse_trial,
)
from freelook.experiments._mixed_modes import ELLIPSE_LOSSES
from freelook.experiments._parallel import map_trials
from freelook.experiments._result import ExperimentResult, Progress, Row, TrialTable
from freelook.experiments._tables._format import seed_range

__all__ = [
    "TABLE_7_2",
    "THESIS_MAX_ERROR",
    "TIME_TOLERANCE",
    "ellipse_row",
    "ellipse_table",
    "in_time",
    "on_curve",
]


#: the thesis Table 7.2: each ellipse trial's completion time and losses (UI → robot, robot → UI,
#: :data:`ELLIPSE_LOSSES`); trial 7 lost 22.17 s to a localization stall of about 4 s past the
#: ellipse's far end
TABLE_7_2 = (
    ("trial 9", 45.0, EllipseConditions(*ELLIPSE_LOSSES[9])),
    ("trial 7", 64.47, EllipseConditions(*ELLIPSE_LOSSES[7], stall_at=0.524)),
    ("trial 4", 42.7, EllipseConditions(*ELLIPSE_LOSSES[4])),
)
#: whose tracking a row judges: the thesis's loop at the station, or freelook's on the robot
System = Literal["thesis", "freelook"]
#: s: a run agrees with its Table 7.2 trial when it finishes within this of the trial's time:
#: the thesis's own scatter, the difference between its two trials without a stall (trial 9,
#: 45 s, and trial 4, 42.7 s, whose losses differ by a few per cent)
TIME_TOLERANCE = abs(TABLE_7_2[0][1] - TABLE_7_2[2][1])
#: m: §8.1's maximum error, "±30 mm", the distance to the curve no run may exceed once on it
#: (outside the detours with a named cause, the stall's and the 360°→0° jump's, which the
#: thesis's Fig. 7.6 shows apart and which are reported)
THESIS_MAX_ERROR = 0.030


def _spread(values: list[float], unit: str, scale: float = 1.0, digits: int = 1) -> str:
    """min–max (median) of the values."""
    v = sorted(x * scale for x in values)
    return f"{v[0]:.{digits}f}–{v[-1]:.{digits}f} {unit} (median {statistics.median(v):.{digits}f})"


def _figures(runs: list[EllipseResult]) -> str:
    """What the runs did: lap times, distances to the curve, detours."""
    done = [r.completion_time for r in runs if r.completion_time is not None]
    unfinished = len(runs) - len(done)
    means = [r.mean_distance for r in runs if math.isfinite(r.mean_distance)]
    parts = [_spread(done, "s") if done else "none finished"]
    if unfinished:
        parts.append(f"{unfinished} of {len(runs)} never finished")
    if means:
        p95 = max(r.p95_distance for r in runs if math.isfinite(r.p95_distance))
        worst = max(r.max_distance for r in runs if math.isfinite(r.max_distance))
        parts.append(
            f"on the curve: mean {_spread(means, 'mm', 1000, 0)}, 95 % within "
            f"{p95 * 1000:.0f} mm, worst {worst * 1000:.0f} mm"
        )
    else:
        parts.append("never near the curve")
    detours = [r for r in runs if r.stalls]
    if detours:
        parts.append(
            f"stall detours {_spread([r.detour_seconds for r in detours], 's')}, out to "
            f"{max(r.detour_worst for r in detours) * 1000:.0f} mm"
        )
    crossings = [r for r in runs if r.crossing_seconds > 0]
    if crossings:
        parts.append(
            f"360°→0° detours {_spread([r.crossing_seconds for r in crossings], 's')}, out to "
            f"{max(r.crossing_worst for r in crossings) * 1000:.0f} mm"
        )
    return "; ".join(parts)


def in_time(run: EllipseResult, paper_time: float, system: System) -> bool:
    """Whether ``run`` finished as its Table 7.2 trial did: the thesis's loop within
    :data:`TIME_TOLERANCE` of the trial's time, freelook's no later than it."""
    t = run.completion_time
    if t is None:
        return False
    if system == "thesis":
        return abs(t - paper_time) <= TIME_TOLERANCE
    return t <= paper_time


def on_curve(run: EllipseResult) -> bool:
    """Whether ``run`` stayed within §8.1's ±30 mm of the curve once on it."""
    return math.isfinite(run.max_distance) and run.max_distance <= THESIS_MAX_ERROR


def ellipse_row(
    label: str,
    paper: str,
    runs: list[EllipseResult],
    conditions: str,
    *,
    paper_time: float,
    system: System = "thesis",
    judged: bool = True,
) -> Row:
    """One ellipse row from its runs, each judged against its Table 7.2 trial's own time
    ``paper_time`` (:func:`in_time`) and §8.1's ±30 mm maximum (:func:`on_curve`): met when
    every run is both. Not ``judged``: the figures alone, a comparison without a target."""
    ours = _figures(runs)
    if not judged:
        return Row(label, paper, ours, conditions=conditions)
    timely = sum(in_time(r, paper_time, system) for r in runs)
    close = sum(on_curve(r) for r in runs)
    when = (
        f"within ±{TIME_TOLERANCE:.1f} s of {paper_time:g} s"
        if system == "thesis"
        else f"by {paper_time:g} s"
    )
    ours += (
        f" — {timely} of {len(runs)} finished {when}, {close} of {len(runs)} stayed within "
        f"{THESIS_MAX_ERROR * 1000:.0f} mm of the curve"
    )
    target = (
        f"every run finished {when}, never more than {THESIS_MAX_ERROR * 1000:.0f} mm "
        "from the curve (§8.1)"
    )
    ok = timely == len(runs) and close == len(runs)
    return Row(label, paper, ours, target, ok, conditions)


def _radio(c: EllipseConditions) -> str:
    return (
        f"↑ {c.up_loss * 100:.2f} % ↓ {c.down_loss * 100:.2f} % loss, "
        f"{c.delay * 1000:.0f}–{(c.delay + c.jitter) * 1000:.0f} ms delay"
    )


def _stall(c: EllipseConditions) -> str:
    if c.stall_at is None:
        return ""
    return f", a {c.stall_seconds:g} s localization stall {c.stall_at * 100:.0f} % of the way round"


def _start(c: EllipseConditions) -> str:
    if c.start == "thesis":
        return "pioneer3dx from rest at the thesis's (0, 0, 0), the ellipse's centre facing +x"
    return f"pioneer3dx from rest {START_INSIDE * 1000:.0f} mm inside the first point"


def _thesis_conditions(c: EllipseConditions, seeds: str) -> str:
    loop, stall = THESIS_LOOP, _stall(c)
    return (
        f"{_start(c)}, {_radio(c)}"
        + (f"{stall} (its position packets hold the pose)" if stall else "")
        + f"; station: reach-then-advance (within {loop.reach * 1000:.0f} mm, eq. 6.1's "
        f"per-point v_r, ω_r), eq. 3.17 with k2 = b·|v_r|, b = {loop.b:g}, ξ = {loop.zeta:g}, "
        "Alg. 5.3 limits (max 500 mm/s, 50 °/s; min 200 mm/s, 2 °/s); thesis packets (mm, °, "
        f"°/s); robot {loop.robot_cycle * 1000:.0f} ms cycle, command one cycle late; {seeds}"
    )


def _freelook_conditions(c: EllipseConditions, seeds: str) -> str:
    gains, stall = load_robot("pioneer3dx").robot_tracking, _stall(c)
    return (
        f"pioneer3dx from the same start, {_radio(c)}"
        + (f"{stall} (no scan matching: odometry and gyro)" if stall else "")
        + "; the path sent once (native profile), tracked on the robot's 20 ms cycle, "
        f"b = {gains.b:g}, ξ = {gains.zeta:g}, clock-driven reference; {seeds}"
    )


def _time(r: EllipseResult) -> str:
    return f"{r.completion_time:.2f} s" if r.completion_time is not None else "never"


def _distance(r: EllipseResult) -> str:
    return f"{r.max_distance * 1000:.0f} mm" if math.isfinite(r.max_distance) else "never on it"


def _agrees(r: EllipseResult, paper_time: float, system: System) -> str:
    return "yes" if in_time(r, paper_time, system) and on_curve(r) else "**no**"


def _trials(
    name: str, paper_time: float, theirs: list[EllipseResult], ours: list[EllipseResult], seed: int
) -> TrialTable:
    """Each run's lap time and largest distance to the curve beside Table 7.2's and §8.1's."""
    lines = [["paper (Table 7.2, §8.1)", f"{paper_time:g} s", "±30 mm max", "", "", "", ""]]
    for k, (a, b) in enumerate(zip(theirs, ours, strict=True)):
        lines.append(
            [
                f"seed {seed + k}",
                _time(a),
                _distance(a),
                _agrees(a, paper_time, "thesis"),
                _time(b),
                _distance(b),
                _agrees(b, paper_time, "freelook"),
            ]
        )
    return TrialTable(
        f"{name}'s conditions, each run beside the thesis's (agrees: the thesis's loop within "
        f"±{TIME_TOLERANCE:.1f} s of the trial's time, freelook's by it, both within "
        f"{THESIS_MAX_ERROR * 1000:.0f} mm of the curve)",
        [
            "run",
            "thesis's loop: time",
            "max from the curve",
            "agrees",
            "freelook: time",
            "max from the curve",
            "agrees",
        ],
        lines,
    )


def ellipse_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    """Over 80 lines: a table's rows and notes, declared in the order the report prints them."""
    result = ExperimentResult(
        "ellipse",
        "Ellipse tracking (101 points, T = 40 s) from the thesis's start at rest: one lap "
        "round the centre, distance to the curve once near it",
        "the thesis Table 7.2, §7.1.3, §7.2, §8.1",
        "",
    )
    table = [(name, t, dataclasses.replace(c, start="thesis")) for name, t, c in TABLE_7_2]
    jobs = [(seed + k, c) for _, _, c in table for k in range(trials)]
    wrapped = dataclasses.replace(THESIS_LOOP, heading_difference="wrapped")
    first = table[0][2]
    fixed_jobs = [(seed + k, first, wrapped) for k in range(trials)]
    inside_jobs = [(seed + k, dataclasses.replace(first, start="inside")) for k in range(trials)]
    total = 2 * len(jobs) + len(fixed_jobs) + len(inside_jobs)
    thesis_runs = iter(map_trials(thesis_ellipse_trial, jobs, progress, 0, total))
    ours_runs = iter(map_trials(freelook_ellipse_trial, jobs, progress, len(jobs), total))
    done = 2 * len(jobs)
    fixed_runs = map_trials(thesis_ellipse_trial, fixed_jobs, progress, done, total)
    done += len(fixed_jobs)
    inside_runs = map_trials(thesis_ellipse_trial, inside_jobs, progress, done, total)
    seeds = seed_range(seed, trials)
    for name, paper_time, c in table:
        theirs = [next(thesis_runs) for _ in range(trials)]
        ours = [next(ours_runs) for _ in range(trials)]
        result.trials.append(_trials(name, paper_time, theirs, ours, seed))
        result.rows.append(
            ellipse_row(
                f"{name}'s conditions, the thesis's loop",
                f"{paper_time:g} s, ±30 mm",
                theirs,
                _thesis_conditions(c, seeds),
                paper_time=paper_time,
            )
        )
        if name == table[0][0]:
            result.rows.append(
                ellipse_row(
                    f"for comparison: {name}'s conditions, the thesis's loop with its headings "
                    "wrapped (the fix §7.2 expects to save about 2 s)",
                    "",
                    fixed_runs,
                    f"as the thesis's loop's row, e_θ wrapped to ±180°; {seeds}",
                    paper_time=paper_time,
                    judged=False,
                )
            )
            result.rows.append(
                ellipse_row(
                    f"for comparison: {name}'s conditions, the thesis's loop from "
                    f"{START_INSIDE * 1000:.0f} mm inside the first point, facing along the path "
                    "(a start of ours)",
                    "",
                    inside_runs,
                    f"as the thesis's loop's row but for the start; {seeds}",
                    paper_time=paper_time,
                    judged=False,
                )
            )
        result.rows.append(
            ellipse_row(
                f"freelook extra: {name}'s conditions, tracking on the robot",
                "",
                ours,
                _freelook_conditions(c, seeds),
                paper_time=paper_time,
                system="freelook",
            )
        )
    result.notes.append(
        "Each run is judged against its own Table 7.2 trial: the thesis's loop must finish "
        f"within ±{TIME_TOLERANCE:.1f} s of the trial's time (the thesis's own scatter: its two "
        "trials without a stall, 45 and 42.7 s) and freelook's by it; both must stay within "
        "§8.1's ±30 mm of the curve once a tenth of the way round (the start's distance to the "
        "curve is the controller's to close before). The lap is timed from the start at rest, "
        "the thesis's (0, 0, 0) at the ellipse's centre, 1.8 m from the first point."
    )
    result.notes.append(
        "The thesis's loop rolls at Algorithm 5.3's 200 mm/s floor or above (eq. 6.1's "
        "per-point v_r, 63–113 mm per point, is under it, so the floor sets the pace): a 9 m "
        "lap at 0.2 m/s takes 45 s, less where the controller asks for more. The thesis's own "
        "defect (§7.1.3, Fig. 7.6) is modelled: its station subtracted headings held in "
        "0…360°, so where the heading crosses 0° the difference jumps by a turn and the robot "
        "swerves off the curve (the 360°→0° detour). The comparison row wraps the difference "
        "as §7.2 proposes. The distance to the curve counts outside the detours, as the "
        "thesis's figure shows its gaps apart; each detour's length and worst distance are "
        "given in its row."
    )
    stalled = [r for r in result.rows if "stall" in r.conditions and "thesis's loop" in r.what]
    if stalled:
        result.notes.append(
            "The thesis lost 22.17 s to its 4 s stall. The thesis does not say how its robot "
            "came back, only that the controller was correcting the path meanwhile; how far "
            "this generator's robot strays and how it rejoins depend on its reach rule (a "
            "target passed within 30 cm counts as reached), which the thesis does not give."
        )
    return result
