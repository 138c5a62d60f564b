"""The bomb-disposal experiment in small: seeded scenes, a trial end to end through the command
line with its recording read back, and the object carried off during the approach."""

from __future__ import annotations

import json
import math
from pathlib import Path

from mcap.reader import make_reader
from typer.testing import CliRunner

from freelook.cli import app
from freelook.experiments._bomb_disposal import disposal_trial, eod_scenario


def test_a_scene_is_drawn_from_its_seed_with_a_look_alike_distractor() -> None:
    a, b = eod_scenario(5, "taros"), eod_scenario(5, "taros")
    assert a.start == b.start
    assert a.world.objects == b.world.objects
    assert eod_scenario(6, "taros").start != a.start
    off = abs((a.distractor_hue - a.object_hue + 180) % 360 - 180)
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
