"""A description's ``[laser]``: its mount's yaw, an upside-down flag, what it pins of a ROS
scan's layout (what it gives, unless ``pinned`` says), further lasers on their own topics; and
every shipped description's laser loads as it did."""

from __future__ import annotations

from pathlib import Path

import pytest

from freelook.config import LaserConfig, RobotConfig, builtin_robots, load_robot
from freelook.errors import ConfigError
from freelook.experiments._added_laser import with_added_laser

ROBOTS = Path(__file__).parents[2] / "src/freelook/config/robots"

#: each shipped laser as it loaded before a laser had a yaw, a flag or pins
SHIPPED = {
    "pioneer3dx": (0.17, 0.0, 181, 180.0, 75.0, 30.0, 0.02, 0.01),
    "ros2-diff-base": (0.12, 0.0, 541, 270.0, 20.0, 25.0, 0.06, 0.01),
    "ros2-tracked-pan-tilt": (0.35, 0.0, 541, 270.0, 20.0, 25.0, 0.06, 0.01),
    "taros": (0.85, 0.0, 181, 180.0, 75.0, 30.0, 0.02, 0.01),
}
#: descriptions that came with their lasers' mounts (tests/config/test_real_robots.py)
LATER = {"husky", "jackal", "scout-mini", "turtlebot4"}


def _with_laser(tmp_path: Path, laser: str) -> Path:
    """The Pioneer's description with another ``[laser]`` section."""
    text = (ROBOTS / "pioneer3dx.toml").read_text()
    start = text.index("[laser]")
    end = text.index("\n[", start + 1)
    path = tmp_path / "robot.toml"
    path.write_text(text[:start] + laser.strip() + "\n" + text[end:])
    return path


def _values(laser: LaserConfig) -> tuple[float | int, ...]:
    return (
        laser.mount_forward,
        laser.mount_left,
        laser.beams,
        laser.fov_deg,
        laser.rate_hz,
        laser.range_max,
        laser.range_min,
        laser.noise_std,
    )


def test_the_foi_ugv_has_the_papers_sensors_and_its_added_laser_is_the_one_it_had() -> None:
    # Ögren 2013's UGV had a gyro and the motor encoders, no laser: its description neither;
    # the rows that add one get the laser the description once defined
    foi = load_robot("foi-ugv")
    assert foi.laser is None
    assert foi.gyro is not None
    added = with_added_laser(foi)
    assert added.laser is not None
    assert _values(added.laser) == (0.4, 0.0, 181, 180.0, 75.0, 30.0, 0.02, 0.01)
    assert added.estimation.mcl_lateral_noise == 0.15
    # a robot with a laser of its own keeps it; one with none and none to add is refused
    pioneer = load_robot("pioneer3dx")
    assert with_added_laser(pioneer) is pioneer
    with pytest.raises(ValueError, match="m2p2: no laser of its own"):
        with_added_laser(load_robot("m2p2").model_copy(update={"laser": None}))


def test_every_shipped_laser_loads_as_it_did() -> None:
    for name in builtin_robots():
        laser = load_robot(name).laser
        if name in LATER:
            continue
        if name not in SHIPPED:
            assert laser is None, name
            continue
        assert laser is not None
        assert _values(laser) == SHIPPED[name], name
        assert (laser.yaw_deg, laser.upside_down, laser.extra) == (0.0, False, ()), name
    # the Pioneer and the tracked ROS base pin their layout; the generic base takes any
    assert load_robot("pioneer3dx").laser.pinned == ("beams", "fov_deg")  # type: ignore[union-attr]
    tracked = load_robot("ros2-tracked-pan-tilt").laser
    assert tracked is not None
    assert tracked.pinned == ("beams", "fov_deg")
    diff = load_robot("ros2-diff-base").laser
    assert diff is not None
    assert diff.pinned == ()
    taros = load_robot("taros").laser  # beams and fov_deg by default: nothing pinned
    assert taros is not None
    assert taros.pinned == ()


def test_what_a_description_gives_of_beams_and_fov_deg_is_pinned() -> None:
    assert LaserConfig().pinned == ()
    assert LaserConfig(beams=360).pinned == ("beams",)
    assert LaserConfig(fov_deg=359.0).pinned == ("fov_deg",)
    assert LaserConfig(beams=360, fov_deg=359.0).pinned == ("beams", "fov_deg")
    assert LaserConfig(beams=360, fov_deg=359.0, pinned=()).pinned == ()
    assert LaserConfig(pinned=("beams",)).pinned == ("beams",)  # the default 181 pinned
    # a dump loads back with the same pins (a description handed to another process)
    for laser in (LaserConfig(beams=360), LaserConfig(), LaserConfig(beams=5, pinned=())):
        assert LaserConfig.model_validate_json(laser.model_dump_json()).pinned == laser.pinned
    config = load_robot("ros2-diff-base")
    again = RobotConfig.model_validate_json(config.model_dump_json())
    assert again.laser == config.laser


def test_a_laser_s_yaw_flag_and_further_lasers_are_read_from_the_file(tmp_path: Path) -> None:
    path = _with_laser(
        tmp_path,
        """
[laser]
mount_forward = 0.3
yaw_deg = 90.0
upside_down = true

[[laser.extra]]
topic = "scan_rear"
mount_forward = -0.3
yaw_deg = 180.0
frame = "rear_laser"
beams = 541
""",
    )
    laser = load_robot(str(path)).laser
    assert laser is not None
    assert laser.yaw_deg == 90.0
    assert laser.upside_down
    assert laser.pinned == ()
    (rear,) = laser.extra
    assert (rear.topic, rear.mount_forward, rear.yaw_deg, rear.frame) == (
        "scan_rear",
        -0.3,
        180.0,
        "rear_laser",
    )
    assert rear.pinned == ("beams",)
    assert not rear.upside_down


@pytest.mark.parametrize(
    ("laser", "field"),
    [
        ('[laser]\npinned = ["angle_min"]', "laser.pinned"),
        ("[laser]\nyaw_deg = 400.0", "laser.yaw_deg"),
        ('[laser]\nupside_down = "maybe"', "laser.upside_down"),
        ('[laser]\n[[laser.extra]]\ntopic = "scan rear"', "laser.extra.0.topic"),
        ("[laser]\n[[laser.extra]]\nmount_forward = 1.0", "laser.extra.0.topic"),
        ('[laser]\n[[laser.extra]]\ntopic = "r"\nyaw = 1.0', "laser.extra.0.yaw"),
        ('[laser]\n[[laser.extra]]\ntopic = "r"\n[[laser.extra]]\ntopic = "r"', "must differ"),
    ],
)
def test_a_bad_laser_section_names_the_field(tmp_path: Path, laser: str, field: str) -> None:
    with pytest.raises(ConfigError) as caught:
        load_robot(str(_with_laser(tmp_path, laser)))
    assert field in "\n".join(caught.value.problems)
