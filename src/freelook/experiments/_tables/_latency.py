"""The latency experiment's table: each cockpit at each one-way delay, judged, and the cockpits
that help beside the plain one at 1 s."""

from __future__ import annotations

import itertools
import math
import statistics

from freelook.experiments._latency import (
    COURSE,
    DELAYS,
    LIFETIME,
    OFFER_ROUND_TRIP,
    TIME_LIMIT,
    Cockpit,
    LatencyConditions,
    LatencyResult,
    latency_trial,
)
from freelook.experiments._parallel import map_trials
from freelook.experiments._reckless_operator import REACTION_TIME
from freelook.experiments._result import ExperimentResult, Progress, Row, TrialTable
from freelook.experiments._tables._format import seed_range

__all__ = ["COCKPITS", "latency_jobs", "latency_table"]

#: the cockpits, the plain one first and the control without expiry last
COCKPITS: tuple[Cockpit, ...] = (
    "plain",
    "prediction",
    "prediction+speed",
    "click-to-go",
    "plain-no-expiry",
)
#: s: the one-way delay at which the cockpits that help are set beside the plain one
COMPARED_AT = 1.0
_COURSE_LENGTH = sum(math.dist(a, b) for a, b in itertools.pairwise(COURSE))
_WHAT = {
    "plain": "plain cockpit (the newest report, as it was a delay ago)",
    "prediction": "prediction (the robot where a command sent now lands)",
    "prediction+speed": "prediction, the robot's speed fitted to its round trip",
    "click-to-go": f"click-to-go over a {OFFER_ROUND_TRIP:g} s round trip, else prediction + speed",
    "plain-no-expiry": "control: plain cockpit, commands without expiry",
}


def conditions_at(delay: float) -> LatencyConditions:
    """The link at one-way ``delay``: 0.1 s jitter (none at 0), 5 % loss each way, bursts."""
    return LatencyConditions(delay, jitter=0.1 if delay > 0 else 0.0)


def latency_jobs(trials: int, seed: int) -> list[tuple[int, Cockpit, LatencyConditions]]:
    """Every trial, cockpit by cockpit and delay by delay, seeds ``seed`` on for each."""
    return [
        (seed + k, cockpit, conditions_at(delay))
        for cockpit in COCKPITS
        for delay in DELAYS
        for k in range(trials)
    ]


def _time(r: LatencyResult) -> float:
    """A run's completion time, the time limit for one not done."""
    return r.done_in if r.done_in is not None else TIME_LIMIT


def _figures(done: list[LatencyResult]) -> str:
    finished = [r.done_in for r in done if r.done_in is not None]
    late = sum(r.late_acted for r in done)
    arrived = sum(r.late_arrived for r in done)
    return (
        f"{len(finished)} of {len(done)} done"
        + (f" (median {statistics.median(finished):.0f} s)" if finished else "")
        + f"; from the course {statistics.mean(r.mean_error for r in done):.2f} m on average, "
        f"{max(r.max_error for r in done):.2f} m at most; {sum(r.collided for r in done)} "
        f"collided; {statistics.median(r.stops for r in done):g} stops (median); "
        f"{late} late commands acted on of {arrived} late"
    )


def _verdict(cockpit: Cockpit, done: list[LatencyResult]) -> tuple[str, bool]:
    if cockpit == "plain-no-expiry":
        drove = all(r.travelled >= _COURSE_LENGTH / 2 for r in done)
        ok = drove and any(r.late_acted for r in done)
        return "late commands acted on, every robot driving half the course or more", ok
    ok = all(r.done_in is not None and not r.collided and r.late_acted == 0 for r in done)
    return f"all done within {TIME_LIMIT:g} s, 0 collided, 0 late acted on", ok


def _beats(ours: list[LatencyResult], plain: list[LatencyResult]) -> tuple[str, bool]:
    """Whether ``ours`` beat the plain cockpit: a lower median time (a run not done counts as
    the time limit) and no more collisions."""
    mine, theirs = statistics.median(map(_time, ours)), statistics.median(map(_time, plain))
    hits, plain_hits = sum(r.collided for r in ours), sum(r.collided for r in plain)
    text = (
        f"median {mine:.0f} s against plain's {theirs:.0f} s (not done: {TIME_LIMIT:g} s); "
        f"{hits} collided against plain's {plain_hits}"
    )
    return text, mine < theirs and hits <= plain_hits


def latency_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "latency",
        "Driving through delay: the thesis's operator on a course through the 0.8 m passage",
        "ours: five cockpits through one link model; published figures as context, not like "
        "for like",
        "",
    )
    runs = iter(map_trials(latency_trial, latency_jobs(trials, seed), progress))
    done = {
        (cockpit, delay): [next(runs) for _ in range(trials)]
        for cockpit in COCKPITS
        for delay in DELAYS
    }
    link = (
        "pioneer3dx in lab under its error model, freelook's safety; the native link on the "
        "virtual clock (authenticated sessions, the station's clock from the robot's echoes, "
        f"commands expiring {LIFETIME:g} s past their expected arrival), 0.1 s jitter (none at "
        "0), 5 % loss each way, bursts (every 20 s on average the link stalls for 1 s and "
        "delivers what it held at once); the thesis's operator (its keys, a "
        f"{REACTION_TIME:g} s reaction to the display, steering 1 m ahead on the course; ours "
        "where the thesis is silent: experiments/_latency.py), "
        f"{_COURSE_LENGTH:.1f} m through the passage; {seed_range(seed, trials)}"
    )
    for cockpit in COCKPITS:
        for delay in DELAYS:
            runs_here = done[(cockpit, delay)]
            target, ok = _verdict(cockpit, runs_here)
            result.rows.append(
                Row(
                    f"{_WHAT[cockpit]}, {delay:g} s one way",
                    "",
                    _figures(runs_here),
                    target,
                    ok,
                    link,
                )
            )
    plain = done[("plain", COMPARED_AT)]
    for cockpit in ("prediction", "prediction+speed", "click-to-go"):
        ours, ok = _beats(done[(cockpit, COMPARED_AT)], plain)
        result.rows.append(
            Row(
                f"{_WHAT[cockpit]} beside the plain cockpit, {COMPARED_AT:g} s one way",
                "predictive displays and the committed path cut task time under delay "
                "(Davis et al. 2010; Cardinaels et al. 2026): context, not like for like",
                ours,
                "a shorter median time, no more collisions",
                ok,
                link,
            )
        )
    result.trials.append(_by_delay(done, trials))
    result.notes += [
        "The course, the operator and the link were fixed before these rows were run. The "
        "operator is the reckless experiment's thesis operator (its keys and reaction time, "
        "its passage driver's aim); the cockpit decides only what its display shows, and the "
        "robot's own safety (zones, approach check, obstacle memory, watchdog) runs in each. "
        "A run not done by the time limit counts as the time limit in the comparisons.",
        "Late commands are judged by the truth of each packet's time through the link "
        "(later than the delay, the jitter and the lifetime): with expiry the robot refuses "
        "each of them (its own count is the 'late refused' in the JSON); the control row "
        "shows what the bursts' queued commands do without it.",
    ]
    return result


def _by_delay(done: dict[tuple[Cockpit, float], list[LatencyResult]], trials: int) -> TrialTable:
    """Completion by delay: each cockpit's runs done and their median time."""
    table = TrialTable(
        f"Runs done of {trials} and their median time, by one-way delay", ["one way", *COCKPITS]
    )
    for delay in DELAYS:
        line = [f"{delay:g} s"]
        for cockpit in COCKPITS:
            finished = [r.done_in for r in done[(cockpit, delay)] if r.done_in is not None]
            median = f", {statistics.median(finished):.0f} s" if finished else ""
            line.append(f"{len(finished)}{median}")
        table.lines.append(line)
    return table
