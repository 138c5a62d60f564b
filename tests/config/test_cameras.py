"""The ``[[cameras]]`` list: the built-in arm cameras, and precise errors naming the file and the
field for a camera that is malformed, duplicated or mounted on nothing."""

from __future__ import annotations

import shutil
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.config import load_robot
from freelook.errors import ConfigError

ROBOTS = Path(str(resources.files("freelook.config.robots")))


def _copy(tmp_path: Path, name: str, edit: tuple[str, str] | None = None) -> Path:
    for suffix in ("toml", "urdf", "srdf"):
        shutil.copy(ROBOTS / f"{name}.{suffix}", tmp_path / f"{name}.{suffix}")
    toml = tmp_path / f"{name}.toml"
    if edit is not None:
        text = toml.read_text()
        assert edit[0] in text
        toml.write_text(text.replace(edit[0], edit[1], 1))
    return toml


def test_taros_has_a_stereo_pair_and_m2p2_a_mono_arm_camera() -> None:
    stereo, thermal = load_robot("taros").cameras
    assert (thermal.name, thermal.stream, thermal.mount, thermal.kind) == (
        "thermal",
        2,
        "pan_tilt",
        "thermal",
    )
    assert (stereo.name, stereo.stream, stereo.mount) == ("arm_stereo", 1, "stereo_bar")
    assert stereo.stereo_baseline == pytest.approx(0.065)
    assert stereo.frame_width == 2 * stereo.width
    (mono,) = load_robot("m2p2").cameras
    assert (mono.name, mono.stream, mono.mount, mono.stereo) == ("arm", 1, "arm_camera", False)
    assert load_robot("pioneer3dx").cameras == ()


@pytest.mark.parametrize("name", ["taros", "m2p2"])
def test_builtin_arm_robots_pass_config_check(name: str) -> None:
    result = CliRunner().invoke(app, ["config", "check", str(ROBOTS / f"{name}.toml")])
    assert result.exit_code == 0, result.output


BAD = [
    ("stream = 1", "stream = 0", "cameras.0.stream: Input should be greater than or equal to 1"),
    ("stream = 1", "stream = 8", "cameras.0.stream: Input should be less than or equal to 7"),
    ('name = "arm_stereo"', 'name = "Arm stereo!"', "cameras.0.name: String should match"),
    ("stereo_baseline = 0.065", "stereo_baseline = nan", "cameras.0.stereo_baseline: a finite"),
    ("stereo_baseline = 0.065", "stereo_baseline = -0.1", "cameras.0.stereo_baseline: Input"),
    ("fov_deg = 75.0", "fov_deg = 200.0", "cameras.0.fov_deg: Input should be less than 179"),
    ("rate_hz = 15.0", "rate_hz = 0", "cameras.0.rate_hz: Input should be greater than 0"),
    ("width = 320", "width = 100000", "cameras.0.width: Input should be less than or equal"),
    ("stream = 1", "stream = 1\nlens = 4", "cameras.0.lens: unknown key"),
    ('mount = "stereo_bar"', 'mount = "stereo_bar"\nkind = "xray"', "cameras.0.kind: Input"),
    ("offset = [0.03, 0.0, 0.0]", "offset = [1, 2]", "cameras.0.offset"),
]


@pytest.mark.parametrize(("old", "new", "message"), BAD)
def test_a_malformed_camera_names_its_file_and_field(
    tmp_path: Path, old: str, new: str, message: str
) -> None:
    toml = _copy(tmp_path, "taros", (old, new))
    with pytest.raises(ConfigError) as caught:
        load_robot(toml)
    assert any(p.startswith(f"{toml}: {message}") for p in caught.value.problems), (
        caught.value.problems
    )


def test_twice_the_same_stream_or_name_is_refused(tmp_path: Path) -> None:
    toml = _copy(tmp_path, "taros")
    text = toml.read_text()
    block = text[text.index("[[cameras]]") : text.index("# The thermal camera")]
    toml.write_text(text + "\n" + block)
    with pytest.raises(ConfigError) as caught:
        load_robot(toml)
    assert f"{toml}: cameras.2.stream: stream 1 is used twice" in caught.value.problems
    assert f"{toml}: cameras.2.name: camera 'arm_stereo' is named twice" in caught.value.problems


def test_a_link_mount_needs_an_arm_and_a_pan_tilt_mount_a_pan_tilt(tmp_path: Path) -> None:
    toml = _copy(tmp_path, "taros")
    text = toml.read_text()
    start, end = text.index("[arm]"), text.index("# The stereo pair")
    toml.write_text(text[:start] + text[end:])
    with pytest.raises(ConfigError) as caught:
        load_robot(toml)
    assert caught.value.problems == [
        f"{toml}: cameras.0.mount: link 'stereo_bar', but the robot has no [arm]"
    ]
    pioneer = tmp_path / "pioneer.toml"
    shutil.copy(ROBOTS / "pioneer3dx.toml", pioneer)
    text = pioneer.read_text()
    text = text[: text.index("[pan_tilt]")] + text[text.index("[camera]") :]
    pioneer.write_text(text + '\n[[cameras]]\nname = "rear"\nstream = 2\nmount = "pan_tilt"\n')
    with pytest.raises(ConfigError) as caught:
        load_robot(pioneer)
    assert f"{pioneer}: cameras.0.mount: pan_tilt, but the robot has no [pan_tilt]" in (
        caught.value.problems
    )


def test_config_check_refuses_a_camera_on_a_link_the_urdf_lacks(tmp_path: Path) -> None:
    toml = _copy(tmp_path, "taros", ('mount = "stereo_bar"', 'mount = "stereo_barr"'))
    result = CliRunner().invoke(app, ["config", "check", str(toml)])
    assert result.exit_code == 2
    assert f"{toml}: cameras.0.mount: no link 'stereo_barr' in " in result.output
    assert "palm, stereo_bar, finger_left" in result.output  # the known links are listed
