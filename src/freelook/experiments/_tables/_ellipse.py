"""The thesis's ellipse table (Table 7.2, §7.1.3, §7.2): the thesis's loop under each trial's
conditions, and freelook's tracking on the robot beside it."""

from __future__ import annotations

import dataclasses
import math
import statistics

from freelook.config import load_robot
from freelook.experiments._ellipse import (
    START_INSIDE,
    THESIS_LOOP,
    EllipseConditions,
    EllipseResult,
    freelook_ellipse_trial,
    thesis_ellipse_trial,
)
from freelook.experiments._parallel import map_trials
from freelook.experiments._result import ExperimentResult, Progress, Row, TrialTable
from freelook.experiments._tables._format import seed_range

__all__ = ["TABLE_7_2", "ellipse_row", "ellipse_table"]


#: the thesis Table 7.2: each ellipse trial's completion time and losses (UI → robot, robot → UI);
#: trial 7 lost 22.17 s to a localization stall of about 4 s past the ellipse's far end
TABLE_7_2 = (
    ("trial 9", 45.0, EllipseConditions(0.001771, 0.00295)),
    ("trial 7", 64.47, EllipseConditions(0.062831, 0.04978, stall_at=0.524)),
    ("trial 4", 42.7, EllipseConditions(0.045317, 0.022063)),
)
#: agreement with the thesis: its completion band, and a mean distance to the curve of the
#: order of §8.1's ±30 mm (half to three times). §8.1 gives ±30 mm as the error its minimum
#: speeds make inevitable, a floor rather than a measurement, and its Fig. 7.6 shows the
#: 360°→0° gaps on top of it; the time between such a gap and the robot back near the curve
#: is measured apart, the slower rejoining after it counts
THESIS_TIME_BAND = (42.0, 65.0)
THESIS_ERROR_BAND = (0.015, 0.090)


def _spread(values: list[float], unit: str, scale: float = 1.0, digits: int = 1) -> str:
    """min–max (median) of the values."""
    v = sorted(x * scale for x in values)
    return f"{v[0]:.{digits}f}–{v[-1]:.{digits}f} {unit} (median {statistics.median(v):.{digits}f})"


def ellipse_row(
    label: str,
    paper: str,
    runs: list[EllipseResult],
    conditions: str,
    *,
    beside: list[EllipseResult] | None = None,
    judged: bool = True,
) -> Row:
    """One ellipse row from its runs. Without ``beside`` it is a thesis row, met when every
    run finishes inside the thesis's band with a mean distance to the curve of the order of
    its ±30 mm; with it, a freelook row, met when every run finishes, no later and closer
    (medians) than the thesis's runs ``beside`` it under the same conditions. Not ``judged``:
    the figures alone, a comparison without a target."""
    done = [r.completion_time for r in runs if r.completion_time is not None]
    unfinished = len(runs) - len(done)
    means = [r.mean_distance for r in runs if math.isfinite(r.mean_distance)]
    parts = [_spread(done, "s") if done else "none finished"]
    if unfinished:
        parts.append(f"{unfinished} of {len(runs)} never finished")
    if means:
        parts.append(
            f"on the curve: mean {_spread(means, 'mm', 1000, 0)}, 95 % within "
            f"{max(r.p95_distance for r in runs if math.isfinite(r.p95_distance)) * 1000:.0f} mm"
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
    ours = "; ".join(parts)
    if not judged:
        return Row(label, paper, ours, conditions=conditions)
    if beside is None:
        lo, hi = THESIS_TIME_BAND
        elo, ehi = THESIS_ERROR_BAND
        target = f"{lo:g}–{hi:g} s, mean {elo * 1000:.0f}–{ehi * 1000:.0f} mm"
        misses = []
        if unfinished or len(means) < len(runs):
            misses.append(f"{unfinished} laps never finished")
        if any(t < lo for t in done):
            misses.append(f"{sum(t < lo for t in done)} laps under {lo:g} s")
        if any(t > hi for t in done):
            misses.append(f"{sum(t > hi for t in done)} laps over {hi:g} s")
        if any(e < elo for e in means):
            misses.append(
                f"{sum(e < elo for e in means)} runs closer than {elo * 1000:.0f} mm on average"
            )
        if any(e > ehi for e in means):
            misses.append(
                f"{sum(e > ehi for e in means)} runs further than {ehi * 1000:.0f} mm on average"
            )
        ok = not misses
        if misses:
            ours += " — outside the thesis's band: " + "; ".join(misses)
    else:
        theirs = [r.completion_time or math.inf for r in beside]
        their_means = [r.mean_distance for r in beside]
        target = "finishes, no later and closer than the thesis's loop (medians)"
        ok = (
            not unfinished
            and len(means) == len(runs)
            and statistics.median(done) <= statistics.median(theirs)
            and statistics.median(means) < statistics.median(their_means)
        )
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


def _thesis_conditions(c: EllipseConditions, seeds: str) -> str:
    loop, stall = THESIS_LOOP, _stall(c)
    return (
        f"pioneer3dx from rest {START_INSIDE * 1000:.0f} mm inside the first point, {_radio(c)}"
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


def _trials(
    name: str, paper_time: float, theirs: list[EllipseResult], ours: list[EllipseResult], seed: int
) -> TrialTable:
    """Each run's lap time and largest distance to the curve beside Table 7.2's and §8.1's."""
    lines = [["paper (Table 7.2, §8.1)", f"{paper_time:g} s", "±30 mm max", "", ""]]
    for k, (a, b) in enumerate(zip(theirs, ours, strict=True)):
        lines.append(
            [
                f"seed {seed + k}",
                _time(a),
                f"{a.max_distance * 1000:.0f} mm",
                _time(b),
                f"{b.max_distance * 1000:.0f} mm",
            ]
        )
    return TrialTable(
        f"{name}'s conditions, each run beside the thesis's",
        [
            "run",
            "thesis's loop: time",
            "max from the curve",
            "freelook: time",
            "max from the curve",
        ],
        lines,
    )


def ellipse_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "ellipse",
        "Ellipse tracking (101 points, T = 40 s) from rest off the curve: one lap round the "
        "centre, distance to the curve once near it",
        "the thesis Table 7.2, §7.1.3, §7.2",
        "",
    )
    jobs = [(seed + k, c) for _, _, c in TABLE_7_2 for k in range(trials)]
    wrapped = dataclasses.replace(THESIS_LOOP, heading_difference="wrapped")
    fixed_jobs = [(seed + k, TABLE_7_2[0][2], wrapped) for k in range(trials)]
    total = 2 * len(jobs) + len(fixed_jobs)
    thesis_runs = iter(map_trials(thesis_ellipse_trial, jobs, progress, 0, total))
    ours_runs = iter(map_trials(freelook_ellipse_trial, jobs, progress, len(jobs), total))
    fixed_runs = map_trials(thesis_ellipse_trial, fixed_jobs, progress, 2 * len(jobs), total)
    seeds = seed_range(seed, trials)
    for name, paper_time, c in TABLE_7_2:
        theirs = [next(thesis_runs) for _ in range(trials)]
        ours = [next(ours_runs) for _ in range(trials)]
        result.trials.append(_trials(name, paper_time, theirs, ours, seed))
        result.rows.append(
            ellipse_row(
                f"{name}'s conditions, the thesis's loop",
                f"{paper_time:g} s, ±30 mm",
                theirs,
                _thesis_conditions(c, seeds),
            )
        )
        if name == TABLE_7_2[0][0]:
            result.rows.append(
                ellipse_row(
                    f"for comparison: {name}'s conditions, the thesis's loop with its headings "
                    "wrapped (the fix §7.2 expects to save about 2 s)",
                    "",
                    fixed_runs,
                    f"as the thesis's loop's row, e_θ wrapped to ±180°; {seeds}",
                    judged=False,
                )
            )
        result.rows.append(
            ellipse_row(
                f"freelook extra: {name}'s conditions, tracking on the robot",
                "",
                ours,
                _freelook_conditions(c, seeds),
                beside=theirs,
            )
        )
    result.notes.append(
        "The thesis's loop rolls at Algorithm 5.3's 200 mm/s floor or above all the way round "
        "(eq. 6.1's per-point v_r, 63–113 mm per point, is under it, so the floor sets the "
        "pace): a 9 m lap at 0.2 m/s takes 45 s, less where the controller asks for more. "
        "What brings it into the thesis's band is the thesis's own defect (§7.1.3, Fig. 7.6): "
        "its station subtracted headings held in 0…360°, so where the heading crosses 0° the "
        "difference jumps by a turn and the robot swerves off the curve (the 360°→0° detour). "
        "The comparison row wraps the difference as §7.2 proposes; the difference between the "
        "two is the time §7.2 expects the fix to save (about 2 s). The distance to the curve "
        "counts outside the detours, as the thesis's figure shows its gaps apart; the loop's "
        "weak sideways gain (k2 = b·|v_r| with eq. 6.1's per-point v_r) rejoins slowly after "
        "one, so most of the mean comes from the last quarter of the lap."
    )
    stalled = [r for r in result.rows if "stall" in r.conditions and "thesis's loop" in r.what]
    if stalled:
        result.notes.append(
            "The thesis lost 22.17 s to its 4 s stall; here the same stall costs the thesis's "
            "loop a few seconds (its row's detour, until the robot is back within 10 cm of the "
            "curve). The thesis does not say how its robot came back, only that the controller "
            "was correcting the path meanwhile; how far this generator's robot strays and how "
            "it rejoins depend on its reach rule (a target passed within 30 cm counts as "
            "reached), which the thesis does not give."
        )
    return result
