"""Seed 000's five square laps on the FOI UGV under its error model, with the paper's own
controller (eq. 6, gain 0) and the paper's sensors (gyro + encoders, no laser).

The paper reports −3…−6° (CW, Table 2) and −1…+1° (CCW, Table 3) of camera heading drift
after five laps; the row lands there, and broken on purpose (the gyro off, a wrong
calibration, a robot that never moves) it is marked not met. The full run is
``freelook experiment square-laps``.
"""

from __future__ import annotations

import dataclasses

import pytest

from freelook.config import PhysicalTruth, load_error_model, load_robot
from freelook.experiments import _scenarios as sc
from freelook.experiments._tables import LAP_SIDE, laps_verdict


def paper_run(seed: int, clockwise: bool, laps: int = 5, use_gyro: bool = True) -> sc.LapsResult:
    return sc.square_laps_trial(
        seed, clockwise, laps=laps, use_gyro=use_gyro, use_localization=False, laser=False
    )


@pytest.mark.parametrize(
    ("seed", "clockwise"),
    [
        (21, True),
        pytest.param(
            22,
            False,
            marks=pytest.mark.xfail(
                strict=True,
                reason="a miss the calibrated model predicts: seed 22's fifth CCW lap ends at "
                "+1.95°, outside Table 3's −1…+1° (docs/results.md gives each seed set's laps)",
            ),
        ),
    ],
)
def test_the_papers_laps_land_in_its_band_for_each_direction(seed: int, clockwise: bool) -> None:
    run = paper_run(seed, clockwise)
    assert len(run.drifts) == 5
    assert run.completed(LAP_SIDE), (run.paths, run.returns)
    _, ok = laps_verdict([run], clockwise, like=True)
    assert ok, run.drifts


def test_without_the_gyro_the_row_is_not_met() -> None:
    run = paper_run(21, True, use_gyro=False)
    assert run.completed(LAP_SIDE)  # it drove, and drifted
    assert abs(run.drifts[-1]) > 6.0
    assert not laps_verdict([run], True, like=True)[1]


def test_a_wrong_calibration_is_not_met(monkeypatch: pytest.MonkeyPatch) -> None:
    # the robot's real track width 1 % wider than the program's calibration says
    truth = _truth(22)
    wider = dataclasses.replace(truth, track=truth.track * 1.01)
    monkeypatch.setattr(sc, "physical_robot", lambda config, seed, errors=True: wider)
    run = paper_run(22, False)
    assert min(run.paths) > 0.85 * 4 * LAP_SIDE  # it drove every lap, and drifted
    assert not laps_verdict([run], False, like=True)[1], run.drifts


def _truth(seed: int) -> PhysicalTruth:
    return load_error_model("foi-ugv").draw(seed)


def test_a_robot_that_never_moves_fails_though_its_camera_never_drifts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # its tracks spin on ice: the encoders count, the robot stays where it is
    frozen = dataclasses.replace(_truth(21), left_wheel=0.0, right_wheel=0.0)
    monkeypatch.setattr(sc, "physical_robot", lambda config, seed, errors=True: frozen)
    run = paper_run(21, False, laps=1)
    assert max(run.paths) < 0.5  # the camera only turned on the spot
    assert not run.completed(LAP_SIDE)
    for like in (True, False):
        assert not laps_verdict([run], False, like=like)[1]


@pytest.mark.parametrize(("seed", "clockwise"), [(23, True), (24, False)])
def test_freelooks_row_beats_the_papers_under_the_same_error_model(
    seed: int, clockwise: bool
) -> None:
    # the pull onto the camera's reference, on a heading the laser keeps on the map: the
    # laser sits turned on its mount, unknown to the robot, which only offsets the map's
    # heading as the robot sees it from the first fixes on
    gain = load_robot("foi-ugv").free_look.gain
    ours = sc.square_laps_trial(seed, clockwise, gain=gain)
    paper = paper_run(seed, clockwise)
    assert ours.completed(LAP_SIDE), (ours.paths, ours.returns)
    assert laps_verdict([ours], clockwise, like=False)[1], ours.drifts
    assert abs(ours.drifts[-1]) < abs(paper.drifts[-1]), (ours.drifts, paper.drifts)
