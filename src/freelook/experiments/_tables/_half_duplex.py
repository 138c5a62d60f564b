"""Table 7.1's trials through the thesis's radio link as built (the half-duplex model): each
trial's drop each way and its node failure are the model's, judged against the table's."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

from freelook.experiments._packet_drop import (
    AFTER,
    CALIBRATION_TRIAL,
    TABLE_7_1,
    THESIS_FRAMES,
    LinkTrial,
    LinkTrialResult,
    calibrated_lock_per_collision,
    table_7_1_trial,
)
from freelook.experiments._parallel import map_trials
from freelook.experiments._result import Progress, Row, TrialTable
from freelook.experiments._tables._format import seed_range
from freelook.link import HalfDuplexRadio

__all__ = ["drop_met", "half_duplex_rows", "model_row"]

#: a trial's drop agrees with the table's within this many binomial σ (of the packets the
#: trial sent), as the table's own rows were judged
DROP_SIGMAS = 4.0
#: s the robot may take to stand still after its radio died: its watchdog, a cycle, braking
STOP_MARGIN = 0.5
#: the share of the operator's commanded distance a trial's robot must truly drive
DRIVEN_SHARE = 0.5


def drop_met(measured: float, table: float, sent: int) -> bool:
    """Whether a drop (%) agrees with the table's (a fraction) within :data:`DROP_SIGMAS`."""
    sigma = 100 * math.sqrt(max(table * (1 - table), 1e-4) / max(sent, 1))
    return abs(measured - 100 * table) <= DROP_SIGMAS * sigma


def _median(direction: str) -> str:
    losses = [t.up_loss if direction == "up" else t.down_loss for t in TABLE_7_1]
    return f"{100 * statistics.median(losses):.1f}"


def _drops_met(r: LinkTrialResult, t: LinkTrial) -> tuple[bool, bool]:
    return drop_met(r.drop_up, t.up_loss, r.sent_up), drop_met(
        r.drop_down, t.down_loss, r.sent_down
    )


def model_row(
    label: str,
    paper: str,
    runs: Sequence[LinkTrialResult],
    conditions: str,
    *,
    thesis: bool,
    watchdog: float,
    recovery_bound: float | None = None,
) -> Row:
    """A row of trials through the half-duplex model. The thesis's system is judged against
    the table: each trial's drop each way within :data:`DROP_SIGMAS`, its node failure as the
    table's; both systems must see every death as a silence, stand still within ``watchdog``
    + :data:`STOP_MARGIN` of it without moving while dead, and drive each trial's course
    (:data:`DRIVEN_SHARE`); the thesis's stays dead, freelook's drives again within
    ``recovery_bound``."""
    table = {t.number: t for t in TABLE_7_1}
    ups = sum(_drops_met(r, table[r.trial])[0] for r in runs)
    downs = sum(_drops_met(r, table[r.trial])[1] for r in runs)
    failures = sum(r.failed == table[r.trial].node_fail for r in runs)
    died = [r for r in runs if r.failed]
    seen = sum(r.silent for r in died)
    stops = [r.stopped_after if r.stopped_after is not None else math.inf for r in died]
    moved = sum(r.moved_while_dead for r in died)
    back = [r.drove_again_after for r in died if r.drove_again_after is not None]
    lazy = sum(r.driven < DRIVEN_SHARE * r.commanded for r in runs)
    up = [r.drop_up for r in runs]
    down = [r.drop_down for r in runs]
    which = sorted({r.trial for r in died})
    higher = sum(r.drop_up > r.drop_down for r in runs)
    ours = (
        f"drop ↑ {min(up):.1f}–{max(up):.1f} % ↓ {min(down):.1f}–{max(down):.1f} %, median "
        f"↑ {statistics.median(up):.1f} % ↓ {statistics.median(down):.1f} % (the table's "
        f"↑ {_median('up')} % ↓ {_median('down')} %), ↑ above ↓ in {higher} of {len(runs)} "
        f"(the table's {sum(t.up_loss > t.down_loss for t in TABLE_7_1)} of {len(TABLE_7_1)})"
        + (
            f"; drop as the table's (within {DROP_SIGMAS:g} σ) in ↑ {ups} and ↓ {downs} of "
            f"{len(runs)} trials; node failure as the table's in {failures} of {len(runs)}"
            if thesis
            else ""
        )
        + f"; {len(died)} lock-ups (trials {', '.join(map(str, which)) or '—'}), {seen} seen as "
        "silences; stood still "
        + (f"{min(stops):.2f}–{max(stops):.2f} s after" if stops else "—")
        + f", {moved} moved while dead; drove again in {len(back)} of {len(died)}"
        + (f" ({min(back):.1f}–{max(back):.1f} s after)" if back else "")
        + f"; {lazy} of {len(runs)} trials drove under {DRIVEN_SHARE:.0%} of the commanded distance"
    )
    safe = (
        seen == len(died)
        and all(t <= watchdog + STOP_MARGIN for t in stops)
        and moved == 0
        and lazy == 0
    )
    still = f"every death seen, still within {watchdog + STOP_MARGIN:g} s"
    if thesis:
        target = (
            f"each trial's drop each way within {DROP_SIGMAS:g} σ of the table's and its node "
            f"failure as the table's; {still}, dead until restarted, each trial driven"
        )
        ok = safe and not back and ups == downs == failures == len(runs)
    else:
        assert recovery_bound is not None
        target = f"{still}, driving again within {recovery_bound:g} s, each trial driven"
        ok = safe and len(back) == len(died) and all(t <= recovery_bound for t in back)
    return Row(label, paper, ours, target, ok, conditions)


def _conditions(seed: int, trials: int, scale: float, p: float, rate: float) -> str:
    radio = HalfDuplexRadio()
    up, down = THESIS_FRAMES
    trial = TABLE_7_1[CALIBRATION_TRIAL - 1]
    return (
        "the thesis's link as built (§4.3, §5, §6.1, §7.2): two half-duplex IEEE 802.15.4 "
        f"nodes, {radio.air_bps / 1000:g} kbit/s on the air, {radio.baud:g} baud serial, "
        f"{radio.overhead} B of PHY and MAC framing; each host sends on its own Windows "
        f"{radio.tick * 1000:.3f} ms timer (wake-up jitter 0–{radio.jitter * 1000:g} ms, clock "
        f"±{radio.clock_ppm:g} ppm, phases drawn per trial), the robot every 31 ms, the "
        "station every 47 ms; no listening before talking: frames on the air together (within "
        f"{radio.turnaround * 1e6:.0f} µs) are both lost; a collision locks the node whose "
        f"frame came second with p = {p:.5f}, calibrated on trial {CALIBRATION_TRIAL} alone "
        f"(one failure after {trial.operation_time:g} s over the model's mean {rate:.2f} "
        f"collisions/s at {up} B up, {down} B down); drops and node failures are the model's; "
        "each trial its operation time"
        f"{' (a tenth of it)' if scale < 1 else ''}, a lock-up ending it {AFTER:g} s later; "
        f"error model pioneer3dx; {seed_range(seed, trials)}"
    )


def half_duplex_rows(
    trials: int, seed: int, progress: Progress, done: int, total: int
) -> tuple[list[Row], TrialTable]:
    """Table 7.1's nine trials ``trials`` times through the half-duplex model under the
    thesis's system: its row, and each trial beside the table's. A reduced run (one trial
    each) shortens each to a tenth of its operation time."""
    scale = 1.0 if trials >= 2 else 0.1
    p, rate = calibrated_lock_per_collision()
    jobs = [
        (seed + k, t, "thesis", scale, "half-duplex", p) for k in range(trials) for t in TABLE_7_1
    ]
    runs = map_trials(table_7_1_trial, jobs, progress, done, total)
    failed = ", ".join(str(t.number) for t in TABLE_7_1 if t.node_fail)
    row = model_row(
        "the thesis's system through the thesis's radio link (half-duplex collisions): "
        "thesis profile, 100 ms cycle, < 1 packet/s watchdog, no radio restart",
        f"drop ↑ 0.3–26.4 % ↓ 2.5–53.4 %; node failure in trials {failed} (4 of 9), "
        "each needing a restart",
        runs,
        _conditions(seed, trials, scale, p, rate),
        thesis=True,
        watchdog=1.0,
    )
    return [row], _trials(runs, seed)


def _death(r: LinkTrialResult) -> str:
    if r.died_at is None:
        return ""
    still = f"still {r.stopped_after:.2f} s after" if r.stopped_after is not None else "never still"
    again = (
        f", drove again {r.drove_again_after:.1f} s after"
        if r.drove_again_after is not None
        else ""
    )
    return f"at {r.died_at:.1f} s, {still}{again}"


def _trials(runs: list[LinkTrialResult], seed: int) -> TrialTable:
    """Each trial's drop each way and its node failure beside Table 7.1's."""
    table = {t.number: t for t in TABLE_7_1}
    lines = []
    for k, a in enumerate(runs):
        t = table[a.trial]
        up, down = _drops_met(a, t)
        lines.append(
            [
                f"{t.number}",
                f"seed {seed + k // len(TABLE_7_1)}",
                f"{100 * t.up_loss:.2f} / {100 * t.down_loss:.2f} %",
                f"{a.drop_up:.2f} / {a.drop_down:.2f} %",
                f"{'yes' if up else '**no**'} / {'yes' if down else '**no**'}",
                "yes" if t.node_fail else "no",
                "yes" if a.failed else "no",
                "yes" if a.failed == t.node_fail else "**no**",
                f"{a.collisions / a.span:.2f}" if a.span > 0 else "—",
                _death(a),
                f"{a.driven:.0f} / {a.commanded:.0f} m",
            ]
        )
    return TrialTable(
        "Each trial through the half-duplex link beside Table 7.1's (drop ↑ UI → robot / "
        "↓ robot → UI, until the trial's end or its node's failure)",
        [
            "trial",
            "run",
            "paper drop",
            "thesis's system drop",
            "drop met",
            "paper node failure",
            "node failure",
            "met",
            "collisions/s",
            "after the radio's death",
            "driven / commanded (thesis's)",
        ],
        lines,
    )
