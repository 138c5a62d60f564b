"""Memory benchmarks: resident set size of the robot program over a lock-step soak and in real
time (``freelook robot --hardware sim``, also as its first run after an install), and of
``freelook sim``, each measured in a process of its own beside the floor every freelook process
pays (Python, numpy and numba's compiler after its first call, which loads scipy.linalg for
its BLAS)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from freelook.bench import BenchOptions, Case, benchmark, benchmark_with_options

__all__: list[str] = []

RSS_TARGET_MB = 200.0
GROWTH_LIMIT_MB = 1.0  # after the first simulated minute, over the whole soak

_FLOOR = """
import numpy as np, numba
numba.njit(lambda a: a.sum())(np.zeros(3))
status = open("/proc/self/status").read()
print(int(status.split("VmRSS:")[1].split()[0]) / 1024)
"""


def floor_mb() -> float:
    """RSS of a process holding only what every freelook process must (see module doc)."""
    out = subprocess.run(
        [sys.executable, "-c", _FLOOR], capture_output=True, text=True, check=True, timeout=120
    )
    return float(out.stdout.split()[-1])


def _tree_rss_mb(pid: int) -> float:
    """RSS of ``pid`` and its children (what one command costs), MB."""
    from freelook.hardware.sim._soak import rss_mb

    total = rss_mb(pid)
    for task in Path(f"/proc/{pid}/task").iterdir():
        for child in (task / "children").read_text().split():
            total += _tree_rss_mb(int(child))
    return total


def _soak_case(run: Callable[[], dict[str, float]], unit: str) -> Case:
    """A soak's case: ``run`` returns its figures (see :func:`_soak_figures`); met when the
    last sample is at most 200 MB and the RSS grew by at most 1 MB after the first minute."""
    figures: dict[str, float] = {}

    def measured() -> float:
        if figures["growth_mb"] > GROWTH_LIMIT_MB:
            return float("inf")
        return figures["end_mb"]

    return Case(
        run=lambda: figures.update(run()),
        calls=1,
        target_s=RSS_TARGET_MB,
        measured=measured,
        target_label=f"RSS ≤ {RSS_TARGET_MB:g} MB, growth ≤ {GROWTH_LIMIT_MB:g} MB",
        unit=unit,
        extra=lambda: dict(figures),
    )


def _soak_figures(samples: list[tuple[float, float]], **more: float) -> dict[str, float]:
    """A soak's figures from its (seconds since the start, RSS MB) samples: the first, last
    and largest RSS, its growth after the first minute, ``more`` and the floor."""
    settled = [rss for t, rss in samples if t >= 60.0] or [samples[-1][1]]
    return {
        "start_mb": samples[0][1],
        "end_mb": samples[-1][1],
        "max_mb": max(rss for _, rss in samples),
        "growth_mb": settled[-1] - settled[0],
        **more,
        "samples": float(len(samples)),
        "floor_mb": floor_mb(),
    }


@benchmark_with_options("memory.robot_soak")
def robot_soak(options: BenchOptions) -> Case:
    """The robot program (pioneer3dx in lab, MCL, safety, lasers, sonar, gyro, encoders) in
    lock-step for ``--soak-minutes`` simulated minutes in a process of its own, its RSS
    sampled every 30 simulated seconds. Met when the last sample is at most 200 MB and the
    RSS grew by at most 1 MB after the first simulated minute."""

    def run() -> dict[str, float]:
        command = [sys.executable, "-m", "freelook.hardware.sim._soak", str(options.soak_minutes)]
        out = subprocess.run(command, capture_output=True, text=True, check=True)
        lines = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
        first, last = lines[0], lines[-1]
        return _soak_figures(
            [(line["t"], line["rss_mb"]) for line in lines],
            simulated_min=last["t"] / 60.0,
            realtime_factor=(last["t"] - first["t"]) / max(1e-9, last["wall"] - first["wall"]),
        )

    return _soak_case(run, "soak")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is None:
        os.kill(process.pid, signal.SIGINT)
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.kill(process.pid, signal.SIGKILL)
            process.wait()


def _sampled_rss(
    process: subprocess.Popen[bytes], name: str, count: int, period: float
) -> list[float]:
    """The RSS of ``process`` and its children (MB), ``count`` times every ``period`` s; a
    process that exits meanwhile is an error."""
    samples = []
    for _ in range(count):
        time.sleep(period)
        if process.poll() is not None:
            raise RuntimeError(f"{name} exited with {process.returncode}")
        samples.append(_tree_rss_mb(process.pid))
    return samples


def _robot_command() -> list[str]:
    """``freelook robot --hardware sim`` on a free loopback port, unauthenticated."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    freelook = Path(sys.executable).with_name("freelook")
    return [
        str(freelook),
        "robot",
        "--hardware",
        "sim",
        "--insecure",
        "--listen",
        f"udp://127.0.0.1:{port}",
    ]


@benchmark_with_options("memory.robot_realtime")
def robot_realtime(options: BenchOptions) -> Case:
    """``freelook robot --hardware sim`` (pioneer3dx in lab, MCL, safety, every sensor) in real
    time on loopback for ``--soak-minutes`` wall minutes, its RSS sampled every 10 s. Met when
    the last sample is at most 200 MB and the RSS grew by at most 1 MB after the first minute."""

    def run() -> dict[str, float]:
        process = subprocess.Popen(
            _robot_command(),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        samples: list[tuple[float, float]] = []
        start = time.monotonic()
        try:
            while (elapsed := time.monotonic() - start) < options.soak_minutes * 60.0:
                time.sleep(min(10.0, max(0.5, options.soak_minutes * 60.0 - elapsed)))
                if process.poll() is not None:
                    raise RuntimeError(f"freelook robot exited with {process.returncode}")
                samples.append((time.monotonic() - start, _tree_rss_mb(process.pid)))
        finally:
            _stop(process)
        return _soak_figures(samples, minutes=samples[-1][0] / 60.0)

    return _soak_case(run, "run")


@benchmark("memory.robot_first_run")
def robot_first_run() -> Case:
    """``freelook robot --hardware sim`` as after an install: numba's cache empty (a fresh
    ``NUMBA_CACHE_DIR``), so its loops are compiled (ahead, in a child) before it starts. RSS
    of the robot's process, sampled every 10 s for a minute from when it listens. Met when the
    last sample is at most 200 MB."""
    figures: dict[str, float] = {}

    def run() -> None:
        with tempfile.TemporaryDirectory() as cache:
            start = time.monotonic()
            process = subprocess.Popen(
                _robot_command(),
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env={**os.environ, "NUMBA_CACHE_DIR": cache},
            )
            try:
                assert process.stdout is not None
                if not process.stdout.readline().startswith(b"robot "):
                    raise RuntimeError(f"freelook robot exited with {process.wait()}")
                ready = time.monotonic() - start
                samples = _sampled_rss(process, "freelook robot", 6, 10.0)
            finally:
                _stop(process)
        figures.update(
            ready_s=ready,
            start_mb=samples[0],
            end_mb=samples[-1],
            max_mb=max(samples),
            floor_mb=floor_mb(),
        )

    return Case(
        run=run,
        calls=1,
        target_s=RSS_TARGET_MB,
        measured=lambda: figures["end_mb"],
        target_label=f"RSS ≤ {RSS_TARGET_MB:g} MB",
        unit="run",
        extra=lambda: dict(figures),
    )


@benchmark("memory.freelook_sim")
def freelook_sim() -> Case:
    """``freelook sim`` (robot server, simulator, operator station and cockpit server in one
    process, no browser, no recording) on loopback for 20 s; RSS sampled every 2 s."""
    figures: dict[str, float] = {}

    def run() -> None:
        with socket.socket() as probe:  # a free loopback port for the cockpit
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        freelook = Path(sys.executable).with_name("freelook")
        command = [str(freelook), "sim", "--no-browser", "--no-record", "--port", str(port)]
        process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
        )
        try:
            samples = _sampled_rss(process, "freelook sim", 10, 2.0)
        finally:
            _stop(process)
        figures.update(end_mb=samples[-1], max_mb=max(samples), floor_mb=floor_mb())

    return Case(
        run=run,
        calls=1,
        unit="20 s run",
        measured=lambda: figures["end_mb"],
        extra=lambda: dict(figures),
    )
