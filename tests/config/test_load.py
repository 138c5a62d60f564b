"""Robot descriptions: built-ins validate, bad files name file and field."""

from __future__ import annotations

import math
import os
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


def _problems(tmp_path: Path, text: str) -> list[str]:
    path = tmp_path / "robot.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_robot(path)
    return info.value.problems


@pytest.mark.parametrize(
    ("edit", "field", "expected"),
    [
        (("zones = [", "watchdog_timeout = 1e9\nzones = ["), "safety.watchdog_timeout", "2"),
        (("zones = [", "watchdog_timeout = 0.01\nzones = ["), "safety.watchdog_timeout", "0.05"),
        (("zones = [", "watchdog_timeout = nan\nzones = ["), "safety.watchdog_timeout", "finite"),
        (("zones = [", "approach_margin = 3.0\nzones = ["), "safety.approach_margin", "0.5"),
        (("zones = [", "approach_horizon = 0.0\nzones = ["), "safety.approach_horizon", "0.1"),
        (("zones = [", "approach_horizon = inf\nzones = ["), "safety.approach_horizon", "finite"),
        (("length = 0.5", "length = inf"), "footprint.length", "finite"),
        (("max_wheel_speed = 1.0", "max_wheel_speed = nan"), "drive.max_wheel_speed", "finite"),
        (("max_wheel_speed = 1.0", "max_wheel_speed = 1e6"), "drive.max_wheel_speed", "10"),
        (
            ("max_speed = 0.1,", "max_speed = 1.5,"),
            "safety.zones.0.max_speed",
            "at most drive.max_wheel_speed = 1 m/s (got 1.5)",
        ),
        (
            ("max_turn_rate_deg = 10.0 }", "max_turn_rate_deg = 91.0 }"),
            "safety.zones.0.max_turn_rate_deg",
            "at most drive.max_turn_rate_deg = 90 deg/s (got 91.0)",
        ),
        (
            ("[safety]", "[limits]\nmax_speed = 1.2\n[safety]"),
            "limits.max_speed",
            "at most drive.max_wheel_speed = 1 m/s (got 1.2)",
        ),
        (
            ("[safety]", "[limits]\nlinear_max_speed = 2.0\n[safety]"),
            "limits.linear_max_speed",
            "at most drive.max_wheel_speed",
        ),
        (
            ("[safety]", "[limits]\nmax_turn_rate_deg = 120.0\n[safety]"),
            "limits.max_turn_rate_deg",
            "at most drive.max_turn_rate_deg = 90 deg/s",
        ),
        (
            ("[safety]", "[limits]\nkeyboard_speed_step = 0.9\n[safety]"),
            "limits.keyboard_speed_step",
            "at most limits.max_speed",
        ),
        (
            ("[safety]", "[link]\ncontrol_period = 0.6\n[safety]"),
            "safety.watchdog_timeout",
            "longer than link.control_period",
        ),
    ],
)
def test_safety_values_are_bounded_and_finite(
    tmp_path: Path, edit: tuple[str, str], field: str, expected: str
) -> None:
    text = GOOD.replace(*edit)
    assert text != GOOD
    problems = _problems(tmp_path, text)
    path = tmp_path / "robot.toml"
    assert any(p.startswith(f"{path}: {field}: ") and expected in p for p in problems), problems


def test_every_value_beyond_the_drive_is_reported_at_once(tmp_path: Path) -> None:
    text = GOOD.replace(
        "[safety]", "[limits]\nmax_speed = 5.0\nmax_turn_rate_deg = 500.0\n[safety]"
    )
    text = text.replace("max_speed = 0.1,", "max_speed = 4.0,")
    fields = [p.split(": ")[1] for p in _problems(tmp_path, text)]
    assert fields == ["limits.max_speed", "limits.max_turn_rate_deg", "safety.zones.0.max_speed"]


def test_zone_limits_must_not_grow_inwards(tmp_path: Path) -> None:
    text = GOOD.replace(
        "zones = [{ boundary = 0.6, max_speed = 0.1, max_turn_rate_deg = 10.0 }]",
        "zones = [{ boundary = 0.6, max_speed = 0.3, max_turn_rate_deg = 10.0 },"
        " { boundary = 0.9, max_speed = 0.1, max_turn_rate_deg = 10.0 }]",
    )
    assert any(
        "safety" in p and "must not decrease outwards" in p for p in _problems(tmp_path, text)
    )


def test_config_check_refuses_a_huge_watchdog(tmp_path: Path) -> None:
    path = tmp_path / "slow.toml"
    path.write_text(GOOD.replace("zones = [", "watchdog_timeout = 1e9\nzones = ["))
    result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 2
    assert f"{path}: safety.watchdog_timeout:" in result.output
    assert "less than or equal to 2" in result.output


@pytest.mark.parametrize("name", ["pioneer3dx", "foi-ugv"])
def test_builtins_pass_config_check(name: str) -> None:
    from importlib import resources

    with resources.as_file(resources.files("freelook.config.robots") / f"{name}.toml") as path:
        result = CliRunner().invoke(app, ["config", "check", str(path)])
    assert result.exit_code == 0, result.output


PHYSICAL = """
[laser]
[sonar]
[gyro]
[pan_tilt]
mount_forward = 0.1
mount_height = 0.3
max_pan_rate_deg = 90.0
"""


@pytest.mark.parametrize(
    ("edit", "field"),
    [
        (("wheel_diameter = 0.2", "wheel_diameter = 1e-12"), "drive.wheel_diameter"),
        (("track_width = 0.4", "track_width = 1e6"), "drive.track_width"),
        (("encoder_counts_per_rev = 1000", "encoder_counts_per_rev = 10000000000"), "drive"),
        (("[laser]", "[laser]\nbeams = 10000000"), "laser.beams"),
        (("[laser]", "[laser]\nrate_hz = 1e9"), "laser.rate_hz"),
        (("[laser]", "[laser]\nrange_min = 5.0\nrange_max = 4.0"), "laser"),
        (("max_pan_rate_deg = 90.0", "max_pan_rate_deg = 1e9"), "pan_tilt.max_pan_rate_deg"),
        (("mount_height = 0.3", "mount_height = 1e9"), "pan_tilt.mount_height"),
        (("[sonar]", "[sonar]\nfront_deg = [" + "0.0, " * 40 + "0.0]"), "sonar.front_deg"),
        (("[sonar]", "[sonar]\nrear_deg = [1e9]"), "sonar.rear_deg"),
        (("[gyro]", "[gyro]\nrate_hz = 1e9"), "gyro.rate_hz"),
        (("swing_radius = 0.3", "swing_radius = 1e-9"), "footprint.swing_radius"),
        (("[gyro]", "[gyro]\n[link]\nrobot_tx_spacing = 1e-9"), "link.robot_tx_spacing"),
        (("[gyro]", "[gyro]\n[link]\ncontrol_period = 1e-9"), "link.control_period"),
        (("[gyro]", "[gyro]\n[estimation]\nmcl_particles = 100000000"), "mcl_particles"),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_absurd_numbers_are_refused_naming_the_field(
    tmp_path: Path, edit: tuple[str, str], field: str
) -> None:
    """Values no robot has (a laser of ten million beams, a wheel of a picometre, telemetry
    every nanosecond) would hang or starve the robot program: each is refused by field."""
    path = tmp_path / "absurd.toml"
    good = GOOD + PHYSICAL
    load_robot_text = good.replace(*edit)
    assert load_robot_text != good
    path.write_text(load_robot_text)
    with pytest.raises(ConfigError) as info:
        load_robot(path)
    assert any(str(path) in p and field in p for p in info.value.problems), info.value.problems


def test_the_physical_sections_of_the_absurd_numbers_test_load_as_they_are(
    tmp_path: Path,
) -> None:
    path = tmp_path / "fine.toml"
    path.write_text(GOOD + PHYSICAL)
    assert load_robot(path).laser is not None


@pytest.mark.parametrize("depth", [17, 100_000])
def test_a_deeply_nested_file_is_refused_by_name(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.toml"
    path.write_text(GOOD + "nest = " + "[" * depth + "]" * depth + "\n")
    with pytest.raises(ConfigError, match=r"deep\.toml: nested deeper than 16 levels"):
        load_robot(path)


def test_a_fifo_or_a_directory_given_as_a_robot_or_keys_file_is_refused_at_once(
    tmp_path: Path,
) -> None:
    from freelook.link import KeyRing

    fifo = tmp_path / "robot.toml"
    os.mkfifo(fifo)  # no writer: reading it would wait for ever
    with pytest.raises(ConfigError, match=r"robot\.toml: cannot read file: not a regular file"):
        load_robot(fifo)
    with pytest.raises(ConfigError, match=r"cannot read keys file: not a regular file"):
        KeyRing.load(fifo)
    with pytest.raises(ConfigError, match="not a regular file"):
        load_robot(tmp_path / ".." / tmp_path.name)  # a directory
    result = CliRunner().invoke(app, ["config", "check", str(fifo)])
    assert result.exit_code == 2
    assert "not a regular file" in result.output


def test_a_file_too_large_for_a_description_is_refused_unread(tmp_path: Path) -> None:
    path = tmp_path / "huge.toml"
    path.write_text(GOOD + "# " + "x" * (2 << 20) + "\n")
    with pytest.raises(ConfigError, match=r"huge\.toml: cannot read file: larger than"):
        load_robot(path)
