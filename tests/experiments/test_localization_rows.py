"""The localization rows judge a robot that drove: a search that settled standing (or turning
on the spot) counts for nothing, and a frozen robot fails every row, on the lab's tour and on
a map file."""

from __future__ import annotations

from pathlib import Path

import pytest

from freelook.experiments import Fault, injected, run_experiment
from freelook.experiments import _localization as loc
from freelook.experiments._localization_table import (
    MIN_DRIVEN,
    _search_row,
    _search_table,
    localization_on_map,
    still_note,
)


def _nothing(done: int, total: int) -> None:
    pass


def _log(distance: float) -> loc.TourLog:
    """A search that found its place at 1 s and kept it, having driven ``distance``."""
    log = loc.TourLog([0.5, 1.0, 1.5], [0.8, 0.01, 0.01], [3.0, 0.5, 0.5], [False, True, True])
    log.distance = distance
    return log


def test_a_search_counts_only_when_its_robot_drove() -> None:
    searches = [(1.0, _log(MIN_DRIVEN + 0.5)), (1.0, _log(0.02)), (None, _log(3.0))]
    good, still, text = _search_row("within 10 s", searches, 10.0)
    assert (good, still) == (1, 1)
    assert text.startswith("1 of 3 within 10 s (33 %, median 1.0 s, not all settled); 1 drove")
    table = _search_table("searches", searches, 7, 10.0)
    assert [line[-1] for line in table.lines] == ["yes", "**no**", "**no**"]
    assert [line[0] for line in table.lines] == ["seed 7", "seed 8", "seed 9"]


ROOM = [(0, 0, 8000, 0), (8000, 0, 8000, 6000), (8000, 6000, 0, 6000), (0, 6000, 0, 0)]
ROOM += [(3000, 0, 3000, 2500), (5500, 6000, 5500, 3500), (1000, 4500, 1800, 4500)]


@pytest.fixture(scope="module")
def room(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("maps") / "room.map"
    lines = "\n".join(" ".join(str(v) for v in line) for line in ROOM)
    path.write_text(f"2D-Map\nLineMinPos: 0 0\nLineMaxPos: 8000 6000\nLINES\n{lines}\nDATA\n")
    return path


@pytest.mark.slow
def test_a_frozen_robot_fails_every_row_on_a_map(room: Path) -> None:
    with injected(Fault.FROZEN):
        result = localization_on_map(str(room), 2, 1, _nothing)
    judged = [row for row in result.rows if row.ok is not None]
    assert len(judged) == 2
    assert [row.ok for row in judged] == [False, False], [row.ours for row in judged]
    assert "2 drove under 1 m" in judged[1].ours
    assert result.notes == [still_note(2, 2)]


@pytest.mark.slow
def test_a_frozen_robot_fails_every_row_in_the_lab() -> None:
    # its tracks turn, the ground does not: the odometry drives the tour, the laser stays
    with injected(Fault.FROZEN):
        result = run_experiment("localization", 1, 1, _nothing)
    judged = [row for row in result.rows if row.ok is not None]
    assert len(judged) == 3
    assert [row.ok for row in judged] == [False] * 3, [row.ours for row in judged]
