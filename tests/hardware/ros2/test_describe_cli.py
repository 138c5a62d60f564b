"""``freelook ros2 describe`` refuses what it cannot do with one line and exit code 2, and
writes nothing then: a watch too short or too long, a namespace that is no ROS name, a file
that is there (without ``--force``), a domain with no robot in it."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app


@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["--seconds", "0.1"], "--seconds 0.1: from 0.5 to 60"),
        (["--seconds", "600"], "--seconds 600: from 0.5 to 60"),
        (["--namespace", "1robot"], "is not a ROS name"),
    ],
)
def test_bad_options_are_one_line_and_exit_2(args: list[str], said: str, tmp_path: Path) -> None:
    out = tmp_path / "robot.toml"
    result = CliRunner().invoke(app, ["ros2", "describe", "-o", str(out), *args])
    assert result.exit_code == 2, result.output
    assert said in result.output
    assert not out.exists()


def test_a_file_that_is_there_is_kept_without_force(tmp_path: Path) -> None:
    out = tmp_path / "robot.toml"
    out.write_text("# mine\n")
    result = CliRunner().invoke(app, ["ros2", "describe", "-o", str(out)])
    assert result.exit_code == 2, result.output
    assert f"{out} exists: --force overwrites it" in result.output
    assert out.read_text() == "# mine\n"


@pytest.mark.realtime
def test_no_robot_in_the_domain_is_said_and_nothing_written(
    ros_domain: int, tmp_path: Path
) -> None:
    out = tmp_path / "robot.toml"
    result = CliRunner().invoke(app, ["ros2", "describe", "-o", str(out), "--seconds", "0.5"])
    assert result.exit_code == 2, result.output
    assert "no nav_msgs/Odometry published" in result.output
    assert "published topics: none" in result.output  # its own node's are not the robot's
    assert not out.exists()
