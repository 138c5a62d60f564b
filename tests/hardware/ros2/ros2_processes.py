"""The freelook processes the ROS 2 tests start as a user starts them (through
``cli_processes.start_cli``): the robot program on ROS 2 hardware and an operator station."""

from __future__ import annotations

import asyncio
import re

from cli_processes import start_cli
from keys_for_tests import KEY_A

#: a native link key for the tests' robot programs and operators
TEST_KEY = KEY_A
ANNOUNCED_URL = re.compile(r"open (https?://\S+)")
#: the per-test timeout of a test that starts one (its first start, then the test itself)
CLI_TEST_TIMEOUT = 720


async def start_robot_program(
    udp_port: int,
    *extra: str,
    wire: str = "thesis",
    robot: str = "pioneer3dx",
    robot_map: str = "none",
) -> tuple[asyncio.subprocess.Process, list[str]]:
    """The robot program as a user starts it; returns it once it serves, with its lines."""
    return await start_cli(
        "robot",
        "--robot",
        robot,
        "--hardware",
        "ros2",
        "--map",
        robot_map,
        "--listen",
        f"udp://127.0.0.1:{udp_port}",
        "--wire",
        wire,
        *extra,
        ready=lambda line: "profile on" in line,
    )


async def start_operator(
    udp_port: int, web_port: int, key: str
) -> tuple[asyncio.subprocess.Process, str]:
    """``freelook operator`` on the robot at ``udp_port``; returns it once it serves the
    cockpit, with the URL it announced (token included)."""
    process, lines = await start_cli(
        "operator",
        "--robot",
        f"udp://127.0.0.1:{udp_port}",
        "--key",
        key,
        "--no-browser",
        "--no-record",
        "--port",
        str(web_port),
        ready=lambda line: ANNOUNCED_URL.search(line) is not None,
    )
    found = ANNOUNCED_URL.search(lines[-1])
    assert found is not None
    return process, found.group(1)
