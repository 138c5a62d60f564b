"""``freelook robot --hardware judp://…`` refusing to start, as a user sees it: one line naming
the address, what was asked and what was answered, exit code 2, no traceback."""

from __future__ import annotations

import asyncio
import os
import sys

import pytest
from jaus_emulator import JausEmulator


async def _run_robot(emulator: JausEmulator) -> tuple[int, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "freelook.cli",
        "robot",
        "--robot",
        "m2p2",
        "--hardware",
        f"judp://127.0.0.1:{emulator.port}",
        "--listen",
        "udp://127.0.0.1:0",
        "--wire",
        "thesis",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    async with asyncio.timeout(180):  # a first start compiles the program's loops ahead
        _, err = await process.communicate()
    assert process.returncode is not None
    return process.returncode, err.decode()


def _last_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err
    return lines[-1]


@pytest.mark.parametrize(
    ("emulator", "expected"),
    [
        (JausEmulator(silent=True), "no answer to QueryIdentification within 3.0 s"),
        (
            JausEmulator(refuse_with=2),
            "refused control to authority 5: ConfirmControl INSUFFICIENT_AUTHORITY",
        ),
    ],
    ids=["silent", "refusing"],
)
def test_a_robot_that_will_not_be_driven_is_one_line_and_exit_2(
    emulator: JausEmulator, expected: str
) -> None:
    async def run() -> None:
        await emulator.start()
        try:
            code, err = await _run_robot(emulator)
        finally:
            await emulator.stop()
        assert code == 2, err
        line = _last_line(err)
        assert line.startswith(f"the JAUS robot at 127.0.0.1:{emulator.port}: ")
        assert expected in line

    asyncio.run(run())
