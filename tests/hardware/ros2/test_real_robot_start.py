"""``freelook robot --hardware ros2 --robot NAME`` with each real robot's description: the
description loads, the program starts on ROS and waits for that robot's own odometry topic
(none here: one line naming it, exit 2)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from ros2_processes import CLI_TEST_TIMEOUT

from cli_processes import FIRST_START
from freelook.config import load_robot


@pytest.mark.timeout(CLI_TEST_TIMEOUT)
@pytest.mark.parametrize("name", ["husky", "jackal", "turtlebot4", "scout-mini"])
def test_a_real_robots_description_starts_and_waits_for_its_odometry(
    ros_domain: int, name: str
) -> None:
    odom = load_robot(name).ros2.topics.odom
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "freelook.cli",
            "robot",
            "--robot",
            name,
            "--hardware",
            "ros2://r1",
            "--map",
            "none",
            "--wire",
            "thesis",
            "--listen",
            "udp://127.0.0.1:0",
        ],
        capture_output=True,
        text=True,
        timeout=FIRST_START,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if not line.startswith("compiling")]
    assert len(lines) == 1, done.stderr
    # past the description: the program is on ROS, waiting for the robot's own topic
    topic = odom if odom.startswith("/") else f"/r1/{odom}"
    assert f"no message on {topic} (nav_msgs/msg/Odometry)" in lines[0]
    assert "Traceback" not in done.stderr
