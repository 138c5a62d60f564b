"""The processes a bench case starts (a relay, a robot program), stopped when it is done."""

from __future__ import annotations

import subprocess
from typing import Any

__all__ = ["stop_process"]


def stop_process(process: subprocess.Popen[Any], timeout: float = 10.0) -> None:
    """Terminate ``process`` (one the case started), killing it if it outlives ``timeout`` s."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=timeout)
