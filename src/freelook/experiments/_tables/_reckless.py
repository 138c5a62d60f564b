"""The reckless operator's table (the thesis §7.1.4): its sections, its jobs, its verdicts."""

from __future__ import annotations

import math
import statistics
from typing import Literal, NamedTuple

from freelook.experiments._mixed_modes import GIVE_UP
from freelook.experiments._parallel import map_trials
from freelook.experiments._reckless import (
    LAB_ON_THE_DAY,
    THESIS_TRIALS,
    THESIS_WATCHDOG,
    Driver,
    RecklessCondition,
    RecklessResult,
    Safety,
    ZoneRule,
    reckless_trial,
)
from freelook.experiments._reckless_operator import (
    AHEAD_HALF_ANGLE,
    CLOSE_AHEAD,
    KEY_RATE,
    LOOK_AHEAD,
    REACTION_TIME,
)
from freelook.experiments._result import ExperimentResult, Progress, Row, TrialTable
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
#: safety, operator, Table 7.1's trial (0: ours)
RecklessJob = tuple[int, bool, RecklessCondition, float, ZoneRule, Safety, Driver, int]
#: whose trials a section runs: the thesis's (Table 7.1's nine, or its one drive through the
#: passage) or our seeded set
Protocol = Literal["thesis", "ours"]
#: one section of the reckless experiment: what the robot knows, its zone rule, its safety, its
#: operator, whose trials, how many
RecklessSection = tuple[RecklessCondition, ZoneRule, Safety, Driver, Protocol, int]

_S = RecklessCondition.SENSORS


def reckless_sections(trials: int) -> list[RecklessSection]:
    """The reckless experiment's sections: the thesis's trials (Table 7.1's nine, then the
    drive through the narrow passage) under the thesis's safety as printed, corrected, none
    and freelook's; then our seeded sets of ``trials`` the same ways, freelook's safety in each
    condition and with its direction-aware zones (a quarter), an operator who keeps pushing,
    and the passage."""
    quarter = max(1, trials // 4)
    nine = len(THESIS_TRIALS)
    return [
        (_S, "nearest", "printed", "steering", "thesis", nine),
        (_S, "nearest", "thesis", "steering", "thesis", nine),
        (_S, "nearest", "off", "steering", "thesis", nine),
        (_S, "nearest", "freelook", "steering", "thesis", nine),
        (_S, "nearest", "printed", "passage", "thesis", 1),
        (_S, "nearest", "thesis", "passage", "thesis", 1),
        (_S, "nearest", "freelook", "passage", "thesis", 1),
        (_S, "nearest", "printed", "steering", "ours", trials),
        (_S, "nearest", "thesis", "steering", "ours", trials),
        (_S, "nearest", "off", "steering", "ours", trials),
        (_S, "nearest", "freelook", "steering", "ours", trials),
        (RecklessCondition.LOCALIZED_MAP, "nearest", "freelook", "steering", "ours", trials),
        (RecklessCondition.ODOMETRY_MAP, "nearest", "freelook", "steering", "ours", trials),
        (_S, "direction", "freelook", "steering", "ours", quarter),
        (_S, "nearest", "freelook", "pushing", "ours", trials),
        (_S, "nearest", "printed", "passage", "ours", trials),
        (_S, "nearest", "thesis", "passage", "ours", trials),
        (_S, "nearest", "freelook", "passage", "ours", trials),
    ]


def reckless_jobs(trials: int, seed: int) -> list[RecklessJob]:
    """Every trial of :func:`reckless_table`, section by section: Table 7.1's trial k on seed
    + k − 1; ours from ``seed`` on, the odd ones cutting the link (not the passage's)."""
    return [
        (
            seed + k,
            protocol == "ours" and driver != "passage" and k % 2 == 1,
            condition,
            20.0,
            rule,
            safety,
            driver,
            k + 1 if protocol == "thesis" and driver == "steering" else 0,
        )
        for condition, rule, safety, driver, protocol, n in reckless_sections(trials)
        for k in range(n)
    ]


class RecklessVerdict(NamedTuple):
    """A reckless row's figures, its target, and whether the runs meet it."""

    ours: str
    target: str
    met: bool


def _late(done: list[RecklessResult]) -> tuple[int, float]:
    """Trials a look after the bound saw a wheel turning (the looks are a cycle apart) and the
    closest margin to the bound."""
    late, margin = 0, -math.inf
    for r in done:
        if r.stop_bound is not None:
            moving = r.moving_after_cut if r.moving_after_cut is not None else -math.inf
            stopped = moving if r.stopped_after_cut is not None else math.inf
            margin = max(margin, stopped - r.stop_bound)
            late += int(stopped > r.stop_bound)
    return late, margin


def _no_margin(done: list[RecklessResult]) -> str:
    """Why a row has no closest margin: no cut, or every robot already standing when the
    link died (against what it had run into) before its watchdog tripped."""
    if any(r.stopped_after_cut is not None for r in done):
        return " (standing when the link died)"
    return " (no cut)"


def reckless_verdict(
    done: list[RecklessResult], safety: Safety, driver: Driver = "steering"
) -> RecklessVerdict:
    """A reckless row's figures, target and whether ``done`` meets it. With safety (the
    thesis's or freelook's): no collision, no wheel seen turning later than watchdog + cycle +
    braking after a cut (at the looks, a control cycle apart), no robot that cannot be driven
    out; through the passage, each drive through it with a zone acting (the thesis's Figs.
    7.8–7.9). The control run without safety must collide in at least a quarter of its trials
    (else the scenario tests nothing)."""
    collisions = sum(r.collided for r in done)
    impact = max((r.impact_speed for r in done), default=0.0)
    hit = f"{collisions} of {len(done)} collided" + (
        f" (at up to {impact:.2f} m/s)" if collisions else ""
    )
    if driver == "passage":
        # the drive's own contacts: the manoeuvres out after it, blind, are not the thesis's
        in_drive = sum(r.collided_in_run for r in done)
        after = collisions - in_drive
        through = sum(r.through for r in done)
        zoned = sum(r.zone_acted for r in done)
        speed = max((r.passage_speed for r in done), default=0.0)
        ours = (
            f"{through} of {len(done)} through, {in_drive} of {len(done)} collided in the drive"
            + (f" (at up to {impact:.2f} m/s)" if in_drive else "")
            + (f", {after} more backing out after it" if after else "")
            + f", a zone acted in {zoned}"
            + (f"; in the passage at up to {speed:.2f} m/s" if through else "")
        )
        ok = bool(done) and through == zoned == len(done) and in_drive == 0
        return RecklessVerdict(ours, "all through, 0 collided, a zone acting in each", ok)
    stuck = sum(not r.escaped for r in done)
    late, margin = _late(done)
    stops = [r.stopped_after_cut for r in done if r.stopped_after_cut is not None]
    ours = (
        hit
        + f", {late} late"
        + (f" (closest {margin:+.2f} s)" if math.isfinite(margin) else _no_margin(done))
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


_SAFETY = {
    "printed": (
        "the thesis's safety, Algorithm 5.1 as printed",
        "Algorithm 5.1 as printed: B2 tested first, so every reading within B2 (1.2 m) caps at "
        "B2's 0.35 m/s, 40 °/s and the inner zones never act; nearest reading all round; stop "
        f"below 1 packet/s ({THESIS_WATCHDOG:g} s)",
    ),
    "thesis": (
        "freelook: the thesis's safety with Algorithm 5.1's erratum corrected",
        "Algorithm 5.1 corrected (DESIGN.md's erratum: the innermost zone tested first, so Min "
        f"caps at 0.1 m/s within 0.6 m, B1 0.2 m/s within 0.9 m); otherwise as printed (nearest "
        f"reading all round, stop below 1 packet/s, {THESIS_WATCHDOG:g} s)",
    ),
    "off": (
        "control run, no obstacle safety",
        f"no zones, no approach check; watchdog {THESIS_WATCHDOG:g} s, bumpers",
    ),
}

_OPERATOR = {
    "steering": (
        "the thesis's operator (ours where the thesis is silent: docs in "
        "experiments/_reckless_operator.py): the newest position packet that arrived (pose, 35 "
        "laser readings, the 8 rear sonars; the thesis's Table 5.6) seen "
        f"{REACTION_TIME:g} s after it came (Green 2000), manual control's keys (20 mm/s, 2 °/s "
        f"a step, {KEY_RATE:g} repeats/s, space to stop; at most 500 mm/s, 50 °/s: §5.3.1, "
        f"§6.1); full speed, turning away from a reading within {LOOK_AHEAD:g} m and "
        f"±{math.degrees(AHEAD_HALF_ANGLE):g}° ahead, on the spot within {CLOSE_AHEAD:g} m; no "
        "look before driving off"
    ),
    "passage": (
        "the thesis's operator driving through the 0.8 m passage from the hall by the pose on "
        "the map (its packets and keys as in the wandering rows; aiming 1 m ahead on the "
        "passage's centre line, ω wanted 2 × the bearing: ours)"
    ),
    "pushing": "an operator who keeps pushing, whatever is ahead (ours)",
}


def _label(safety: Safety, condition: RecklessCondition, rule: ZoneRule) -> tuple[str, str]:
    if safety in _SAFETY:
        return _SAFETY[safety]
    zones = "the thesis's 360° zones" if rule == "nearest" else "direction-aware zones"
    return (
        f"freelook extra: {condition.value}",
        f"{zones}, approach check, obstacle memory, 0.5 s watchdog",
    )


def _trials_text(driver: Driver, protocol: Protocol, seed: int, n: int) -> str:
    if protocol == "thesis" and driver == "steering":
        return (
            "Table 7.1's 9 trials, each from the lab's start at rest for its operation time "
            "(140–433 s) at its losses each way, mixing modes (§7.2): first the thesis's "
            "station round its ellipse (trials 4, 7, 9, at Table 7.2's losses) or linear drive "
            "forward, back, forward over 3 m (the others: ours), then the keys; the radio "
            "dying at the end of trials 1, 2, 6, 7 (its node failures; 5 s more to stop), "
            f"{seed_range(seed, n)}"
        )
    if protocol == "thesis":
        return f"the thesis's one drive through the narrow passage, {seed_range(seed, n)}"
    if driver == "passage":
        return (
            f"{n} drives from the hall 2–4 m before the passage, off its line by up to 0.3 m "
            f"and 17°, {seed_range(seed, n)}"
        )
    return f"{n} random starts, 20 s each (half with the link cut), {seed_range(seed, n)}"


def _what(
    safety: Safety, condition: RecklessCondition, rule: ZoneRule, driver: Driver, protocol: Protocol
) -> str:
    label, _ = _label(safety, condition, rule)
    whose = "the thesis's trials" if protocol == "thesis" else "our seeded set"
    if driver == "passage":
        return f"{label}, {whose}: through the narrow passage, collisions, a zone acting"
    if driver == "pushing":
        label += ", an operator who keeps pushing at walls (forwards or backwards)"
    return (
        f"{label}, {whose}: collisions, stops later than watchdog + cycle + braking after a "
        "cut, robots that could not be driven out"
    )


def _paper(safety: Safety, driver: Driver, protocol: Protocol) -> str:
    if safety != "printed" or protocol != "thesis":
        return ""
    if driver == "passage":
        return "driven through the narrow part, the zones reacting, no collision (§7.1.4, §8.1)"
    return "no collision in 9 trials, the radio failing in 4 (§7.1.4, §7.2, Table 7.1)"


def _contacts(done: list[RecklessResult]) -> str:
    places = [r.first_contact for r in done if r.first_contact is not None]
    return ", ".join(f"({x:.1f}, {y:.1f})" for x, y in places)


def reckless_table(trials: int, seed: int, progress: Progress) -> ExperimentResult:
    result = ExperimentResult(
        "reckless",
        "Reckless operator in lab: full speed at walls and into the 0.8 m passage",
        "the thesis §7.1.4, §5.2.1 (Algorithm 5.1), §5.3.1, Table 5.6, Table 7.1",
        "",
    )
    runs = iter(map_trials(reckless_trial, reckless_jobs(trials, seed), progress))
    table = TrialTable(
        "The thesis's 9 trials (Table 7.1), each beside the thesis's (no collision in any)",
        [
            "trial",
            "operation time",
            "losses ↑ / ↓",
            "node fail",
            "first",
            "as printed",
            "corrected",
            "no safety",
            "freelook",
        ],
    )
    for condition, rule, safety, driver, protocol, n in reckless_sections(trials):
        done: list[RecklessResult] = [next(runs) for _ in range(n)]
        ours, target, ok = reckless_verdict(done, safety, driver)
        if protocol == "thesis" and driver == "steering":
            _fill(table, done, safety)
        where = _contacts(done)
        _, kind = _label(safety, condition, rule)
        result.rows.append(
            Row(
                _what(safety, condition, rule, driver, protocol),
                _paper(safety, driver, protocol),
                ours + (f"; first contacts at (x, y) m: {where}" if where else ""),
                target,
                ok,
                f"pioneer3dx in lab under its error model (config/errors/pioneer3dx.toml), "
                f"the lab against its map: {LAB_ON_THE_DAY.describe()}; {_OPERATOR[driver]}; "
                f"{kind}; {_trials_text(driver, protocol, seed, n)}",
            )
        )
    result.trials.append(table)
    result.notes += _notes()
    return result


def _fill(table: TrialTable, done: list[RecklessResult], safety: Safety) -> None:
    """One column of the nine trials' table: whether each trial collided, and where."""
    column = {"printed": 5, "thesis": 6, "off": 7, "freelook": 8}[safety]
    if not table.lines:
        for k, (up, down, fail, time) in enumerate(THESIS_TRIALS, start=1):
            first = done[k - 1].automatic
            table.lines.append(
                [
                    f"{k}",
                    f"{time:g} s",
                    f"{100 * up:.1f} % / {100 * down:.1f} %",
                    "yes" if fail else "no",
                    "" if first is None else first.name,
                    "",
                    "",
                    "",
                    "",
                ]
            )
    for line, r in zip(table.lines, done, strict=True):
        text = _automatic(r) + ("collided" if r.collided else "no collision")
        if r.collided:
            text += f" at {r.impact_speed:.2f} m/s"
            text += " in it" if r.contact_driving_itself else ""
        if r.stop_bound is not None and r.stopped_after_cut is None:
            text += ", not stopped"
        line[column] = text


def _automatic(r: RecklessResult) -> str:
    """How long the trial's automatic mode took, or that it was given up."""
    if r.automatic is None:
        return ""
    if r.automatic.seconds is None:
        return f"given up after {GIVE_UP:g} s; "
    return f"{r.automatic.seconds:.0f} s; "


def _notes() -> list[str]:
    return [
        "The thesis's row runs Algorithm 5.1 as the thesis prints it: B2 is tested first and "
        "the algorithm returns, so a robot within 1.2 m of anything is capped at B2's "
        "0.35 m/s and 40 °/s however near it is, and the Min (0.1 m/s) and B1 (0.2 m/s) zones "
        "never act. The freelook row beside it corrects the order (DESIGN.md's erratum: "
        "innermost first), as the robot's own safety does. The thesis's Fig. 7.8 shades the "
        "points by the zone activated (the figure is missing from the text), which suggests "
        "that the code it ran acted in more than one zone; the printed order is what the "
        "thesis gives. The printed pseudo-code compares v and ω with the caps signed (as "
        "written, reversing or turning right would never be capped); this row caps "
        "magnitudes, as eqs. 5.1–5.2 do.",
        "The operator model was fixed before any of these rows was run and is not changed "
        "after a row misses (experiments/_reckless_operator.py gives each part's source). "
        "From the thesis: what the station's packets carried (35 of the laser's readings, the "
        "eight rear sonars, the pose; not the front sonar ring), manual control's keys and "
        "the mode's limits, the 31 ms and 47 ms packet spacings, Table 7.1's losses. Ours: "
        "the reaction time, the keyboard's repeat rate, and how the operator decides where "
        "to steer. The thesis's trials mixed modes (§7.2); each of the nine here begins with "
        "an automatic mode from the lab's start at rest, the ellipse where Table 7.2 ran it "
        "(trials 4, 7, 9: the thesis's station, at that table's losses) and linear drive in "
        "the others (ours: the thesis does not say which trials ran it), and the operator "
        "drives by hand for the rest of its operation time (experiments/_mixed_modes.py). "
        "The per-trial table gives how long the automatic mode took and whether a contact "
        "came in it.",
        "A row that misses is a result: the thesis reports no collision in its 9 trials and "
        "a drive through the narrow part; where the rows here collide, the first contacts "
        "say where (the glass partition at x 7–9, y 11, which only the sonar hears, is not "
        "on the map and its echo is not in the packets; the passage's walls at x = 11, "
        "y 5.6 and 6.4).",
    ]
