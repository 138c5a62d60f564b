"""Bench cases register themselves: the harness imports none, each package's ``bench_cases``
registers its own, and ``freelook bench --list`` shows every package's."""

from __future__ import annotations

import subprocess
import sys

from typer.testing import CliRunner

from freelook.cli import app

#: one case of each package that has some
SAMPLE = {
    "arm": "arm.check_taros",
    "experiments": "experiment.reckless_1000",
    "hardware": "ros2.cpu",
    "hardware.sim": "estimation.mcl_2000x60",
    "kinematics": "kinematics.flc_vectorised",
    "launch": "web.input_to_wheel",
    "link": "link.native_command",
    "operator": "foxglove.live_telemetry",
    "record": "record.report_30min",
    "safety": "safety.check_181",
    "sim": "sim.lockstep",
    "sim.arm": "sim.arm_step",
}


def _registered_after(statement: str) -> set[str]:
    probe = f"{statement}\nfrom freelook.bench import registered\nprint(' '.join(registered()))"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=300, check=True
    )
    return set(done.stdout.split())


def test_the_harness_alone_registers_nothing() -> None:
    assert _registered_after("import freelook.bench") == set()


def test_each_package_registers_its_own_cases() -> None:
    link = _registered_after("from freelook.link import bench_cases")
    assert SAMPLE["link"] in link
    assert all(name.startswith("link.") for name in link)
    sim = _registered_after("from freelook.sim import bench_cases")
    assert {SAMPLE["sim"], SAMPLE["sim.arm"]} <= sim
    assert SAMPLE["link"] not in sim


def test_bench_list_shows_every_package_s_cases() -> None:
    listed = CliRunner().invoke(app, ["bench", "--list"])
    assert listed.exit_code == 0, listed.output
    names = listed.output.split()
    assert names == sorted(names)
    assert len(names) == len(set(names))
    missing = {package: name for package, name in SAMPLE.items() if name not in names}
    assert missing == {}
