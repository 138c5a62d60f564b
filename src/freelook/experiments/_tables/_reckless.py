"""The reckless operator's table (the thesis §7.1.4): its sections, its jobs, its verdicts."""

from __future__ import annotations

import math
import statistics
from typing import NamedTuple

from freelook.config import load_robot
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
from freelook.experiments._tables._format import seed_range

__all__ = [
    "RecklessJob",
    "RecklessVerdict",
    "reckless_jobs",
    "reckless_sections",
    "reckless_table",
    "reckless_verdict",
]


#: one reckless trial's arguments: seed, link cut, what the robot knows, seconds, zone rule,
#: safety, operator
RecklessJob = tuple[int, bool, RecklessCondition, float, ZoneRule, Safety, Driver]
#: one section of the reckless experiment: what the robot knows, its zone rule, its safety, its
#: operator, how many trials
RecklessSection = tuple[RecklessCondition, ZoneRule, Safety, Driver, int]


def reckless_sections(trials: int) -> list[RecklessSection]:
    """The reckless experiment's sections: the thesis's operator under the thesis's safety, a
    control run with none (as many trials, so the two rates compare), freelook's safety in
    each condition and with its direction-aware zones (a quarter); then an operator who keeps
    pushing, under freelook's safety."""
    quarter = max(1, trials // 4)
    return [
        (RecklessCondition.SENSORS, "nearest", "thesis", "steering", trials),
        (RecklessCondition.SENSORS, "nearest", "off", "steering", trials),
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


class RecklessVerdict(NamedTuple):
    """A reckless row's figures, its target, and whether the runs meet it."""

    ours: str
    target: str
    met: bool


def reckless_verdict(done: list[RecklessResult], safety: Safety) -> RecklessVerdict:
    """A reckless row's figures, target and whether ``done`` meets it. With safety (the
    thesis's or freelook's): no collision, no wheel seen turning later than watchdog + cycle +
    braking after a cut (at the looks, a control cycle apart), no robot that cannot be driven
    out. The control run without safety must collide in at least a quarter of its trials
    (else the scenario tests nothing: the thesis's operator steers away from walls, and
    without zones reaches one in about 45 % of the trials, 44 of 100 on seeds 301–400)."""
    collisions = sum(r.collided for r in done)
    stuck = sum(not r.escaped for r in done)
    late, margin = 0, -math.inf
    for r in done:
        if r.stop_bound is not None:
            # late: a look after the bound saw a wheel turning (the looks are a cycle apart)
            moving = r.moving_after_cut if r.moving_after_cut is not None else -math.inf
            stopped = moving if r.stopped_after_cut is not None else math.inf
            margin = max(margin, stopped - r.stop_bound)
            late += int(stopped > r.stop_bound)
    impact = max((r.impact_speed for r in done), default=0.0)
    stops = [r.stopped_after_cut for r in done if r.stopped_after_cut is not None]
    ours = (
        f"{collisions} of {len(done)} collided"
        + (f" (at up to {impact:.2f} m/s)" if collisions else "")
        + f", {late} late"
        + (f" (closest {margin:+.2f} s)" if math.isfinite(margin) else " (no cut)")
        + f", {stuck} stuck"
        + (f"; standing {statistics.median(stops):.2f} s after a cut (median)" if stops else "")
    )
    if safety == "off":
        return RecklessVerdict(
            ours,
            "collisions in ≥ a quarter of the trials",
            bool(done) and 4 * collisions >= len(done),
        )
    return RecklessVerdict(
        ours, "0, 0, 0", bool(done) and collisions == 0 and late == 0 and stuck == 0
    )


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
                "the thesis's operator: having seen where the robot stands, full speed, "
                f"turning away from anything within {LOOK_AHEAD:g} m ahead "
                f"{REACTION_TIME:g} s after the readings show it"
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
                f"(half with the link cut), {seed_range(seed, n)}",
            )
        )
    return result
