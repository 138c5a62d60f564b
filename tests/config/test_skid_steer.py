"""The skid_steer drive kind: a description takes it, and its localization carries the
sideways skid of its turns by default."""

from __future__ import annotations

from pathlib import Path

import pytest

from freelook.config import builtin_robots, load_robot
from freelook.errors import ConfigError
from freelook.estimation import MonteCarloLocalization
from freelook.experiments._added_laser import with_added_laser
from freelook.maps import load_world

SKID = """
name = "skid"
[drive]
kind = "skid_steer"
track_width = 0.555
wheel_diameter = 0.33
encoder_counts_per_rev = 1000
max_wheel_speed = 1.0
max_turn_rate_deg = 90.0
max_acceleration = 1.0
max_deceleration = 1.0
motor_time_constant = 0.0
[footprint]
length = 0.99
width = 0.67
swing_radius = 0.6
[laser]
[safety]
zones = [{ boundary = 0.9, max_speed = 0.1, max_turn_rate_deg = 10.0 }]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "robot.toml"
    path.write_text(text)
    return path


def test_a_skid_steer_skids_by_a_quarter_of_its_length_per_radian(tmp_path: Path) -> None:
    robot = load_robot(write(tmp_path, SKID))
    assert robot.drive.kind == "skid_steer"
    assert robot.estimation.mcl_lateral_noise is None  # unset: the drive's default
    assert robot.lateral_skid_noise == pytest.approx(0.25 * 0.99)
    mcl = MonteCarloLocalization.for_robot(load_world("lab"), robot, seed=1)
    assert mcl.config.mcl_lateral_noise == pytest.approx(0.2475)


def test_a_given_skid_wins_over_the_default(tmp_path: Path) -> None:
    robot = load_robot(write(tmp_path, SKID + "[estimation]\nmcl_lateral_noise = 0.0\n"))
    assert robot.lateral_skid_noise == 0.0
    robot = load_robot(write(tmp_path, SKID + "[estimation]\nmcl_lateral_noise = 0.1\n"))
    assert robot.lateral_skid_noise == pytest.approx(0.1)


@pytest.mark.parametrize("kind", ["differential", "tracked", "holonomic"])
def test_other_drives_skid_only_when_their_description_says(tmp_path: Path, kind: str) -> None:
    robot = load_robot(write(tmp_path, SKID.replace('"skid_steer"', f'"{kind}"')))
    assert robot.lateral_skid_noise == 0.0


@pytest.mark.parametrize("name", builtin_robots())
def test_every_shipped_robot_keeps_its_skid(name: str) -> None:
    # the papers' robots localize as before: every non-skid-steer 0, the FOI UGV too (the
    # paper's robot had no laser to localize with); with the laser freelook adds, its 0.15
    robot = load_robot(name)
    if robot.drive.kind == "skid_steer":
        assert robot.lateral_skid_noise == pytest.approx(0.25 * robot.footprint.length)
    else:
        assert robot.lateral_skid_noise == 0.0
    if name == "foi-ugv":
        assert robot.laser is None
        assert with_added_laser(robot).lateral_skid_noise == pytest.approx(0.15)


def test_an_unknown_drive_kind_is_refused_naming_the_kinds(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as err:
        load_robot(write(tmp_path, SKID.replace('"skid_steer"', '"skidsteer"')))
    assert "skid_steer" in " ".join(err.value.problems)
