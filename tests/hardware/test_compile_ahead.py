"""Compiling ahead: a robot's first start builds its compiled loops in a child process, once
for this code and robot, so the robot's own process only loads them from numba's cache."""

from __future__ import annotations

from pathlib import Path

import numba
import pytest

from freelook.config import load_robot
from freelook.hardware import compile_ahead
from freelook.hardware._ahead import stamp_path


@pytest.fixture
def empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """numba's cache in a fresh directory, for this process and its children (as after an
    install)."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path), raising=False)
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
    assert notes == []


def test_each_robot_and_camera_choice_has_its_own_stamp(empty_cache: Path) -> None:
    pioneer = load_robot("pioneer3dx")
    stamps = {
        stamp_path(pioneer, camera=True),
        stamp_path(pioneer, camera=False),
        stamp_path(load_robot("taros"), camera=True),
    }
    assert len(stamps) == 3
    assert all(stamp.parent == empty_cache for stamp in stamps)


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
