"""The papers' tables, like for like first: each row with a paper value runs under the paper's
own conditions and carries its target; freelook's improvements follow as rows of their own that
say what differs. Every verdict is computed from the runs."""

from __future__ import annotations

import math
import statistics

from freelook.config import load_robot
from freelook.experiments import _scenarios as sc
from freelook.experiments._ellipse import (
    START_INSIDE,
    THESIS_LOOP,
    EllipseConditions,
    EllipseResult,
    freelook_ellipse_trial,
    thesis_ellipse_trial,
)
from freelook.experiments._packet_drop import (
    AFTER,
    TABLE_7_1,
    LinkTrialResult,
    table_7_1_trial,
)
from freelook.experiments._parallel import map_trials
from freelook.experiments._reckless import (
    LAB_ON_THE_DAY,
    LOOK_AHEAD,
    REACTION_TIME,
    THESIS_WATCHDOG,
    Driver,
    RecklessCondition,
    RecklessResult,
    Safety,
    ZoneRule,
    reckless_trial,
)
from freelook.experiments._result import ExperimentResult, Progress, Row
from freelook.link import DeadRadio, Impairments, RadioWatch

__all__ = [
    "RecklessJob",
    "ellipse_table",
    "flc_figures_table",
    "packet_drop_table",
    "reckless_jobs",
    "reckless_sections",
    "reckless_table",
    "square_laps_table",
    "translation_table",
]


def _seeds(seed: int, trials: int) -> str:
    return f"seed {seed}" if trials == 1 else f"seeds {seed}–{seed + trials - 1}"


#: Ögren 2013 Tables 2–3 after 5 laps, per direction (deg)
LAPS_BAND = {True: (-6.0, -3.0), False: (-1.0, 1.0)}
LAP_SIDE = 2.0


def laps_verdict(done: list[sc.LapsResult], clockwise: bool, like: bool) -> tuple[str, bool]:
    """A laps row's target and whether ``done`` meets it: every lap driven, and the drift
    after 5 laps in the paper's band (a paper row) or under its smallest drift (freelook's)."""
    lo, hi = LAPS_BAND[clockwise]
    driven = bool(done) and all(r.completed(LAP_SIDE) for r in done)
    finals = [r.drifts[-1] for r in done]
    if like:
        target = f"every run in {lo:+.0f}…{hi:+.0f}°, all laps driven"
        return target, driven and all(lo <= d <= hi for d in finals)
    bound = min(abs(lo), abs(hi)) if clockwise else 1.0
    target = f"every run within ±{bound:g}°, all laps driven"
    return target, driven and all(abs(d) < bound for d in finals)


def square_laps_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "square-laps", "Camera heading drift after 5 square laps (2 m)", "Ögren 2013 Tables 2–3", ""
    )
    extra = max(1, min(trials, 3))
    gain = load_robot("foi-ugv").free_look.gain
    variants: list[tuple[str, bool, bool, float, int, bool]] = [
        # label, gyro, laser localization, Free Look gain, trials, like for like
        (
            "the paper's eq. 6, gyro + encoder filter (the FOI UGV's)",
            True,
            False,
            0.0,
            trials,
            True,
        ),
        (
            f"freelook extra: pull {gain:g}/s, gyro + encoders + laser localization",
            True,
            True,
            gain,
            extra,
            False,
        ),
        ("for comparison: eq. 6, encoders only (no filter)", False, False, 0.0, extra, False),
    ]
    result.notes.append(
        "The FOI UGV's error model (config/errors/foi-ugv.toml, docs/belief-and-truth.md) is "
        "calibrated so that the paper's own system lands in Tables 2–3: the identified track "
        "width absorbs the sprockets' common 1.5 %; what is left is the left sprocket 0.05 % "
        "larger than the right and the ICR spread a few tenths of a per cent below the "
        "identified one, turning right a little more than left."
    )
    jobs = [
        (seed + k, clockwise, 5, LAP_SIDE, gyro, laser, "foi-ugv", pull, True, laser)
        for _, gyro, laser, pull, n, _ in variants
        for clockwise in (True, False)
        for k in range(n)
    ]
    runs = iter(map_trials(sc.square_laps_trial, jobs, progress))
    for label, gyro, laser, _, n, like in variants:
        for clockwise in (True, False):
            done: list[sc.LapsResult] = [next(runs) for _ in range(n)]
            finals = [r.drifts[-1] for r in done]
            driven = sum(r.completed(LAP_SIDE) for r in done)
            sensors = "gyro + encoders + laser" if laser else "gyro + encoders, no laser"
            if not gyro:
                sensors = "encoders only, no laser"
            ours = (
                f"{min(finals):+.2f}…{max(finals):+.2f}° (mean {statistics.fmean(finals):+.2f}°), "
                f"{driven} of {n} runs drove all 5 laps"
            )
            target, met = laps_verdict(done, clockwise, like)
            ok: bool | None = met
            if not gyro:  # what the filter is worth: a comparison, not an improvement
                target, ok = "", None
            if laser and ok is False:
                result.notes.append(
                    f"{'CW' if clockwise else 'CCW'} with laser localization misses its "
                    "target: the drift is a step in the first lap, flat after it. The robot "
                    "starts from where it was told it stands (the error model's placing error "
                    "off) and the laser sits turned on its mount (0.7° std, unknown to the "
                    "robot); localization moves the camera's heading onto the map's as seen "
                    "through that laser, once. It does not drift on."
                )
            result.rows.append(
                Row(
                    f"{'CW' if clockwise else 'CCW'}, {label}",
                    ("−3…−6° (Table 2)" if clockwise else "−1…+1° (Table 3)") if like else "",
                    ours,
                    target,
                    ok,
                    f"foi-ugv, {sensors}, square world, under its error model "
                    f"(config/errors/foi-ugv.toml), {_seeds(seed, n)}",
                )
            )
    return result


#: Ögren 2013 Table 4: the offset h of 8 runs (cm) and the distance they ran (about 2 m)
TABLE_4 = (-1.0, 0.0, 10.0, 26.0, 32.0, 25.0, 31.0, 20.0)
MIN_COVERED = 1.6


def translation_verdict(done: list[sc.TranslationResult], like: bool) -> tuple[str, bool]:
    """A Table 4 row's target and whether ``done`` meets it: every run covered its distance,
    and the mean h within the paper's mean ± two standard errors of its 8 runs (a paper row)
    or, on average, under half the paper's mean (freelook's)."""
    paper_mean = statistics.fmean(TABLE_4)
    band = 2 * statistics.stdev(TABLE_4) / math.sqrt(len(TABLE_4))
    driven = bool(done) and min(r.covered for r in done) >= MIN_COVERED
    hs = [r.signed_offset * 100 for r in done]
    if like:
        lo, hi = paper_mean - band, paper_mean + band
        target = (
            f"mean in {lo:.0f}…{hi:.0f} cm (the paper's ± 2 standard errors), every run "
            f"≥ {MIN_COVERED:g} m"
        )
        return target, driven and lo <= statistics.fmean(hs) <= hi
    beat = paper_mean / 2
    target = f"mean |h| < {beat:.0f} cm (half the paper's), every run ≥ {MIN_COVERED:g} m"
    return target, driven and statistics.fmean(abs(h) for h in hs) < beat


def translation_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "translation-offset",
        "Camera offset h over a 2 m forward translation, 90°-turned start",
        "Ögren 2013 Table 4",
        "",
    )
    paper_mean = statistics.fmean(TABLE_4)
    gain = load_robot("foi-ugv").free_look.gain
    laws = [
        # label, open loop, laser, like for like
        ("the paper's eq. 6 (gain 0), gyro + encoders", True, False, True),
        (
            f"freelook extra: pull {gain:g}/s onto the reference, gyro + encoders + laser "
            "localization",
            False,
            True,
            False,
        ),
    ]
    jobs = [
        (seed + k, 2.0, "foi-ugv", open_loop, True, laser)
        for _, open_loop, laser, _ in laws
        for k in range(trials)
    ]
    result.notes.append(
        "The offset comes from the paper's reduced controller d (35 cm against 70) and the "
        "tracks' sideways skid while the chassis turns under the camera; the skid's run-to-run "
        "spread (config/errors/foi-ugv.toml: lateral 0.22 ± 0.3, ICR 5 ± 6 cm ahead of the "
        "axle) is calibrated to Table 4's "
        "spread. h is signed as the paper's: towards where the chassis first faced."
    )
    runs = iter(map_trials(sc.translation_offset_trial, jobs, progress))
    for label, _, laser, like in laws:
        done = [next(runs) for _ in range(trials)]
        hs = [r.signed_offset * 100 for r in done]
        mean = statistics.fmean(hs)
        covered = min(r.covered for r in done)
        target, ok = translation_verdict(done, like)
        ours = (
            f"mean {mean:+.1f} cm, runs {min(hs):+.1f}…{max(hs):+.1f} cm"
            + (f" (std {statistics.stdev(hs):.1f} cm)" if len(hs) > 1 else "")
            + f"; covered {covered:.2f}–{max(r.covered for r in done):.2f} m"
        )
        sensors = "gyro + encoders + laser localization" if laser else "gyro + encoders, no laser"
        result.rows.append(
            Row(
                f"{label}: h over {trials} runs",
                f"mean {paper_mean:.0f} cm, runs −1…32 cm, about 2 m" if like else "",
                ours,
                target,
                ok,
                f"foi-ugv, {sensors}, controller d {load_robot('foi-ugv').drive.d_eff:g} m, "
                f"under its error model (config/errors/foi-ugv.toml), {_seeds(seed, trials)}",
            )
        )
    return result


def flc_figures_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "flc-figures", "Figs. 6–7 on the robot's error model", "Ögren 2013 §4.1", ""
    )
    runs = map_trials(sc.flc_figures_trial, [(seed + k,) for k in range(trials)], progress)
    conditions = (
        "foi-ugv under its error model (config/errors/foi-ugv.toml), robot-side Free Look, "
        f"{_seeds(seed, trials)}"
    )
    result.rows.append(
        Row(
            "Fig. 6: worst deviation from a straight camera segment",
            "qualitative",
            f"{max(s for s, _ in runs) * 1000:.0f} mm per metre",
            conditions=conditions,
        )
    )
    result.rows.append(
        Row(
            "Fig. 7: orbit radius spread",
            "qualitative",
            f"{max(o for _, o in runs) * 1000:.0f} mm",
            conditions=conditions,
        )
    )
    return result


#: the thesis Table 7.2: each ellipse trial's completion time and losses (UI → robot, robot → UI);
#: trial 7 lost 22.17 s to a localization stall of about 4 s past the ellipse's far end
TABLE_7_2 = (
    ("trial 9", 45.0, EllipseConditions(0.001771, 0.00295)),
    ("trial 7", 64.47, EllipseConditions(0.062831, 0.04978, stall_at=0.524)),
    ("trial 4", 42.7, EllipseConditions(0.045317, 0.022063)),
)
#: agreement with the thesis: its completion band, and a mean distance to the curve of the
#: order of its ±30 mm (within a factor of two)
THESIS_TIME_BAND = (42.0, 65.0)
THESIS_ERROR_BAND = (0.015, 0.060)


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
) -> Row:
    """One ellipse row from its runs. Without ``beside`` it is a thesis row, met when every
    run finishes inside the thesis's band with a mean distance to the curve of the order of
    its ±30 mm; with it, a freelook row, met when every run finishes, no later and closer
    (medians) than the thesis's runs ``beside`` it under the same conditions."""
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
    ours = "; ".join(parts)
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


def ellipse_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "ellipse",
        "Ellipse tracking (101 points, T = 40 s) from rest off the curve: one lap round the "
        "centre, distance to the curve once near it",
        "the thesis Table 7.2, §7.1.3, §7.2",
        "",
    )
    jobs = [(seed + k, c) for _, _, c in TABLE_7_2 for k in range(trials)]
    thesis_runs = iter(map_trials(thesis_ellipse_trial, jobs, progress, 0, 2 * len(jobs)))
    ours_runs = iter(map_trials(freelook_ellipse_trial, jobs, progress, len(jobs), 2 * len(jobs)))
    config = load_robot("pioneer3dx")
    gains = config.robot_tracking
    loop = THESIS_LOOP
    for name, paper_time, c in TABLE_7_2:
        radio = (
            f"↑ {c.up_loss * 100:.2f} % ↓ {c.down_loss * 100:.2f} % loss, "
            f"{c.delay * 1000:.0f}–{(c.delay + c.jitter) * 1000:.0f} ms delay"
        )
        stall = (
            f", a {c.stall_seconds:g} s localization stall {c.stall_at * 100:.0f} % of the way "
            "round"
            if c.stall_at is not None
            else ""
        )
        theirs = [next(thesis_runs) for _ in range(trials)]
        ours = [next(ours_runs) for _ in range(trials)]
        result.rows.append(
            ellipse_row(
                f"{name}'s conditions, the thesis's loop",
                f"{paper_time:g} s, ±30 mm",
                theirs,
                f"pioneer3dx from rest {START_INSIDE * 1000:.0f} mm inside the first point, "
                f"{radio}"
                + (f"{stall} (its position packets hold the pose)" if stall else "")
                + "; station: reach-then-advance "
                f"(within {loop.reach * 1000:.0f} mm, "
                f"eq. 6.1's per-point v_r, ω_r), eq. 3.17 with k2 = b·|v_r|, b = {loop.b:g}, "
                f"ξ = {loop.zeta:g}, Alg. 5.3 limits (max 500 mm/s, 50 °/s; min 200 mm/s, 2 °/s); "
                f"thesis packets (mm, °, °/s); robot {loop.robot_cycle * 1000:.0f} ms cycle, "
                f"command one cycle late; {_seeds(seed, trials)}",
            )
        )
        result.rows.append(
            ellipse_row(
                f"freelook extra: {name}'s conditions, tracking on the robot",
                "",
                ours,
                f"pioneer3dx from the same start, {radio}"
                + (f"{stall} (no scan matching: odometry and gyro)" if stall else "")
                + "; the path sent once (native "
                f"profile), tracked on the robot's 20 ms cycle, b = {gains.b:g}, ξ = "
                f"{gains.zeta:g}, clock-driven reference; "
                f"{_seeds(seed, trials)}",
                beside=theirs,
            )
        )
    fast = [r for r in result.rows if r.ok is False and "under" in r.ours]
    if fast:
        result.notes.append(
            "Where the thesis's loop finishes under the thesis's band it is by a second or so: "
            "the loop rolls at Algorithm 5.3's 200 mm/s floor or above all the way round "
            "(eq. 6.1's per-point v_r, 63–113 mm per point, is under it, so the floor sets the "
            "pace), and a 9 m lap at 0.2 m/s takes 45 s, less where the controller asks for "
            "more. The thesis's 42.7 s and 45 s include whatever else slowed its robot; it "
            "reports neither where its robot started nor what else held it back."
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


#: agreement with Table 7.1: each trial's drop within this many binomial σ of the table's
DROP_SIGMAS = 4.0
#: s the robot may take to stand still after its radio died: its watchdog, a cycle, braking
STOP_MARGIN = 0.5


def packet_drop_row(
    label: str,
    paper: str,
    runs: list[LinkTrialResult],
    conditions: str,
    *,
    thesis: bool,
    watchdog: float,
    recovery_bound: float | None = None,
) -> Row:
    """One Table 7.1 row from its trials (several seeds of the table's nine). Both systems
    must measure each trial's drop within :data:`DROP_SIGMAS` of the table's, see every
    failure as a silence and no silence elsewhere, and stand still within ``watchdog`` +
    :data:`STOP_MARGIN` of each radio's death without moving again while it is dead. The
    thesis's row then agrees with the thesis when no failed trial drove again (nothing in its
    system restarts a radio); freelook's when every one drove again within ``recovery_bound``."""
    table = {t.number: t for t in TABLE_7_1}
    # how far each measured drop is from its trial's, in its own binomial σ (the packets a
    # trial sends are finite: a tenth of a trial sends a few hundred), and in points
    sigmas, points = 0.0, 0.0
    for r in runs:
        t = table[r.trial]
        for measured, p, n in (
            (r.drop_up, t.up_loss, r.sent_up),
            (r.drop_down, t.down_loss, r.sent_down),
        ):
            sigma = 100 * math.sqrt(max(p * (1 - p), 1e-4) / max(n, 1))
            sigmas = max(sigmas, abs(measured - 100 * p) / sigma)
            points = max(points, abs(measured - 100 * p))
    failed = [r for r in runs if r.failed]
    seen = sum(r.silent for r in failed)
    false_alarms = sum(r.silent for r in runs if not r.failed)
    stops = [r.stopped_after if r.stopped_after is not None else math.inf for r in failed]
    moved = sum(r.moved_while_dead for r in failed)
    back = [r.drove_again_after for r in failed if r.drove_again_after is not None]
    restarts = sum(r.restarts for r in failed)
    ups = [r.drop_up for r in runs]
    downs = [r.drop_down for r in runs]
    ours = (
        f"drop ↑ {min(ups):.1f}–{max(ups):.1f} % ↓ {min(downs):.1f}–{max(downs):.1f} % "
        f"(each trial within {points:.1f} points, {sigmas:.1f} σ, of the table's); "
        f"{len(failed)} radio deaths injected, {seen} seen as silences, {false_alarms} "
        "elsewhere; stood still "
        + (f"{min(stops):.2f}–{max(stops):.2f} s after" if stops else "—")
        + f", {moved} moved while dead; drove again in {len(back)} of {len(failed)}"
        + (f" ({min(back):.1f}–{max(back):.1f} s after, {restarts} radio restarts)" if back else "")
    )
    safe = (
        sigmas <= DROP_SIGMAS
        and seen == len(failed)
        and false_alarms == 0
        and all(t <= watchdog + STOP_MARGIN for t in stops)
        and moved == 0
    )
    if thesis:
        target = (
            f"drops within {DROP_SIGMAS:g} σ, every death seen, none elsewhere, still "
            f"within {watchdog + STOP_MARGIN:g} s, dead until restarted"
        )
        ok = safe and not back
    else:
        assert recovery_bound is not None
        target = (
            f"drops within {DROP_SIGMAS:g} σ, every death seen, none elsewhere, still "
            f"within {watchdog + STOP_MARGIN:g} s, driving again within {recovery_bound:g} s"
        )
        ok = safe and len(back) == len(failed) and all(t <= recovery_bound for t in back)
    return Row(label, paper, ours, target, ok, conditions)


def packet_drop_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "packet-drop",
        "Table 7.1's trials: drop per direction, radios that die, what the robot does",
        "the thesis Table 7.1, §7.2",
        "",
    )
    # a reduced run shortens each trial to a tenth of its operation time
    scale = 1.0 if trials >= 2 else 0.1
    jobs = [
        (seed + k, t, system, scale)
        for system in ("thesis", "freelook")
        for k in range(trials)
        for t in TABLE_7_1
    ]
    links = [
        ("clean", Impairments()),
        ("10 % loss", Impairments(loss=0.10)),
        ("30 % loss", Impairments(loss=0.30)),
        (
            "bursty ≈ 30 %",
            Impairments(loss=0.1, burst_p_enter=0.05, burst_p_exit=0.15, burst_loss=0.9),
        ),
        ("50 % loss, 250 kbit/s", Impairments(loss=0.5, bandwidth_bps=250_000)),
    ]
    n = len(jobs) + len(links) * trials
    done = map_trials(table_7_1_trial, jobs, progress, 0, n)
    theirs, ours = done[: len(done) // 2], done[len(done) // 2 :]
    failed = ", ".join(str(t.number) for t in TABLE_7_1 if t.node_fail)
    inputs = (
        f"Table 7.1's nine trials, each its own loss each way and operation time"
        f"{' (a tenth of it)' if scale < 1 else ''}, the radio dying at its end in trials "
        f"{failed} (4 deaths an input, not a result; which node dies is drawn), "
        f"{AFTER:g} s run on after; error model pioneer3dx; {_seeds(seed, trials)}"
    )
    config = load_robot("pioneer3dx")
    watch = RadioWatch()
    bound = watch.silence + DeadRadio().boot + 2.0
    result.rows.append(
        packet_drop_row(
            "the thesis's system: thesis profile, 100 ms cycle, < 1 packet/s watchdog, no "
            "radio restart",
            "0.3–53 % drop; node failure in 4 of 9 trials, each needing a restart",
            theirs,
            inputs,
            thesis=True,
            watchdog=1.0,
        )
    )
    result.rows.append(
        packet_drop_row(
            "freelook extra: native profile, 20 ms cycle, "
            f"{config.safety.watchdog_timeout:g} s watchdog, each end restarts its radio after "
            f"{watch.silence:g} s of silence",
            "",
            ours,
            inputs + f"; radio boot {DeadRadio().boot:g} s",
            thesis=False,
            watchdog=config.safety.watchdog_timeout,
            recovery_bound=bound,
        )
    )
    runs = iter(
        map_trials(
            sc.link_course_trial,
            [(seed + k, imp, 30.0) for _, imp in links for k in range(trials)],
            progress,
            len(jobs),
            n,
        )
    )
    for label, _ in links:
        rows = [next(runs) for _ in range(trials)]
        failures = int(sum(r["node_failures"] for r in rows))
        result.rows.append(
            Row(
                f"freelook extra: {label}",
                "",
                f"drop ↑ {statistics.fmean(r['drop_up'] for r in rows):.1f} % "
                f"↓ {statistics.fmean(r['drop_down'] for r in rows):.1f} %, continuity "
                f"{min(r['continuity'] for r in rows) * 100:.1f} %, silences over 1 s {failures}",
                "0 silences",
                failures == 0,
                f"pioneer3dx, no lock-ups, {trials} × 30 s, {_seeds(seed, trials)}",
            )
        )
    return result


#: one reckless trial's arguments: seed, link cut, what the robot knows, seconds, zone rule,
#: safety, operator
RecklessJob = tuple[int, bool, RecklessCondition, float, ZoneRule, Safety, Driver]
#: one section of the reckless experiment: what the robot knows, its zone rule, its safety, its
#: operator, how many trials
RecklessSection = tuple[RecklessCondition, ZoneRule, Safety, Driver, int]


def reckless_sections(trials: int) -> list[RecklessSection]:
    """The reckless experiment's sections: the thesis's operator under the thesis's safety, a
    control run with none (a quarter, at least 4), freelook's safety in each condition and with
    its direction-aware zones (a quarter); then an operator who keeps pushing, under
    freelook's safety."""
    quarter = max(1, trials // 4)
    return [
        (RecklessCondition.SENSORS, "nearest", "thesis", "steering", trials),
        (RecklessCondition.SENSORS, "nearest", "off", "steering", max(4, quarter)),
        (RecklessCondition.SENSORS, "nearest", "freelook", "steering", trials),
        (RecklessCondition.LOCALIZED_MAP, "nearest", "freelook", "steering", trials),
        (RecklessCondition.ODOMETRY_MAP, "nearest", "freelook", "steering", trials),
        (RecklessCondition.SENSORS, "direction", "freelook", "steering", quarter),
        (RecklessCondition.SENSORS, "nearest", "freelook", "pushing", trials),
    ]


def reckless_jobs(trials: int, seed: int) -> list[RecklessJob]:
    """Every trial of :func:`reckless_table`, section by section; the odd ones cut the link."""
    return [
        (seed + k, k % 2 == 1, condition, 20.0, rule, safety, driver)
        for condition, rule, safety, driver, n in reckless_sections(trials)
        for k in range(n)
    ]


def reckless_verdict(done: list[RecklessResult], safety: Safety) -> tuple[str, str, bool]:
    """A reckless row's figures, target and whether ``done`` meets it. With safety (the
    thesis's or freelook's): no collision, no stop later than watchdog + cycle + braking after
    a cut, no robot that cannot be driven out. The control run without safety must collide,
    in at least half its trials (else the scenario tests nothing)."""
    collisions = sum(r.collided for r in done)
    stuck = sum(not r.escaped for r in done)
    late, margin = 0, -math.inf
    for r in done:
        if r.stop_bound is not None:
            stopped = r.stopped_after_cut if r.stopped_after_cut is not None else math.inf
            margin = max(margin, stopped - r.stop_bound)
            late += int(stopped > r.stop_bound)
    impact = max((r.impact_speed for r in done), default=0.0)
    ours = (
        f"{collisions} of {len(done)} collided"
        + (f" (at up to {impact:.2f} m/s)" if collisions else "")
        + f", {late} late"
        + (f" (closest {margin:+.2f} s)" if math.isfinite(margin) else " (no cut)")
        + f", {stuck} stuck"
    )
    if safety == "off":
        return ours, "collisions in ≥ half the trials", bool(done) and 2 * collisions >= len(done)
    return ours, "0, 0, 0", bool(done) and collisions == 0 and late == 0 and stuck == 0


def _pioneer_zone_cap() -> float:
    return load_robot("pioneer3dx").safety.zones[0].max_speed


def reckless_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "reckless",
        "Reckless operator in lab: full speed at walls and into the 0.8 m passage",
        "the thesis §7.1.4",
        "",
    )
    runs = iter(map_trials(reckless_trial, reckless_jobs(trials, seed), progress))
    for condition, rule, safety, driver, n in reckless_sections(trials):
        done: list[RecklessResult] = [next(runs) for _ in range(n)]
        ours, target, ok = reckless_verdict(done, safety)
        if safety == "thesis" and not ok:
            result.notes.append(
                "The thesis's row does not land: an operator who steers away from what is "
                "ahead a reaction time late still reached an obstacle under zones that only "
                f"cap the speed (the innermost, {_pioneer_zone_cap():g} m/s, still moves the "
                "robot)."
            )
        if safety == "freelook" and not ok and done:
            impact = max(r.impact_speed for r in done)
            note = (
                "A freelook row misses its target: its collisions were at up to "
                f"{impact:.2f} m/s (the innermost zone caps {_pioneer_zone_cap():g} m/s): the "
                "robot crept into an obstacle its laser does not see in the lab as it is on "
                "the day (the glass partition, which only the sonar hears, between whose "
                "cones a pane's end can fall). Not improved here: the error model and the "
                "map differences are new, the safety is as it was."
            )
            if note not in result.notes:
                result.notes.append(note)
        if safety == "thesis":
            label = f"the thesis's safety, {condition.value}"
            kind = (
                "the thesis's zones capping the speed (nearest reading all round), "
                f"stop below 1 packet/s ({THESIS_WATCHDOG:g} s)"
            )
        elif safety == "off":
            label = f"control run, no obstacle safety, {condition.value}"
            kind = f"no zones, no approach check; watchdog {THESIS_WATCHDOG:g} s, bumpers"
        else:
            label = f"freelook extra: {condition.value}"
            zones = "the thesis's 360° zones" if rule == "nearest" else "direction-aware zones"
            kind = f"{zones}, approach check, obstacle memory, 0.5 s watchdog"
        if driver == "pushing":
            label += ", an operator who keeps pushing at walls (forwards or backwards)"
            operator = "an operator who keeps pushing, whatever is ahead"
        else:
            operator = (
                "the thesis's operator: full speed, turning away from anything within "
                f"{LOOK_AHEAD:g} m ahead {REACTION_TIME:g} s after the readings show it"
            )
        result.rows.append(
            Row(
                f"{label}: collisions, stops later than watchdog + cycle + braking after a "
                "cut, robots that could not be driven out",
                "no collision in 9 trials" if safety == "thesis" else "",
                ours,
                target,
                ok,
                f"pioneer3dx in lab under its error model (config/errors/pioneer3dx.toml), "
                f"the lab against its map: {LAB_ON_THE_DAY.describe()}; {operator}; {kind}, "
                f"{n} trials "
                f"(half with the link cut), {_seeds(seed, n)}",
            )
        )
    return result
