"""The descriptions of real robots: each loads, says where each of its numbers comes from, and
its skid-steer bases are of the skid_steer kind."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from freelook.config import builtin_robots, load_robot

REAL = ("husky", "jackal", "turtlebot4", "scout-mini")
SKID_STEER = ("husky", "jackal", "scout-mini")
#: a line setting a number (a key = a number, or a table of zones)
NUMBER = re.compile(r"^\s*[a-z_]+\s*=\s*[-+]?\d")


def text(name: str) -> str:
    return (resources.files("freelook.config.robots") / f"{name}.toml").read_text("utf-8")


def test_the_real_robots_ship() -> None:
    assert set(REAL) <= set(builtin_robots())


@pytest.mark.parametrize("name", REAL)
def test_every_number_has_its_source_beside_it(name: str) -> None:
    # a number read from a URDF, a controller's file or a data sheet names it; one freelook
    # chose says so ("not published", "freelook's choice", a placeholder section says why)
    lines = text(name).splitlines()
    unsourced = []
    for i, line in enumerate(lines):
        if not NUMBER.match(line) or "#" in line:
            continue
        above = lines[i - 1] if i else ""
        if above.lstrip().startswith("#"):
            continue  # the comment above says it
        section = next((lines[j] for j in range(i, -1, -1) if lines[j].startswith("[")), "")
        if section in ("[safety]", "[limits]", "[laser]") or section.startswith("[ros2"):
            continue  # freelook's own settings for the robot, and a placeholder lidar's
        unsourced.append(line.strip())
    assert not unsourced, f"{name}: numbers without a source: {unsourced}"
    assert "Sources" in text(name)


@pytest.mark.parametrize("name", REAL)
def test_a_real_robot_loads_within_its_own_limits(name: str) -> None:
    robot = load_robot(name)
    assert robot.name == name
    fp = robot.footprint
    # the swing radius reaches the body's sides (a round TurtleBot's its rim, a box's corners)
    assert fp.swing_radius >= 0.5 * max(fp.length, fp.width)
    assert robot.laser is not None
    assert robot.laser.pinned == ()  # a ROS scan of any layout is taken
    assert robot.safety.zones[0].boundary > fp.swing_radius


@pytest.mark.parametrize("name", SKID_STEER)
def test_the_skid_steer_bases_are_of_the_skid_steer_kind(name: str) -> None:
    robot = load_robot(name)
    assert robot.drive.kind == "skid_steer"
    assert robot.lateral_skid_noise == pytest.approx(0.25 * robot.footprint.length)


def test_the_clearpath_bases_turn_with_their_controllers_multiplied_width() -> None:
    # clearpath_control's wheel_separation × wheel_separation_multiplier
    husky, jackal = load_robot("husky"), load_robot("jackal")
    assert husky.drive.d_eff == pytest.approx(0.555 * 1.875, abs=1e-3)
    assert jackal.drive.d_eff == pytest.approx(0.37559 * 1.5, abs=1e-3)
    assert husky.ros2.topics.odom == "platform/odom"
    assert load_robot("turtlebot4").laser.yaw_deg == 90.0  # type: ignore[union-attr]
