"""The system broken on purpose fails every row that judges what was broken: a frozen robot
(its wheels turn, it does not move), a robot with its safety off, controllers with gain 0, and
an arm its guard holds still. Each injects its fault the way ``freelook experiment --fault``
does and runs the experiments in small form."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.experiments import ExperimentResult, Fault, Row, injected, run_experiment
from freelook.experiments._bomb_disposal import disposal_table, disposal_trial
from freelook.experiments._faults import FAULT_VARIABLE, active
from freelook.experiments._packet_drop import TABLE_7_1, LinkTrialResult, table_7_1_trial
from freelook.experiments._tables._half_duplex import model_row


def _nothing(done: int, total: int) -> None:
    pass


def _run(fault: Fault, name: str, trials: int, jobs: int = 1) -> ExperimentResult:
    with injected(fault):
        return run_experiment(name, trials, 1, _nothing, jobs=jobs)


def _judged(result: ExperimentResult) -> list[Row]:
    rows = [row for row in result.rows if row.ok is not None]
    assert rows, result.name  # something is judged at all
    return rows


def _met(rows: list[Row]) -> list[str]:
    return [f"{row.what}: {row.ours}" for row in rows if row.ok]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("name", "trials"),
    [
        ("square-laps", 1),
        ("translation-offset", 1),
        ("flc-figures", 1),
        ("packet-drop", 1),
        ("ellipse", 1),
        ("reckless", 4),
    ],
)
def test_a_frozen_robot_fails_every_driving_row(name: str, trials: int, trial_jobs: int) -> None:
    result = _run(Fault.FROZEN, name, trials, trial_jobs)
    assert _met(_judged(result)) == [], name


@pytest.mark.slow
def test_a_robot_with_its_safety_off_fails_every_reckless_safety_row(trial_jobs: int) -> None:
    reckless = _run(Fault.SAFETY_OFF, "reckless", 4, trial_jobs)
    with_safety = [r for r in _judged(reckless) if not r.what.startswith("control run")]
    assert _met(with_safety) == []


@pytest.mark.slow
def test_a_robot_with_its_watchdog_off_fails_the_radio_death_row() -> None:
    # the link's row: a robot whose watchdog is off keeps driving on its radio's death
    drop = _run(Fault.SAFETY_OFF, "packet-drop", 1)
    table_7_1 = [r for r in _judged(drop) if "radio" in r.what]
    assert len(table_7_1) == 1
    assert _met(table_7_1) == []


@pytest.mark.slow
def test_an_arm_with_its_check_off_fails_the_contact_row() -> None:
    arm = _run(Fault.SAFETY_OFF, "arm-fuzz", 2)
    assert arm.rows[0].ok is False  # contacts with the check on
    assert "broken on purpose" in arm.rows[0].conditions


def _through_the_half_duplex_link(
    fault: Fault | None, seed: int, trials: list[int], lock: float
) -> list[LinkTrialResult]:
    with injected(fault):
        return [
            table_7_1_trial(seed, TABLE_7_1[n - 1], "thesis", 0.05, "half-duplex", lock)
            for n in trials
        ]


@pytest.mark.slow
def test_a_frozen_robot_fails_table_7_1_through_the_half_duplex_link() -> None:
    # the link does not see the robot: a frozen one's drops are the working one's, to the
    # packet; what fails it is its course, not driven
    frozen = _through_the_half_duplex_link(Fault.FROZEN, 61, [3, 9], 0.0)
    working = _through_the_half_duplex_link(None, 61, [3, 9], 0.0)
    assert [(r.drop_up, r.drop_down) for r in frozen] == [(r.drop_up, r.drop_down) for r in working]
    for runs, lazy in ((frozen, 2), (working, 0)):
        row = model_row("t", "", runs, "c", thesis=True, watchdog=1.0)
        assert f"; {lazy} of 2 trials drove under 50%" in row.ours
        assert row.ok is False  # the drops are the model's, not the table's
    assert all(r.driven < 0.05 * r.commanded for r in frozen)
    assert all(r.driven > 0.9 * r.commanded for r in working)


@pytest.mark.slow
def test_a_robot_with_its_watchdog_off_drives_on_when_the_half_duplex_link_locks_up() -> None:
    # seed 61's trial 1: its first collision, at 0.10 s, locks a node (p = 1)
    (working,) = _through_the_half_duplex_link(None, 61, [1], 1.0)
    (unsafe,) = _through_the_half_duplex_link(Fault.SAFETY_OFF, 61, [1], 1.0)
    for r in (working, unsafe):
        assert r.died_at is not None
        assert r.died_at < 1.0
        assert r.silent
    assert working.stopped_after is not None
    assert working.stopped_after <= 1.5
    assert not working.moved_while_dead
    assert working.drove_again_after is None  # nothing in the thesis's system restarts it
    assert unsafe.stopped_after is None or unsafe.stopped_after > 1.5  # 23 s: a wall
    assert unsafe.moved_while_dead


@pytest.mark.slow
def test_controllers_with_gain_0_fail_every_row_their_gain_is_for(trial_jobs: int) -> None:
    # the paper's rows run eq. 6 at gain 0 already: freelook's pull is what is judged
    laps = _run(Fault.GAIN_ZERO, "square-laps", 1, trial_jobs)
    # with the paper's sensors the pull is judged (the added laser's rows: below)
    pulled = [r for r in _judged(laps) if r.what.startswith("CCW, freelook extra: pull")]
    assert len(pulled) == 1
    assert _met(pulled) == []
    own = [r for r in _judged(laps) if r.what.startswith("CW, freelook extra: pull")]
    assert len(own) == 1
    assert _met(own) == []
    offset = _run(Fault.GAIN_ZERO, "translation-offset", 2, trial_jobs)
    assert _met([r for r in _judged(offset) if r.what.startswith("freelook extra")]) == []
    # the ellipse's trackers, the thesis's at the station and freelook's on the robot
    assert _met(_judged(_run(Fault.GAIN_ZERO, "ellipse", 1, trial_jobs))) == []


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="the square laps' freelook rows with the added laser are met with the pull at 0 (CW"
    " -0.91° within ±3°, CCW +0.97° within ±1° on seed 1): the laser's heading fixes hold the"
    " camera, so the rows do not judge the pull they name",
)
def test_the_laps_freelook_rows_with_the_laser_judge_their_pull(trial_jobs: int) -> None:
    laps = _run(Fault.GAIN_ZERO, "square-laps", 1, trial_jobs)
    laser = [r for r in _judged(laps) if "freelook extra with an added" in r.what]
    assert len(laser) == 2
    assert _met(laser) == []


@pytest.mark.slow
@pytest.mark.parametrize(
    ("fault", "robot"),
    [(Fault.FROZEN, "taros"), (Fault.FROZEN, "m2p2"), (Fault.ARM_FROZEN, "taros")],
)
def test_a_frozen_robot_or_arm_fails_every_bomb_disposal_row(fault: Fault, robot: str) -> None:
    """Frozen: its wheels (the M2P2's three omni wheels too) turn and grip nothing; the arm
    frozen: its guard stops every motion. Neither lifts the object, so neither meets the task
    row, the collision row (nothing touched proves nothing) or the false-detection row."""
    with injected(fault):
        trial = disposal_trial(1, robot, limit=90.0)
    assert not trial.success
    assert _met(_judged(disposal_table([trial], 1, 1, robot))) == [], robot


@pytest.mark.slow
def test_an_arm_frozen_by_its_guard_fails_the_progress_row() -> None:
    result = _run(Fault.ARM_FROZEN, "arm-fuzz", 2)
    progress = next(r for r in result.rows if r.what.startswith("commanded motion achieved"))
    assert progress.ok is False, progress.ours
    assert result.details["progress"] < 0.05


def test_the_fault_is_the_runs_own_and_unknown_ones_are_refused(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(FAULT_VARIABLE, raising=False)
    with injected(Fault.FROZEN):
        assert active() is Fault.FROZEN
        with injected(None):
            assert active() is None
        assert active() is Fault.FROZEN
    assert active() is None
    monkeypatch.setenv(FAULT_VARIABLE, "melted")
    with pytest.raises(ValueError, match="'melted': no such fault"):
        active()
    result = CliRunner().invoke(app, ["experiment", "flc-figures", "--fault", "melted"])
    assert result.exit_code == 2
    assert "unknown fault 'melted'" in result.output


def test_the_command_line_runs_a_fault_and_says_so_in_the_command() -> None:
    result = CliRunner().invoke(
        app, ["experiment", "flc-figures", "--trials", "1", "--fault", "frozen", "--json"]
    )
    assert result.exit_code == 1  # its rows are missed, as they must be
    assert "--fault frozen" in result.stdout
    assert "targets missed" in result.output
