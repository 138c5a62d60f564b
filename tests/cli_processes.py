"""freelook processes a test starts as a user starts them, read until they serve; a free
loopback port; and a thesis-profile operator that drives a robot program over UDP.

``start_cli("robot", "--robot", "m2p2", …, ready=…)`` runs ``python -m freelook.cli`` with
unbuffered output and returns the process once a line it printed is ``ready``, with its lines
so far. A process that ends first, or says nothing ready before the deadline, fails the test
with everything it said (and is killed), never leaving a later assertion to fail instead.

``ThesisOperator.open(port)`` is the operator of the thesis's wire on loopback UDP: ``send``
encodes and sends a message, ``positions`` holds every position packet heard since it opened,
``close`` stops listening and closes its socket.

Any test imports them: ``from cli_processes import start_cli`` (``tests/`` is on ``sys.path``,
as for ``waiting``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import Callable
from dataclasses import dataclass, field

from freelook.link import Message, PositionReport, ThesisCodec, UdpEndpoint

__all__ = ["FIRST_START", "ThesisOperator", "free_udp_port", "read_until", "start_cli", "stop"]

#: s a robot program or ``sim --ros2`` may take to serve: its first start compiles its loops
FIRST_START = 480.0


def free_udp_port(kind: int = socket.SOCK_DGRAM) -> int:
    """A loopback port free now (UDP; ``socket.SOCK_STREAM``: TCP)."""
    with socket.socket(socket.AF_INET, kind) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def read_until(
    process: asyncio.subprocess.Process,
    lines: list[str],
    done: Callable[[str], bool],
    timeout: float,
    what: str,
) -> None:
    """Read ``process``'s lines into ``lines`` until one is ``done``. If it ends first, or
    nothing is done within ``timeout`` s (then it is killed), an ``AssertionError`` names
    ``what`` was awaited and shows every line it said."""
    assert process.stdout is not None
    try:
        async with asyncio.timeout(timeout):
            while True:
                line = (await process.stdout.readline()).decode()
                assert line, f"the process ended while waiting for {what}:\n" + "".join(lines)
                lines.append(line)
                if done(line):
                    return
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(
            f"waited {timeout:g} s for {what}; the process said:\n" + "".join(lines)
        ) from None


async def start_cli(
    *args: str, ready: Callable[[str], bool], timeout: float = FIRST_START
) -> tuple[asyncio.subprocess.Process, list[str]]:
    """``freelook ARGS`` as a user starts it; returns it once a line it printed is ``ready``
    (within ``timeout`` s), with its lines so far."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "freelook.cli",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        # faulthandler: a process that will not stop shows where each of its threads is
        env={**os.environ, "PYTHONUNBUFFERED": "1", "PYTHONFAULTHANDLER": "1"},
    )
    lines: list[str] = []
    # a first start compiles the program's loops ahead, in a child, before it serves: on a
    # fresh install of a 2-core machine that others load too, that took over 300 s
    await read_until(process, lines, ready, timeout, f"freelook {args[0]} to serve")
    return process, lines


async def stop(process: asyncio.subprocess.Process) -> None:
    """Stop ``process`` as a service manager does (SIGTERM), if it still runs, and wait up to
    10 s for it to end. One that does not is aborted, and the test fails with the stack of
    each of its threads (``start_cli`` starts them with faulthandler on) and its last words."""
    if process.returncode is None:
        process.terminate()
        try:
            async with asyncio.timeout(10):
                await process.wait()
        except TimeoutError:
            process.send_signal(signal.SIGABRT)
            said = b""
            if process.stdout is not None:
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(5):
                        said = await process.stdout.read()
            if process.returncode is None:
                process.kill()
            await process.wait()
            raise AssertionError(
                "the process did not end within 10 s of SIGTERM; where it was:\n"
                + said.decode(errors="replace")[-8000:]
            ) from None


@dataclass
class ThesisOperator:
    """An operator on the thesis's wire talking to the robot program at a loopback UDP port,
    keeping the position packets it hears."""

    endpoint: UdpEndpoint
    codec: ThesisCodec = field(default_factory=ThesisCodec)
    positions: list[PositionReport] = field(default_factory=list)
    listener: asyncio.Task[None] | None = None

    @classmethod
    async def open(cls, port: int) -> ThesisOperator:
        endpoint = await UdpEndpoint.open(("127.0.0.1", 0), remote=("127.0.0.1", port))
        operator = cls(endpoint)
        operator.listener = asyncio.create_task(operator._listen())
        return operator

    async def _listen(self) -> None:
        while True:
            data = await self.endpoint.recv(timeout=0.5)
            if data is not None:
                message = self.codec.decode(data).message
                if isinstance(message, PositionReport):
                    self.positions.append(message)

    def send(self, message: Message) -> None:
        self.endpoint.send(self.codec.encode(message, 0.0))

    def close(self) -> None:
        if self.listener is not None:
            self.listener.cancel()
        self.endpoint.close()
