"""What one interface of an adversarial campaign came to: inputs tried, crashes, unauthorised
effects, and the driver's share of telemetry and video under a flood."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["ProcessUnderAttack", "Tally"]


@dataclass
class Tally:
    """One interface's figures; ``kinds`` counts the inputs tried by kind."""

    interface: str
    inputs: int = 0
    crashes: int = 0
    unauthorised: int = 0
    kinds: Counter[str] = field(default_factory=Counter)
    notes: list[str] = field(default_factory=list)
    telemetry_share: float | None = None  # under a flood: the driver's rate / the quiet rate
    video_share: float | None = None

    def tried(self, kind: str, count: int = 1) -> None:
        self.inputs += count
        self.kinds[kind] += count

    def crash(self, what: str) -> None:
        self.crashes += 1
        self.notes.append(f"crash: {what}")

    def effect(self, what: str) -> None:
        self.unauthorised += 1
        self.notes.append(f"unauthorised: {what}")


class ProcessUnderAttack:
    """A ``freelook`` command run as its own process, its standard error kept in a file: it
    crashed if it ended, or printed a traceback, while it was attacked."""

    def __init__(
        self, *args: str, cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        self._err = tempfile.NamedTemporaryFile(  # noqa: SIM115 (held for the process's life)
            prefix="freelook-attack-", suffix=".err", delete=False
        )
        self.process = subprocess.Popen(
            [sys.executable, "-m", "freelook.cli", *args],
            stdout=subprocess.PIPE,
            stderr=self._err,
            text=True,
            cwd=cwd,
            env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"},
        )
        self.lines: list[str] = []
        self.command = f"freelook {args[0]}"

    def wait_line(self, marker: str) -> str:
        """The first line of its output containing ``marker`` (its startup's announcement);
        raises naming the marker and what it printed if it ends before."""
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            line = stdout.readline()
            if not line:
                raise RuntimeError(
                    f"{self.command} ended before printing {marker!r}: "
                    f"{self.lines[-5:]} {self.errors()[-800:]}"
                )
            self.lines.append(line)
            if marker in line:
                return line

    def errors(self) -> str:
        return Path(self._err.name).read_text(errors="replace")

    def problems(self) -> list[str]:
        """Why it counts as crashed: it ended, or wrote a traceback."""
        found = []
        if self.process.poll() is not None:
            found.append(f"exited with {self.process.returncode}")
        errors = self.errors()
        if "Traceback" in errors:
            start = errors.index("Traceback")
            found.append("traceback: " + " | ".join(errors[start:].splitlines()[-3:]))
        return found

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()
        self._err.close()
        Path(self._err.name).unlink(missing_ok=True)
