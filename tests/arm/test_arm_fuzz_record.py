"""``arm-fuzz --record``: every trial's joint states in one MCAP file, read back with rosbags;
the recorded poses of the checked runs never bring a checked pair into contact, the control's
do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from rosbags.highlevel import AnyReader
from typer.testing import CliRunner

from freelook.arm import load_arm, pair_separations
from freelook.cli import app
from freelook.config import load_robot
from freelook.experiments import arm_fuzz


def test_every_trial_is_recorded_end_to_end(tmp_path: Path) -> None:
    path = tmp_path / "fuzz.mcap"
    result = arm_fuzz(2, 7, lambda done, total: None, "taros", record=path)
    config = load_robot("taros").arm
    assert config is not None
    model = load_arm(config.urdf, config.srdf)
    streams: dict[str, list[tuple[float, object]]] = {}
    with AnyReader([path]) as reader:
        for connection, stamp, raw in reader.messages():
            message = reader.deserialize(raw, connection.msgtype)
            streams.setdefault(connection.topic, []).append((stamp / 1e9, message))
    assert streams["/robot_description"][0][1].data == config.urdf.read_text()  # type: ignore[attr-defined]
    notes = [m.data for _, m in streams["/arm_fuzz/trials"]]  # type: ignore[attr-defined]
    assert [n.split(":")[0] for n in notes] == ["trial 0", "trial 1"]
    second = streams["/arm_fuzz/trials"][1][0]
    for topic, checked in (("/joint_states", True), ("/control/joint_states", False)):
        states = streams[topic]
        times = np.array([t for t, _ in states])
        assert np.all(np.diff(times) > 0)  # one per control cycle, trials end to end
        assert (times >= second).any()
        assert (times < second - 0.99).any()
        names = list(states[0][1].name)  # type: ignore[attr-defined]
        assert names == [model.joint_names[j] for j in (*model.arm_joints, *model.gripper_joints)]
        order = [model.joint_names.index(n) for n in names]
        q = np.zeros((len(states), model.n_joints))
        q[:, order] = np.array([m.position for _, m in states])  # type: ignore[attr-defined]
        touching = (pair_separations(model, q, 0.0, 0.0) <= 0).any(axis=1)
        assert touching.any() != checked
    assert result.details["intersecting_trials_on"] == 0


def test_record_goes_with_arm_fuzz_and_bomb_disposal_only(tmp_path: Path) -> None:
    out = CliRunner().invoke(
        app, ["experiment", "ellipse", "--trials", "1", "--record", str(tmp_path / "x.mcap")]
    )
    assert out.exit_code == 2
    assert "go with arm-fuzz or bomb-disposal only" in out.output
    out = CliRunner().invoke(
        app, ["experiment", "arm-fuzz", "--trials", "1", "--robot", "pioneer3dx"]
    )
    assert out.exit_code == 2
    assert "has no arm" in out.output
