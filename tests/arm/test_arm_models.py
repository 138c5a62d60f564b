"""The arm models: the built-in URDF/SRDF load, the checked pairs are the SRDF's data, and bad
files are refused with the file, the element and what was expected."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from freelook.arm import ArmModel, load_arm, load_urdf, pair_separations
from freelook.cli import app
from freelook.config import load_robot
from freelook.errors import ConfigError

ROBOTS = Path(load_robot("taros").arm.urdf).parent  # type: ignore[union-attr]


def _model(name: str) -> ArmModel:
    arm = load_robot(name).arm
    assert arm is not None
    return load_arm(arm.urdf, arm.srdf)


def test_taros_has_26_boxes_and_its_srdf_names_the_checked_pairs() -> None:
    model = _model("taros")
    assert model.n_boxes == 26
    assert model.n_boxes * (model.n_boxes - 1) // 2 == 325
    text = (ROBOTS / "taros.srdf").read_text()
    disabled = len(re.findall(r"<disable_collisions ", text))
    assert model.n_pairs == 325 - disabled
    assert len(set(model.pair_names)) == model.n_pairs
    assert ("upper_arm", "ground") in model.pair_names or ("ground", "upper_arm") in (
        model.pair_names
    )
    assert model.joint_names[:5] == (
        "turret_yaw", "shoulder_pitch", "elbow_pitch", "wrist_pitch", "wrist_roll_joint",
    )  # fmt: skip
    assert list(model.arm_joints) == [0, 1, 2, 3, 4]
    assert [model.joint_names[i] for i in model.gripper_joints] == ["finger_left_joint"]
    assert model.link_names[model.tool_link] == "tool0"


def test_taros_reaches_2_1_m_from_the_shoulder() -> None:
    from freelook.arm import link_transforms

    model = _model("taros")
    frames = link_transforms(model, model.home())
    shoulder = frames[model.link_index("upper_arm")][:3, 3]
    tool = frames[model.tool_link][:3, 3]
    assert float(np.linalg.norm(tool - shoulder)) == pytest.approx(2.1, abs=0.02)


def test_m2p2_arm_moves_in_a_vertical_plane() -> None:
    from freelook.arm import tool_pose

    model = _model("m2p2")
    assert [model.joint_names[i] for i in model.arm_joints] == [
        "shoulder", "elbow", "gripper_roll",
    ]  # fmt: skip
    rng = np.random.default_rng(3)
    q = rng.uniform(model.lower, model.upper, (200, model.n_joints))
    y = tool_pose(model, q)[:, 1, 3]
    assert np.abs(y).max() < 1e-12  # shoulder and elbow turn about y: the tool stays in x–z


@pytest.mark.parametrize("name", ["taros", "m2p2"])
def test_pairs_disabled_as_never_stay_apart_in_random_poses(name: str) -> None:
    """The SRDF's "Never" pairs were found by sampling; a fresh sample must agree."""
    arm = load_robot(name).arm
    assert arm is not None
    full = load_urdf(arm.urdf)
    text = Path(arm.srdf).read_text()
    never = {
        frozenset(m) for m in re.findall(r'link1="([^"]+)" link2="([^"]+)" reason="Never"', text)
    }
    keep = [k for k, pair in enumerate(full.pair_names) if frozenset(pair) in never]
    assert len(keep) == len(never) > 0
    import dataclasses

    model = dataclasses.replace(full, pair_a=full.pair_a[keep], pair_b=full.pair_b[keep])
    rng = np.random.default_rng(12345)
    q = rng.uniform(model.lower, model.upper, (20_000, model.n_joints))
    assert (pair_separations(model, q) > 0).all()


URDF = """<?xml version="1.0"?>
<robot name="bad">
  <link name="base"><collision><geometry><box size="1 1 1"/></geometry></collision></link>
  <link name="a"><collision><geometry><box size="0.1 0.1 1"/></geometry></collision></link>
  <link name="b"><collision><geometry><box size="0.1 0.1 1"/></geometry></collision></link>
  <joint name="j1" type="revolute">
    <parent link="base"/><child link="a"/><axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" velocity="1" effort="1"/>
  </joint>
  <joint name="j2" type="revolute">
    <parent link="a"/><child link="b"/><axis xyz="0 1 0"/>
    LIMIT
  </joint>
  EXTRA
</robot>
"""
LIMIT = '<limit lower="-1" upper="1" velocity="1" effort="1"/>'


def _write(tmp_path: Path, limit: str = LIMIT, extra: str = "") -> Path:
    path = tmp_path / "bad.urdf"
    path.write_text(URDF.replace("LIMIT", limit).replace("EXTRA", extra))
    return path


def test_a_good_small_urdf_loads(tmp_path: Path) -> None:
    model = load_urdf(_write(tmp_path))
    assert model.joint_names == ("j1", "j2")
    assert model.n_pairs == 3


@pytest.mark.parametrize(
    ("limit", "extra", "expected"),
    [
        ("", "", r'bad\.urdf:10: <joint name="j2">: expected <limit lower=… upper=… velocity=…>'),
        (
            '<limit lower="1" upper="-1" velocity="1"/>',
            "",
            r'<joint name="j2">: <limit> expected lower < upper \(got 1, -1\)',
        ),
        (
            '<limit lower="-1" upper="1" velocity="nan"/>',
            "",
            r"missing or invalid: velocity",
        ),
        (
            LIMIT,
            '<joint name="j3" type="fixed"><parent link="b"/><child link="a"/></joint>',
            r"<joint name=\"j3\">: link 'a' already has a parent joint 'j1' \(line 6\)",
        ),
        (
            LIMIT,
            '<joint name="j3" type="continuous"><parent link="b"/><child link="c"/></joint>',
            r"expected type fixed, revolute or prismatic \(got 'continuous'\)",
        ),
        (
            LIMIT,
            '<link name="c"><visual><geometry><mesh filename="missing.stl"/></geometry></visual>'
            '<collision><geometry><box size="1 1 1"/></geometry></collision></link>',
            r"<link name=\"c\">: mesh 'missing.stl' cannot be loaded",
        ),
        (
            LIMIT,
            '<link name="c"><visual><geometry><box size="1 1 1"/></geometry></visual></link>',
            r"<link name=\"c\">: has visual geometry but no <collision> box",
        ),
        (
            LIMIT,
            '<link name="c"><collision><geometry><sphere radius="1"/></geometry></collision>'
            "</link>",
            r"<link name=\"c\">: expected <collision><geometry><box size=…>",
        ),
    ],
)
def test_bad_urdf_names_file_element_and_expectation(
    tmp_path: Path, limit: str, extra: str, expected: str
) -> None:
    with pytest.raises(ConfigError) as caught:
        load_urdf(_write(tmp_path, limit, extra))
    assert any(re.search(expected, line) for line in caught.value.problems), caught.value.problems


def test_a_loop_of_joints_is_refused(tmp_path: Path) -> None:
    loop = URDF.replace("LIMIT", LIMIT).replace(
        '<joint name="j1" type="revolute">\n    <parent link="base"/>',
        '<joint name="j1" type="revolute">\n    <parent link="b"/>',
    )
    path = tmp_path / "loop.urdf"
    path.write_text(loop.replace("EXTRA", ""))
    with pytest.raises(ConfigError) as caught:
        load_urdf(path)
    text = "\n".join(caught.value.problems)
    assert re.search(r'loop\.urdf:\d+: <joint name="j\d">: joints form a loop through links', text)


def test_a_mesh_that_exists_but_is_not_a_mesh_is_refused(tmp_path: Path) -> None:
    (tmp_path / "junk.stl").write_bytes(b"solid nothing\nthis is not an stl\n")
    extra = (
        '<link name="c"><visual><geometry><mesh filename="junk.stl"/></geometry></visual>'
        '<collision><geometry><box size="1 1 1"/></geometry></collision></link>'
    )
    with pytest.raises(ConfigError, match="invalid URDF") as caught:
        load_urdf(_write(tmp_path, LIMIT, extra))
    assert any("'junk.stl' cannot be loaded" in p for p in caught.value.problems)


def test_not_xml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "broken.urdf"
    path.write_text('<robot name="x">\n<link name="a">\n</robot>\n')
    with pytest.raises(ConfigError, match=r"broken\.urdf:3: not well-formed XML"):
        load_urdf(path)


def _copy_taros(tmp_path: Path, srdf_edit: tuple[str, str] | None = None) -> Path:
    for suffix in ("toml", "urdf", "srdf"):
        shutil.copy(ROBOTS / f"taros.{suffix}", tmp_path / f"taros.{suffix}")
    if srdf_edit is not None:
        srdf = tmp_path / "taros.srdf"
        text = srdf.read_text()
        assert srdf_edit[0] in text
        srdf.write_text(text.replace(srdf_edit[0], srdf_edit[1], 1))
    return tmp_path / "taros.toml"


def test_srdf_naming_an_unknown_link_is_refused(tmp_path: Path) -> None:
    toml = _copy_taros(
        tmp_path, ('link1="ground" link2="track_left"', 'link1="ground" link2="trak"')
    )
    robot = load_robot(toml)
    assert robot.arm is not None
    with pytest.raises(ConfigError) as caught:
        load_arm(robot.arm.urdf, robot.arm.srdf)
    [line] = caught.value.problems
    assert re.search(r"taros\.srdf:\d+: <disable_collisions>: \'trak\' names no link", line)


def test_srdf_naming_an_unknown_joint_is_refused(tmp_path: Path) -> None:
    toml = _copy_taros(tmp_path, ('<joint name="elbow_pitch"/>', '<joint name="elbow"/>'))
    robot = load_robot(toml)
    assert robot.arm is not None
    with pytest.raises(ConfigError, match="invalid SRDF") as caught:
        load_arm(robot.arm.urdf, robot.arm.srdf)
    assert "names no actuated joint" in caught.value.problems[0]


def test_config_check_validates_the_arm_files(tmp_path: Path) -> None:
    good = _copy_taros(tmp_path)
    result = CliRunner().invoke(app, ["config", "check", str(good)])
    assert result.exit_code == 0, result.output
    assert "ok (taros, tracked)" in result.output
    bad_dir = tmp_path / "bad"
    bad_dir.mkdir()
    bad = _copy_taros(bad_dir, ('link1="ground" link2="hull"', 'link1="ground" link2="hul"'))
    result = CliRunner().invoke(app, ["config", "check", str(bad)])
    assert result.exit_code == 2
    assert "'hul' names no link" in result.output


def test_arm_times_are_checked(tmp_path: Path) -> None:
    toml = _copy_taros(tmp_path)
    text = toml.read_text().replace("stop_time = 0.03", "stop_time = 0.2")
    toml.write_text(text)
    with pytest.raises(ConfigError) as caught:
        load_robot(toml)
    assert any("stop_time must be shorter than slow_time" in p for p in caught.value.problems)


def test_public_faces() -> None:
    import freelook.arm
    import freelook.sim.arm

    assert set(freelook.arm.__all__) == {
        "ArmDecision", "ArmGuard", "ArmModel", "ArmPhase", "GradientPlanner", "PhaseRule",
        "Plan", "PlanFollower", "ReachGoal", "box_poses", "dls_ik", "link_transforms",
        "load_arm", "load_urdf", "obb_overlap", "obb_separation", "pair_separations",
        "tool_pose",
    }  # fmt: skip
    assert set(freelook.sim.arm.__all__) == {"ArmObject", "SimulatedArm", "objects_from_world"}
    for face in (freelook.arm, freelook.sim.arm):
        for name in face.__all__:
            assert hasattr(face, name)
