"""The bomb-disposal table: the task's success, the time in each phase, collisions, the
takeovers, the object carried away, false detections."""

from __future__ import annotations

import dataclasses
import statistics

from freelook.config import builtin_error_models
from freelook.experiments._bomb_disposal._scene import INSIDE_OFFSET, NOISE, WARMTH
from freelook.experiments._bomb_disposal._takeover import TASK_PHASES
from freelook.experiments._bomb_disposal._trial import (
    ARM_SPEED_ERROR,
    WEBCAM_RATE,
    DisposalResult,
)
from freelook.experiments._result import ExperimentResult, Row

__all__ = ["disposal_table"]


def _spread(results: list[DisposalResult], block: int = 5) -> str:
    """The success count per block of ``block`` consecutive seeds, lowest…highest (how much
    the rate moves from one handful of scenes to the next); empty for a single block."""
    if len(results) < 2 * block:
        return ""
    whole = len(results) - len(results) % block  # a last, shorter block is left out
    counts = [sum(r.success for r in results[k : k + block]) for k in range(0, whole, block)]
    return f"; per {block} seeds {min(counts)}…{max(counts)} of {block}"


def _success_row(results: list[DisposalResult], seed: int, robot: str) -> Row:
    n = len(results)
    model = (
        f"; the base under its error model (config/errors/{robot}.toml), told where it was put"
        if robot in builtin_error_models()
        else "; the base as described (no error model)"
    )
    ok = sum(r.success for r in results)
    camera = (
        f"through a webcam on the laptop's side of the link, as Kievit-Kylar's (its frames"
        f" as captured, {WEBCAM_RATE:g} Hz, not the link's JPEG; on the pan-tilt mount)"
        if any(r.local_camera for r in results)
        else "through its driving camera (JPEG as the link sends it, 5 Hz)"
    )
    open_loop = (
        f"; the arm as Kievit-Kylar's M2P2: no encoders, its joints counted from the"
        f" resting pose by the commanded velocities and their times (the planner's fixed"
        f" steps, one joint at a time), the drives ±{100 * ARM_SPEED_ERROR:g} % off the"
        f" presumed speed"
    )
    return Row(
        f"{n} seeded scenes (colours, places, clutter, a look-alike distractor, light"
        f" 0.45–1.2 of ±{WARMTH:g} warmth, sensor noise σ {NOISE[0]:g}–{NOISE[1]:g}):"
        " task done, box inside the receptacle",
        "1 demonstration",
        f"{ok} of {n} ({100 * ok / max(n, 1):.0f} %){_spread(results)}",
        "≥ 95 %",
        ok >= 0.95 * n,
        f"the eod room, seeds {seed}…{seed + n - 1}; the robot sees {camera}, is told the"
        " object's colour and height and the receptacle's colour, knows its odometry, acts"
        " through its HAL, its safety and arm check on; every 10th trial an operator takes"
        " over" + model + (open_loop if any(r.open_loop for r in results) else ""),
    )


def _phase_rows(results: list[DisposalResult]) -> list[Row]:
    rows = []
    for phase in TASK_PHASES:
        times = [r.phase_times[phase.name.lower()] for r in results if r.success]
        label = phase.name.lower().replace("_", " ")
        rows.append(
            Row(
                f"median time in {label} (successful trials)",
                "",
                f"{statistics.median(times):.1f} s (max {max(times):.1f} s)" if times else "-",
            )
        )
    return rows


def _grasped(result: DisposalResult) -> bool:
    """Whether the trial lifted the object (went on to search for the receptacle)."""
    return "search_receptacle" in result.phase_times


def _collision_row(results: list[DisposalResult]) -> Row:
    """Collisions, judged only if some trial drove to the object and lifted it: a robot that
    never moves, or an arm held still, collides with nothing and proves nothing."""
    base = sum(r.base_contacts + r.base_box_overlaps > 0 for r in results)
    arm = sum(r.arm_collisions > 0 for r in results)
    grasped = sum(_grasped(r) for r in results)
    return Row(
        "trials with a collision: base (walls, fixed objects, the box) / arm (its boxes"
        " inside an object)",
        "",
        f"{base} / {arm} ({grasped} of {len(results)} trials lifted the object)",
        "0 / 0, the object lifted",
        base == 0 and arm == 0 and grasped > 0,
        "" if grasped else "no trial lifted the object: nothing the arm or base did is judged",
    )


def _takeover_row(results: list[DisposalResult]) -> Row:
    planned = [r for r in results if r.takeover]
    took = [r for r in planned if r.took_over]
    stopped = sum(bool(r.stopped_in_one_cycle) for r in took)
    resumed = sum(bool(r.resumed_phase) for r in took)
    done = sum(r.success for r in took)
    phases = ", ".join(r.takeover_phase.replace("_", " ") for r in took) or "-"
    missed = len(planned) - len(took)
    return Row(
        "takeover trials: the operator's stop command at a phase drawn per trial (or at its"
        " change), 2 s, hand-back: stopped within one control cycle / resumed in the same"
        " phase / task done",
        "",
        f"{stopped} / {resumed} / {done} of {len(took)}"
        + (f" ({missed} of {len(planned)} never taken over)" if missed else ""),
        "all",
        stopped == resumed == done == len(took) == len(planned) if planned else None,
        f"taken over in: {phases}; a takeover not reached (the task failed first) counts"
        " against the row",
    )


def _moved_row(results: list[DisposalResult]) -> Row:
    moved = [r for r in results if r.moved]
    back = sum(r.recoveries > 0 and r.success for r in moved)
    return Row(
        "object carried away during the approach: searched again and done",
        "",
        f"{back} of {len(moved)}",
        "all",
        back == len(moved) if moved else None,
    )


def _false_detection_row(results: list[DisposalResult], inside: bool) -> Row:
    """False detections in the scenes whose distractor is ``inside`` the detector's window
    (reported) or outside it (none allowed)."""
    scenes = [r for r in results if r.distractor_inside == inside]
    false = sum(r.false_detections for r in scenes)
    frames = sum(r.frames for r in scenes)
    done = sum(r.success for r in scenes)
    found = sum(_grasped(r) for r in scenes)  # the object told apart and lifted
    where = (
        f"inside the detector's ±12° window ({INSIDE_OFFSET[0]:g}–{INSIDE_OFFSET[1]:g}° off)"
        if inside
        else "28–38° off in hue, outside the detector's ±12°"
    )
    return Row(
        f"false object detections (a sighting > 0.5 m from the true object), scenes"
        f" with the distractor {where}: frames / trials with one / task done",
        "",
        f"{false} of {frames} frames / {sum(r.false_detections > 0 for r in scenes)}"
        f" / {done} of {len(scenes)}",
        "reported" if inside else "0, the object lifted",
        None if inside or not scenes else false == 0 and found > 0,
        "colour alone cannot tell such a look-alike apart (the object's described height"
        " can): counted, not hidden"
        if inside
        else ("" if found or not scenes else "the object never lifted: nothing found to judge"),
    )


def disposal_table(
    results: list[DisposalResult], trials: int, seed: int, robot: str
) -> ExperimentResult:
    """The table of a run's trials."""
    result = ExperimentResult(
        f"bomb-disposal {robot}",
        f"Bomb disposal on {robot}: detect, approach, grasp, detect the receptacle, approach,"
        " drop (seeded eod scenes)",
        "Kievit-Kylar §3 (five phases; the paper shows one demonstration, no rates)",
        f"freelook experiment bomb-disposal --trials {trials} --seed {seed} --robot {robot}",
    )
    result.rows.append(_success_row(results, seed, robot))
    result.rows += _phase_rows(results)
    result.rows.append(_collision_row(results))
    result.rows.append(_takeover_row(results))
    result.rows.append(_moved_row(results))
    result.rows += [_false_detection_row(results, inside) for inside in (False, True)]
    failures = [
        f"seed {r.seed}: {r.failure or r.phase.name.lower()}" for r in results if not r.success
    ]
    result.details["failures"] = failures
    if failures:
        result.notes.append("Trials not done, and where they stopped: " + "; ".join(failures) + ".")
    hit = [
        f"seed {r.seed} ({r.base_contacts + r.base_box_overlaps} base, {r.arm_collisions} arm)"
        for r in results
        if r.collisions
    ]
    if hit:
        result.notes.append("Trials with a collision (looks in contact): " + "; ".join(hit) + ".")
    result.details["trials"] = [dataclasses.asdict(r) for r in results]
    return result
