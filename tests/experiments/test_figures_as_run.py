"""Ögren 2013 Figs. 6–7 as the paper ran them (the kinematic model under eq. 6): each figure's
claim met within the hold's bound, failed by a frozen robot, untouched by gain 0 (eq. 6 has
no gain); the FOI UGV on its error model beside them fails with a frozen robot too, and its
pull's rows with gain 0."""

from __future__ import annotations

import math

import pytest

from freelook.experiments import Fault, injected, run_experiment
from freelook.experiments._figures import TOLERANCE, ideal_figures, robot_figures
from freelook.experiments._figures_table import FIGURES_DRIVEN, _ideal_rows


def _nothing(done: int, total: int) -> None:
    pass


def test_the_papers_simulation_draws_straight_segments_while_the_chassis_turns() -> None:
    ideal = ideal_figures()
    assert [s.label for s in ideal.fig6] == ["left", "forward", "right", "forward", "left"]
    for s in ideal.fig6:
        assert s.met(), s
        assert s.commanded == pytest.approx(1.0, abs=1e-3)
        assert s.driven == pytest.approx(1.0, abs=TOLERANCE)
        # the chassis turns a quarter or more under each segment, the pan the other way
        assert abs(s.chassis_turn) > math.radians(80)
        assert s.pan_turn == pytest.approx(-s.chassis_turn, abs=1e-9)
    assert ideal.fig6_as_told()  # backs up, stops, moves forward, turning left
    assert ideal.backs_up < -0.25
    assert ideal.ends_forward > 0.25


def test_the_papers_orbit_keeps_its_radius_and_the_camera_on_the_object() -> None:
    ideal = ideal_figures()
    _, orbit, turn, _ = ideal.fig7
    assert orbit.commanded == pytest.approx(math.pi, abs=1e-3)  # half a circle of 1 m
    assert all(s.met() for s in ideal.fig7)
    assert turn.driven == 0.0  # the camera turns on the spot
    assert abs(math.remainder(ideal.fig7_final_heading - math.pi, math.tau)) <= TOLERANCE
    assert all(row.ok for row in _ideal_rows(ideal))


def test_a_frozen_robot_fails_every_row_of_the_papers_simulation() -> None:
    with injected(Fault.FROZEN):
        ideal = ideal_figures()
    assert not ideal.fig6_as_told()
    assert max(s.driven for s in ideal.fig6) == 0.0
    assert [row.ok for row in _ideal_rows(ideal)] == [False] * 4


def test_gain_0_is_the_papers_own_law_and_meets_its_rows() -> None:
    with injected(Fault.GAIN_ZERO):
        rows = _ideal_rows(ideal_figures())
    assert [row.ok for row in rows] == [True] * 4


@pytest.mark.slow
def test_a_frozen_robot_on_its_error_model_drives_no_segment() -> None:
    with injected(Fault.FROZEN):
        runs = robot_figures(1)
        result = run_experiment("flc-figures", 1, 1, _nothing)
    assert max(s.driven / s.commanded for s in runs) < FIGURES_DRIVEN
    assert [row.ok for row in result.rows if row.ok is not None] == [False] * 8


@pytest.mark.slow
def test_gain_0_fails_the_rows_of_the_pull_and_meets_the_papers() -> None:
    with injected(Fault.GAIN_ZERO):
        result = run_experiment("flc-figures", 1, 1, _nothing)
    pulled = [row for row in result.rows if "the pull" in row.what]
    assert len(pulled) == 2
    assert [row.ok for row in pulled] == [False, False]
    # eq. 6 has no gain: the paper's simulation is what it was
    assert [row.ok for row in result.rows[:4]] == [True] * 4
