"""The ``[ros2]`` section of a robot description, and the command line's one-line errors."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from ros2_processes import CLI_TEST_TIMEOUT

from cli_processes import FIRST_START
from freelook.config import builtin_robots, load_robot
from freelook.errors import ConfigError


def test_the_shipped_ros2_descriptions_load_with_the_usual_topics() -> None:
    assert {"ros2-diff-base", "ros2-tracked-pan-tilt"} <= set(builtin_robots())
    diff = load_robot("ros2-diff-base")
    assert diff.ros2.topics.cmd_vel == "cmd_vel"
    assert diff.ros2.topics.scan == "scan"
    assert diff.ros2.topics.joint_states == ""  # a fixed camera: no joints
    assert diff.laser is not None
    assert diff.laser.beams == 541
    tracked = load_robot("ros2-tracked-pan-tilt")
    assert tracked.drive.kind == "tracked"
    assert tracked.ros2.cmd_vel_stamped
    assert tracked.pan_tilt is not None
    assert tracked.pan_tilt.mount_forward != 0.0  # Free Look can run on it
    # a description without a [ros2] section speaks the usual topics
    plain = load_robot("pioneer3dx").ros2
    assert (plain.topics.odom, plain.topics.imu) == ("odom", "imu/data")
    assert plain.topics.camera == "camera/image_raw/compressed"
    assert plain.topics.battery == "battery_state"
    assert plain.sensor_qos == "best_effort"


def test_a_bad_ros2_section_names_the_file_and_each_field(tmp_path: Path) -> None:
    text = (Path(__file__).parents[3] / "src/freelook/config/robots/pioneer3dx.toml").read_text()
    path = tmp_path / "bad.toml"
    path.write_text(
        text
        + '\n[ros2]\nsensor_qos = "fast"\nquiet_timeout = -1\ncmd_vel_stampd = true\n'
        + '[ros2.topics]\nodom = "odom topic"\n'
    )
    with pytest.raises(ConfigError) as caught:
        load_robot(str(path))
    problems = "\n".join(caught.value.problems)
    for field in (
        "ros2.sensor_qos",
        "ros2.quiet_timeout",
        "ros2.cmd_vel_stampd",
        "ros2.topics.odom",
    ):
        assert field in problems
    assert "bad.toml" in problems


def _robot(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "freelook.cli", "robot", "--map", "none", "--wire", "thesis", *args],
        capture_output=True,
        text=True,
        timeout=FIRST_START,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )


@pytest.mark.timeout(CLI_TEST_TIMEOUT)
def test_a_robot_that_is_not_there_is_one_line_and_exit_2(ros_domain: int) -> None:
    where = ("--hardware", "ros2://nobody_here", "--listen", "udp://127.0.0.1:0")
    done = _robot("--robot", "pioneer3dx", *where)
    assert done.returncode == 2
    lines = [line for line in done.stderr.splitlines() if not line.startswith("compiling")]
    assert len(lines) == 1, done.stderr
    assert "no message on /nobody_here/odom (nav_msgs/msg/Odometry)" in lines[0]
    assert "ROS_DOMAIN_ID" in lines[0]
    assert "Traceback" not in done.stderr
    # without --robot it looks for a robot to describe, and finds none
    undescribed = _robot(*where)
    assert undescribed.returncode == 2
    assert undescribed.stderr.splitlines() == [
        "no nav_msgs/Odometry published in namespace /nobody_here (ROS_DOMAIN_ID decides "
        "which robots are seen); published topics: none"
    ]
    bad = _robot("--hardware", "ros2://9lives", "--listen", "udp://127.0.0.1:0")
    assert bad.returncode == 2
    assert "not a ROS name" in bad.stderr
    assert "Traceback" not in bad.stderr
