"""Compiling ahead: a robot's first start builds its compiled loops in a child process, once
for this code: what every robot shares once, what a robot's own features add (an arm) once
more, so the robot's own process only loads them from numba's cache. A backend whose extra
is missing says so before anything is compiled."""

from __future__ import annotations

import fcntl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numba
import pytest
from typer.testing import CliRunner

import freelook.hardware._ahead as ahead
from freelook.cli import app
from freelook.config import load_robot
from freelook.experiments._added_laser import with_added_laser
from freelook.hardware import compile_ahead, release_compiler_pages
from freelook.hardware._ahead import loop_features, stamp_path
from freelook.hardware.ros2 import INSTALL_HINT, ros


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """numba's cache in a fresh directory, for this process and its children (as after an
    install)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path), raising=False)
    # the sources as they are now: an edit elsewhere in the checkout while a test runs would
    # make another install of them (see the test of that below)
    sources = ahead._sources()
    monkeypatch.setattr(ahead, "_sources", lambda: sources)
    return tmp_path


def _cached(cache: Path, name: str) -> bool:
    """Whether numba's cache holds a compiled loop of that (module-qualified) name."""
    return any(cache.rglob(f"{name}-*.nbc"))


def test_a_first_start_compiles_in_a_child_once_and_later_starts_go_straight_on(
    empty_cache: Path,
) -> None:
    config = load_robot("pioneer3dx")
    notes: list[str] = []
    assert compile_ahead(config, camera=True, notify=notes.append)
    assert notes == [
        "compiling the robot program's loops ahead, once for this install (half a minute or more)"
    ]
    assert stamp_path(config, camera=True).exists()
    # the loops a running robot reaches only later are there too: the camera's, the global
    # search's (split over the cores), the obstacle memory's and the heading filter's
    split = numba.config.NUMBA_NUM_THREADS >= 2  # one core: a search is never split
    for name in (
        "_render.render_frame",
        "_kernels.log_weights_split" if split else "_kernels.log_weights",
        "_kernels.log_weights",
        "_memory_cycle.memory_cycle",
        "_heading._predict",
    ):
        assert _cached(empty_cache, name), name
    notes.clear()
    assert not compile_ahead(config, camera=True, notify=notes.append)
    # every robot shares them: robots with nothing of their own, and a backend without the
    # simulator's camera, start straight on
    # (the FOI UGV with the laser freelook adds: its own description has the paper's gyro and
    # encoders alone, fewer features, a stamp of its own)
    for other, camera in (
        (with_added_laser(load_robot("foi-ugv")), True),
        (load_robot("ros2-diff-base"), True),
        (load_robot("pioneer3dx"), False),
    ):
        assert not compile_ahead(other, camera=camera, notify=notes.append), other.name
    assert notes == []


class Children:
    """``subprocess.run`` in compile_ahead, recorded instead of run (each child succeeds)."""

    def __init__(self) -> None:
        self.robots: list[str] = []

    def __call__(self, command: list[str], **kwargs: Any) -> subprocess.CompletedProcess[str]:
        assert command[:3] == [sys.executable, "-m", "freelook.hardware._ahead"]
        self.robots.append(ahead.RobotConfig.model_validate_json(kwargs["input"]).name)
        return subprocess.CompletedProcess(command, 0, "", "")


@pytest.fixture
def children(empty_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Children:
    recorded = Children()
    monkeypatch.setattr(ahead.subprocess, "run", recorded)
    return recorded


def test_what_every_robot_shares_is_compiled_once_and_a_robot_compiles_only_what_it_adds(
    children: Children,
) -> None:
    notes: list[str] = []
    for name in ("pioneer3dx", "foi-ugv", "taros", "m2p2", "ros2-diff-base", "taros"):
        compile_ahead(load_robot(name), camera=True, notify=notes.append)
    compile_ahead(load_robot("pioneer3dx"), camera=False, notify=notes.append)  # another backend
    # the first robot compiles what all share; the TAROS, the first with an arm, its arm's
    # loops; the M2P2's arm is then compiled already
    assert children.robots == ["pioneer3dx", "taros"]
    assert notes == [
        "compiling the robot program's loops ahead, once for this install (half a minute or more)",
        "compiling the robot program's loops ahead: what taros adds to those every robot "
        "shares (arm), once for this install (seconds)",
    ]


def test_other_sources_compile_again(children: Children, monkeypatch: pytest.MonkeyPatch) -> None:
    config = load_robot("pioneer3dx")
    assert compile_ahead(config, camera=True)
    assert not compile_ahead(config, camera=True)
    monkeypatch.setattr(ahead, "_sources", lambda: b"an upgrade")
    notes: list[str] = []
    assert compile_ahead(config, camera=True, notify=notes.append)
    assert notes[0].startswith("compiling the robot program's loops ahead, once for this install")
    assert children.robots == ["pioneer3dx", "pioneer3dx"]


def test_robots_with_the_same_features_share_a_stamp(empty_cache: Path) -> None:
    pioneer = load_robot("pioneer3dx")
    assert loop_features(pioneer, camera=True) == {"camera", "gyro", "laser", "pan_tilt", "sonar"}
    assert loop_features(load_robot("taros"), camera=False) == {"arm", "gyro", "laser", "pan_tilt"}
    assert stamp_path(with_added_laser(load_robot("foi-ugv")), camera=True) == stamp_path(
        load_robot("ros2-diff-base"), camera=True
    )
    stamps = {
        stamp_path(pioneer, camera=True),
        stamp_path(pioneer, camera=False),
        stamp_path(load_robot("taros"), camera=True),
    }
    assert len(stamps) == 3
    assert all(stamp.parent == empty_cache for stamp in stamps)


@pytest.fixture
def no_ros2(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """An install without the ros2 extra: rclpy does not import."""
    monkeypatch.setitem(sys.modules, "rclpy", None)
    ros.cache_clear()
    yield
    ros.cache_clear()


@pytest.mark.parametrize(
    "command",
    [["robot", "--hardware", "ros2", "--insecure"], ["sim", "--ros2", "--no-browser"]],
)
def test_a_missing_ros2_extra_is_said_before_anything_is_compiled(
    children: Children, no_ros2: None, command: list[str]
) -> None:
    result = CliRunner().invoke(app, command)
    assert result.exit_code == 2, result.output
    assert "ROS 2 is not installed here" in result.output
    assert INSTALL_HINT in result.output
    assert "compiling" not in result.output
    assert children.robots == []


def test_a_child_that_fails_leaves_no_stamp_and_says_why(empty_cache: Path) -> None:
    config = load_robot("pioneer3dx")
    # a robot that fits nowhere in the lab: the child cannot place it
    huge = config.model_copy(
        update={"footprint": config.footprint.model_copy(update={"length": 19.0, "width": 19.0})}
    )
    notes: list[str] = []
    assert not compile_ahead(huge, camera=False, notify=notes.append)
    assert not stamp_path(huge, camera=False).exists()
    assert notes[-1].startswith("compiling ahead failed (")
    assert notes[-1].endswith("); the robot compiles as it starts")
    assert "Error" in notes[-1]


def test_robots_started_at_once_take_turns_compiling(empty_cache: Path) -> None:
    """While one robot process checks and compiles, another's try at the lock beside the
    stamps is refused (it would wait), and the lock is free again once the first is done."""

    def lock_is_free() -> bool:
        with open(empty_cache / "freelook-compiled-lock", "a") as other:
            try:
                fcntl.flock(other, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            fcntl.flock(other, fcntl.LOCK_UN)
            return True

    with ahead._one_at_a_time():
        assert not lock_is_free()
    assert lock_is_free()


def _llvm_resident_kb() -> int:
    """kB of llvmlite's library resident in this process."""
    resident, inside = 0, False
    for line in Path("/proc/self/smaps").read_text().splitlines():
        fields = line.split()
        if not fields[0].endswith(":"):
            inside = len(fields) > 5 and "libllvmlite" in fields[5]
        elif inside and fields[0] == "Rss:":
            resident += int(fields[1])
    return resident


@pytest.mark.skipif(not Path("/proc/self/smaps").exists(), reason="Linux's /proc")
def test_llvm_pages_handed_back_come_back_when_a_loop_is_compiled_again() -> None:
    numba.njit(lambda a: a + 1)(1)  # LLVM has run in this process
    assert release_compiler_pages() > 0
    assert _llvm_resident_kb() < 4096  # what is left: the pages relocated at load
    assert numba.njit(lambda a: a * 3)(2) == 6  # compiling still works: the pages come back
    assert _llvm_resident_kb() > 4096
