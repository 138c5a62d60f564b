"""Robot descriptions: built-ins validate, bad files name file and field."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.config import builtin_robots, load_robot
from freelook.errors import ConfigError

GOOD = """
name = "t"
[drive]
kind = "differential"
track_width = 0.4
wheel_diameter = 0.2
encoder_counts_per_rev = 1000
max_wheel_speed = 1.0
max_turn_rate_deg = 90.0
max_acceleration = 1.0
max_deceleration = 1.0
motor_time_constant = 0.0
[footprint]
length = 0.5
width = 0.4
swing_radius = 0.3
[safety]
zones = [{ boundary = 0.6, max_speed = 0.1, max_turn_rate_deg = 10.0 }]
"""


def test_builtins_load_with_the_papers_values() -> None:
    assert {"pioneer3dx", "foi-ugv"} <= set(builtin_robots())
    foi = load_robot("foi-ugv")
    assert foi.drive.track_width == pytest.approx(0.70)
    assert foi.drive.d_eff == pytest.approx(0.35)
    assert foi.pan_tilt is not None
    assert foi.pan_tilt.mount_forward == pytest.approx(0.11)
    assert foi.pan_tilt.mount_left == pytest.approx(-0.019)
    assert foi.pan_tilt.pan_limits_deg is None  # slip-ring pan, unlimited
    p3 = load_robot("pioneer3dx")
    assert p3.footprint.swing_radius == pytest.approx(0.267)
    assert p3.drive.max_turn_rate == pytest.approx(math.radians(300))
    assert [z.boundary for z in p3.safety.zones] == [0.6, 0.9, 1.2]


def test_good_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "good.toml"
    path.write_text(GOOD)
    robot = load_robot(path)
    assert robot.drive.d_eff == pytest.approx(0.4)
    assert robot.laser is None  # an absent section means no such sensor


@pytest.mark.parametrize(
    ("edit", "field", "expected"),
    [
        (("track_width = 0.4", 'track_width = "wide"'), "drive.track_width", "valid number"),
        (("wheel_diameter = 0.2\n", ""), "drive.wheel_diameter", "missing required field"),
        (("[footprint]", "[footprint]\nlenght = 3"), "footprint.lenght", "unknown key"),
        (('kind = "differential"', 'kind = "legs"'), "drive.kind", "differential"),
    ],
)
def test_bad_file_names_file_and_field(
    tmp_path: Path, edit: tuple[str, str], field: str, expected: str
) -> None:
    path = tmp_path / "bad.toml"
    path.write_text(GOOD.replace(*edit))
    with pytest.raises(ConfigError) as info:
        load_robot(path)
    assert any(str(path) in p and field in p and expected in p for p in info.value.problems), (
        info.value.problems
    )


def test_toml_syntax_error_names_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.toml"
    path.write_text("name = \n")
    with pytest.raises(ConfigError, match=r"broken\.toml: not valid TOML"):
        load_robot(path)


def test_unknown_robot_lists_builtins() -> None:
    with pytest.raises(ConfigError, match="pioneer3dx"):
        load_robot("no-such-robot")


def test_config_check_cli_reports_every_problem_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text(
        GOOD.replace("track_width = 0.4", 'track_width = "wide"')
        .replace("wheel_diameter = 0.2\n", "")
        .replace("[footprint]", "[footprint]\ncolour = 1")
    )
    good = tmp_path / "good.toml"
    good.write_text(GOOD)
    result = CliRunner().invoke(app, ["config", "check", str(good), str(bad)])
    assert result.exit_code == 2
    output = result.output
    assert f"{good}: ok" in output
    for field in ("drive.track_width", "drive.wheel_diameter", "footprint.colour"):
        assert f"{bad}: {field}:" in output


def test_zone_boundaries_must_increase(tmp_path: Path) -> None:
    path = tmp_path / "zones.toml"
    path.write_text(
        GOOD.replace(
            "zones = [{ boundary = 0.6, max_speed = 0.1, max_turn_rate_deg = 10.0 }]",
            "zones = [{ boundary = 0.9, max_speed = 0.1, max_turn_rate_deg = 10.0 },"
            " { boundary = 0.6, max_speed = 0.1, max_turn_rate_deg = 10.0 }]",
        )
    )
    with pytest.raises(ConfigError) as info:
        load_robot(path)
    assert any("safety" in p and "increase" in p for p in info.value.problems)
