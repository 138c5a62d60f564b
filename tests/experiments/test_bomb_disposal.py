"""The bomb-disposal experiment in small: seeded scenes, a trial end to end through the command
line with its recording read back, the object carried off during the approach, and the
operator's takeover (tests/robot/test_autonomy_takeover.py takes over at every phase)."""

from __future__ import annotations

import colorsys
import json
import math
from pathlib import Path

import numpy as np
import pytest
from mcap.reader import make_reader
from typer.testing import CliRunner

from freelook.cli import app
from freelook.experiments._bomb_disposal import (
    TASK_PHASES,
    DisposalResult,
    Takeover,
    disposal_table,
    disposal_trial,
    eod_scenario,
)
from freelook.types import TaskPhase


def test_a_scene_is_drawn_from_its_seed_with_a_look_alike_distractor() -> None:
    a, b = eod_scenario(5, "taros"), eod_scenario(5, "taros")
    assert a.start == b.start
    assert a.world.objects == b.world.objects
    assert eod_scenario(6, "taros").start != a.start
    off = abs((a.distractor_hue - a.object_hue + 180) % 360 - 180)
    assert not a.distractor_inside
    assert 28 <= off <= 38  # near the object's hue, outside the detector's ±12°
    names = [o.name for o in a.world.objects]
    assert names[:3] == ["suspicious object", "receptacle", "distractor 2"]
    assert [o.movable for o in a.world.objects].count(True) == 1
    # the object fits the gripper of the robot the scene is drawn for
    small = eod_scenario(5, "m2p2").world.objects[0]
    assert min(small.size_x, small.size_y) < 0.14


def test_a_trial_through_the_command_line_with_its_recording(tmp_path: Path) -> None:
    out = tmp_path / "disposal.mcap"
    result = CliRunner().invoke(
        app,
        ["experiment", "bomb-disposal", "--trials", "1", "--seed", "2", "--robot", "m2p2",
         "--record", str(out), "--json"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    (table,) = json.loads(result.stdout)
    assert table["name"] == "bomb-disposal m2p2"
    assert all(row["ok"] is not False for row in table["rows"]), table["rows"]
    (trial,) = table["details"]["trials"]
    assert trial["success"]
    assert trial["base_contacts"] == trial["arm_collisions"] == 0
    assert set(trial["phase_times"]) >= {"search_object", "grasp", "drop"}
    phases: list[str] = []
    poses = 0
    with out.open("rb") as stream:
        for _, channel, message in make_reader(stream).iter_messages():
            if channel.topic == "/autonomy/phase":
                phases.append(message.data.decode(errors="replace"))
            elif channel.topic == "/sim/objects":
                poses += 1
    assert poses > 100
    assert any("approach_object" in p for p in phases)
    assert any("done" in p for p in phases)


def test_the_object_carried_off_during_the_approach_is_searched_for_again() -> None:
    result = disposal_trial(7, "m2p2", move_object=True)
    assert result.moved
    assert result.recoveries >= 1
    assert result.success, result.failure
    assert result.collisions == 0
    assert math.isfinite(result.drop_error)


def test_the_takeover_drawn_for_a_trial_happens_while_the_task_runs() -> None:
    """Seed 64's task ends at 38.6 s; a takeover drawn on the clock (8–40 s) came after it and
    was counted as not stopped, not resumed. Drawn by phase, it happens, and holds."""
    result = disposal_trial(64, "taros", takeover=True)
    assert result.takeover  # one was asked for
    assert result.took_over
    assert result.takeover_phase in [p.name.lower() for p in TASK_PHASES]
    assert result.stopped_in_one_cycle is True
    assert result.resumed_phase is True
    assert result.success, result.failure


def test_a_takeover_is_due_in_its_phase_or_at_the_first_cycle_after_it() -> None:
    grasp = Takeover(TaskPhase.GRASP, 1.5)
    assert not grasp.due(TaskPhase.IDLE, 9.0)
    assert not grasp.due(TaskPhase.APPROACH_OBJECT, 30.0)
    assert not grasp.due(TaskPhase.GRASP, 1.4)
    assert grasp.due(TaskPhase.GRASP, 1.5)
    assert grasp.due(TaskPhase.SEARCH_RECEPTACLE, 0.0)  # the grasp ended sooner: now
    assert not grasp.due(TaskPhase.DONE, 0.0)  # over: nothing left to take over
    assert Takeover(TaskPhase.SEARCH_OBJECT).due(TaskPhase.SEARCH_OBJECT, 0.0)
    drawn = [Takeover.drawn(np.random.default_rng(k)) for k in range(60)]
    assert {t.phase for t in drawn} == set(TASK_PHASES)
    assert any(t.after == 0.0 for t in drawn)
    assert all(0.0 <= t.after < 4.0 for t in drawn)


def test_a_takeover_that_never_happened_marks_the_row_not_met() -> None:
    def trial(seed: int, *, asked: str, happened: bool) -> DisposalResult:
        times = {p.name.lower(): 5.0 for p in TASK_PHASES}
        r = DisposalResult(seed, "taros", True, TaskPhase.DONE, 40.0, times, 0, 0, 0, 0, 0, 10)
        r.takeover = asked
        r.took_over = happened
        if happened:
            r.takeover_phase, r.stopped_in_one_cycle, r.resumed_phase = "grasp", True, True
        return r

    held = [trial(1, asked="grasp +0.0 s", happened=True), trial(2, asked="", happened=False)]
    (row,) = [r for r in disposal_table(held, 2, 1, "taros").rows if "takeover" in r.what]
    assert row.ok is True
    assert row.ours == "1 / 1 / 1 of 1"
    missed = [*held, trial(3, asked="drop +3.0 s", happened=False)]
    (row,) = [r for r in disposal_table(missed, 3, 1, "taros").rows if "takeover" in r.what]
    assert row.ok is False
    assert "1 of 2 never taken over" in row.ours


def test_some_scenes_put_the_distractor_inside_the_detector_s_window_and_tint_the_light() -> None:
    scenes = [eod_scenario(seed, "taros") for seed in range(40)]
    inside = [s for s in scenes if s.distractor_inside]
    assert 4 <= len(inside) <= 20
    for s in scenes:
        off = abs((s.distractor_hue - s.object_hue + 180) % 360 - 180)
        assert (3 <= off <= 10) if s.distractor_inside else (28 <= off <= 38)
        (distractor,) = [o for o in s.world.objects if o.name.startswith("distractor")]
        r, g, b = (c / 255 for c in distractor.color)
        assert colorsys.rgb_to_hsv(r, g, b)[0] * 360 == pytest.approx(s.distractor_hue, abs=1.0)
        red, green, blue = s.tint
        assert green == 1.0
        assert red - 1 == pytest.approx(1 - blue)
        assert abs(red - 1) <= 0.15
        assert 2.0 <= s.noise <= 6.0
    assert len({s.tint for s in scenes}) == len(scenes)


def test_a_dark_camera_fails_the_task_row() -> None:
    """Broken on purpose: every frame black (the camera off). Nothing is found and the row
    says so."""
    result = disposal_trial(0, "m2p2", camera_off=True)
    assert not result.success
    assert "nothing seen" in result.failure
    (row, *_) = disposal_table([result], 1, 0, "m2p2").rows
    assert row.ok is False


def test_a_detector_window_too_wide_takes_the_distractor_and_the_row_says_so() -> None:
    """Broken on purpose: the detector's window ±40° (a wrong calibration) takes the distractor
    28–38° away for the object; the false-detection row counts it and is not met."""
    scene = eod_scenario(5, "m2p2")
    assert not scene.distractor_inside
    result = disposal_trial(5, "m2p2", hue_tolerance=40.0, limit=60.0, describe_height=False)
    assert result.false_detections > 0
    rows = disposal_table([result], 1, 5, "m2p2").rows
    (row,) = [r for r in rows if r.what.startswith("false") and "outside" in r.what]
    assert row.ok is False


def test_the_look_alike_seed_504_grasped_is_told_apart_by_its_height() -> None:
    """TAROS on seed 504 (a takeover trial of 501–510): the distractor's hue 7° off the
    object's, inside the detector's window. Told the colours alone, the robot took the
    distractor (0.33 m tall, the object 0.18 m) for the object and closed its gripper on it:
    finger_right inside distractor 2 in the grasp's close and lift (the contact checker's hit
    at 13.4 s). Told the object's height too, it takes the object, and the arm touches
    nothing."""
    scene = eod_scenario(504, "taros")
    assert scene.distractor_inside
    colours_only = disposal_trial(504, "taros", takeover=True, limit=20.0, describe_height=False)
    assert colours_only.arm_collisions > 0
    assert colours_only.phase in (TaskPhase.GRASP, TaskPhase.SEARCH_RECEPTACLE)
    result = disposal_trial(504, "taros", takeover=True)
    assert result.arm_collisions == 0
    assert result.base_contacts == result.base_box_overlaps == 0
    assert result.success, result.failure


def _result(seed: int, phases: tuple[str, ...], success: bool) -> DisposalResult:
    times = dict.fromkeys(phases, 5.0)
    phase = TaskPhase.DONE if success else TaskPhase.FAILED
    return DisposalResult(seed, "taros", success, phase, 40.0, times, 0, 0, 0, 0, 0, 10)


def test_rows_a_robot_that_never_lifted_the_object_cannot_meet() -> None:
    """A robot that never moves, or an arm held still, touches nothing: the collision row and
    the false-detection row are met only when some trial lifted the object, and a row with
    nothing to judge (no takeover asked for, no object carried off) judges nothing."""
    stuck = [_result(1, ("search_object", "approach_object"), False)]
    rows = {r.what.split(":")[0]: r for r in disposal_table(stuck, 1, 1, "taros").rows}
    collisions = next(r for k, r in rows.items() if k.startswith("trials with a collision"))
    assert collisions.ok is False
    assert "0 of 1 trials lifted" in collisions.ours
    outside = next(r for r in rows.values() if r.what.startswith("false") and "outside" in r.what)
    assert outside.ok is False
    assert next(r for r in rows.values() if r.what.startswith("takeover")).ok is None
    assert next(r for r in rows.values() if r.what.startswith("object carried")).ok is None
    lifted = [_result(1, tuple(p.name.lower() for p in TASK_PHASES), True)]
    rows = {r.what: r for r in disposal_table(lifted, 1, 1, "taros").rows}
    assert next(r for k, r in rows.items() if k.startswith("trials with a collision")).ok is True


def test_the_m2p2_sees_through_a_webcam_on_the_laptop_s_side_of_the_link() -> None:
    m2p2 = _result(1, ("search_object",), False)
    m2p2.local_camera = True
    (row, *_) = disposal_table([m2p2], 1, 1, "m2p2").rows
    assert "webcam on the laptop's side of the link" in row.conditions
    (row, *_) = disposal_table([_result(1, ("search_object",), False)], 1, 1, "taros").rows
    assert "JPEG as the link sends it" in row.conditions


def test_the_m2p2_s_seed_510_grasps_a_tall_object_with_the_palm_over_its_top() -> None:
    """The M2P2 on seed 510 (0.174 m object; arm without encoders, its shoulder drive 3.5 %
    fast): the stow cut short by the sighting left the shoulder running into its stop, the
    count unwound 2.2 rad to the grasp and put the tool 5.7 cm under where it was counted, and
    the grasp's goal, held at 5 cm over the object's middle, had the palm at its top even as
    counted: gripper_base 5.3 cm into the object at the close (3 looks). Stilled when the
    phase changes, raised until the palm clears the top, it lifts touching nothing."""
    result = disposal_trial(510, "m2p2", limit=30.0)
    assert "search_receptacle" in result.phase_times  # lifted
    assert result.arm_collisions == 0
    assert result.base_contacts == result.base_box_overlaps == 0
