"""``freelook robot`` and ``freelook operator`` started as a user starts them, for the video
tests that drive a page synchronously meanwhile (``cli_processes`` is for tests on an event
loop): each process's stdout and stderr read on threads, every line kept with the time it
came (the robot's rate log is read against the test's own instants), and a wait for a line
that names what it waited for and what the program said instead."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from typing import IO

from waiting import wait_until

__all__ = ["ANNOUNCED_URL", "Output", "Program", "start", "wait_for_line"]

FREELOOK = [sys.executable, "-m", "freelook.cli"]
ANNOUNCED_URL = re.compile(r"open (https?://\S+)")


class Output:
    """A process's output lines, each with the monotonic time it was read (a reader thread)."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[tuple[float, str]] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        with stream:
            for line in stream:
                with self._lock:
                    self.lines.append((time.monotonic(), line.rstrip("\n")))

    def snapshot(self) -> list[tuple[float, str]]:
        with self._lock:
            return list(self.lines)

    def find(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        for _, line in self.snapshot():
            if found := pattern.search(line):
                return found
        return None


@dataclass
class Program:
    process: subprocess.Popen[str]
    out: Output
    err: Output

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def start(*args: str) -> Program:
    process = subprocess.Popen(
        [*FREELOOK, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    assert process.stderr is not None
    return Program(process, Output(process.stdout), Output(process.stderr))


def wait_for_line(program: Program, pattern: re.Pattern[str], within: float, what: str) -> str:
    def seen() -> re.Match[str] | None:
        if program.process.poll() is not None:
            raise AssertionError(
                f"{what}: the program ended ({program.process.returncode}): "
                f"{[line for _, line in program.out.snapshot() + program.err.snapshot()]}"
            )
        return program.out.find(pattern)

    found = wait_until(
        seen,
        within,
        what,
        every=0.1,
        show=lambda: [line for _, line in program.out.snapshot() + program.err.snapshot()][-8:],
    )
    return found.group(0)
