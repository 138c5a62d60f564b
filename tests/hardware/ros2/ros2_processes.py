"""The freelook processes the ROS 2 tests start as a user starts them, and a free port."""

from __future__ import annotations

import asyncio
import os
import re
import socket
import sys
from collections.abc import Callable

#: s a robot program or ``sim --ros2`` may take to serve: its first start compiles its loops
FIRST_START = 480.0
#: a native link key for the tests' robot programs and operators
TEST_KEY = "a-key-for-this-test-only"
ANNOUNCED_URL = re.compile(r"open (https?://\S+)")
#: the per-test timeout of a test that starts one (its first start, then the test itself)
CLI_TEST_TIMEOUT = 720


def free_udp_port(kind: int = socket.SOCK_DGRAM) -> int:
    """A loopback port free now (UDP; ``socket.SOCK_STREAM``: TCP)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def start_cli(
    *args: str, ready: Callable[[str], bool]
) -> tuple[asyncio.subprocess.Process, list[str]]:
    """``freelook ARGS`` as a user starts it; returns it once a line it printed is ``ready``,
    with its lines so far."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "freelook.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    lines: list[str] = []
    # a first start compiles the program's loops ahead, in a child, before it serves: on a
    # fresh install of a 2-core machine that others load too, that took over 300 s
    try:
        async with asyncio.timeout(FIRST_START):
            while True:
                line = (await process.stdout.readline()).decode()
                assert line, f"freelook {args[0]} ended before serving:\n" + "".join(lines)
                lines.append(line)
                if ready(line):
                    return process, lines
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(
            f"waited {FIRST_START:g} s for freelook {args[0]} to serve; it said:\n" + "".join(lines)
        ) from None


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


async def stop(process: asyncio.subprocess.Process) -> None:
    if process.returncode is None:
        process.terminate()
        async with asyncio.timeout(10):
            await process.wait()


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
