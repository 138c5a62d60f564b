"""A memory soak of the robot program: the whole program with localization on the lock-step
simulator, its resident set size sampled as simulated time goes by.

Run as ``python -m freelook.hardware.sim._soak MINUTES [SAMPLE_S]``: one JSON line per sample
(simulated seconds, RSS in MB, wall seconds), so the process measured is the robot program
alone, not whatever imported it.
"""

from __future__ import annotations

import json
import math
import sys
import time

__all__ = ["rss_mb", "soak"]


def rss_mb(pid: int | str = "self") -> float:
    """Resident set size of a process (this one by default), MB, from /proc."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise OSError(f"no VmRSS in /proc/{pid}/status")


def soak(minutes: float, sample_s: float = 30.0) -> None:
    """Drive the robot program for ``minutes`` of simulated time, printing RSS samples."""
    from freelook.config import load_robot
    from freelook.hardware.sim import SimulatedRobot
    from freelook.link import VelocityCommand
    from freelook.maps import load_world

    t0 = time.perf_counter()
    robot = SimulatedRobot(load_robot("pioneer3dx"), load_world("lab"), seed=1, pose=(3, 3, 0))

    def sample() -> None:
        line = {"t": robot.now(), "rss_mb": rss_mb(), "wall": time.perf_counter() - t0}
        print(json.dumps(line), flush=True)

    sample()
    elapsed = 0.0
    step = 0.5
    while elapsed < minutes * 60 - 1e-9:
        # a wandering drive: forward, the turn swinging both ways; safety keeps it off walls
        turn = 0.6 * math.sin(elapsed / 7.0)
        robot.send(VelocityCommand(0.4, turn))
        robot.run_for(step)
        elapsed += step
        if elapsed % sample_s < step / 2:
            sample()
    robot.close()


if __name__ == "__main__":
    soak(float(sys.argv[1]), float(sys.argv[2]) if len(sys.argv) > 2 else 30.0)
