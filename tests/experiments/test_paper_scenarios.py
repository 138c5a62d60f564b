"""The papers' scenarios over several seeds, each row's verdict asserted (the full runs are
``freelook experiment``): the tables' own code computes the verdicts from the runs."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest

from freelook.config import PhysicalTruth, load_error_model, load_robot
from freelook.experiments import _scenarios as sc
from freelook.experiments._ellipse import (
    THESIS_LOOP,
    EllipseProgress,
    EllipseResult,
    _course,
    freelook_ellipse_trial,
    thesis_ellipse_trial,
)
from freelook.experiments._ellipse_measure import Measure
from freelook.experiments._packet_drop import TABLE_7_1, LinkTrialResult, table_7_1_trial
from freelook.experiments._reckless import RecklessCondition, reckless_trial
from freelook.experiments._tables import (
    TABLE_7_2,
    TIME_TOLERANCE,
    ellipse_row,
    packet_drop_row,
    reckless_verdict,
    translation_verdict,
)
from freelook.link import Impairments

SEEDS = range(1, 6)


def _nothing(done: int, total: int) -> None:
    pass


def _small_wheels(seed: int, factor: float) -> PhysicalTruth:
    """The error model's robot for ``seed`` with both wheels ``factor`` smaller than described."""
    drawn = load_error_model("pioneer3dx").draw(seed)
    return dataclasses.replace(
        drawn, left_wheel=drawn.left_wheel / factor, right_wheel=drawn.right_wheel / factor
    )


def _with_controller_d(d: float) -> Any:
    right = load_robot("foi-ugv")
    return right.model_copy(
        update={"drive": right.drive.model_copy(update={"controller_track_width": d})}
    )


def test_table_4_is_predicted_from_the_reduced_d_and_the_loop_on_the_camera_beats_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the model has no sideways skid: h comes from the cause the paper names, the controller's
    # d reduced to 35 cm from the identified 70 cm, which turns the chassis less sharply
    reduced = [sc.translation_offset_trial(seed, open_loop=True, laser=False) for seed in SEEDS]
    mean_reduced = sum(r.signed_offset for r in reduced) / len(reduced)
    assert mean_reduced > 0.03, [r.signed_offset for r in reduced]  # towards the chassis's face
    monkeypatch.setattr(sc, "load_robot", lambda name: _with_controller_d(0.70))
    identified = [sc.translation_offset_trial(seed, open_loop=True, laser=False) for seed in (1, 2)]
    monkeypatch.undo()
    mean_identified = sum(r.signed_offset for r in identified) / len(identified)
    assert mean_reduced - mean_identified > 0.05, (mean_reduced, mean_identified)
    # the loop on the camera's pose pays off and meets its row
    closed = [sc.translation_offset_trial(seed) for seed in SEEDS]
    assert translation_verdict(closed, False, reduced).met, [r.signed_offset for r in closed]
    mean_open = sum(a.final_offset for a in reduced) / len(reduced)
    assert sum(b.final_offset for b in closed) / len(closed) < mean_open / 2
    for a, b in zip(reduced, closed, strict=True):
        assert b.max_offset >= b.final_offset  # the worst is on the way, not only at the end
        assert b.covered > a.covered  # and the camera gets further along its 2 m


def test_a_translation_that_never_moves_is_not_met(monkeypatch: pytest.MonkeyPatch) -> None:
    truth = load_error_model("foi-ugv").draw(1)
    frozen = dataclasses.replace(truth, left_wheel=0.0, right_wheel=0.0)
    monkeypatch.setattr(sc, "physical_robot", lambda config, seed, errors=True: frozen)
    still = [sc.translation_offset_trial(1, open_loop=True, laser=False)]
    assert still[0].covered < 0.1
    assert still[0].final_offset < 0.02  # no offset at all: it never went anywhere
    assert not translation_verdict(still, like=True).met
    assert not translation_verdict(still, like=False).met
    monkeypatch.undo()
    # the paper's law judged as freelook's row: no better than itself
    reduced = [sc.translation_offset_trial(seed, open_loop=True, laser=False) for seed in (1, 2)]
    assert not translation_verdict(reduced, False, reduced).met


def test_the_thesiss_zones_cap_the_speed_it_touches_at_and_none_collides_faster() -> None:
    # the thesis's zones only cap the speed: a reckless operator pushing into a wall reaches it,
    # at the innermost zone's cap; without them at full speed
    config = load_robot("pioneer3dx")
    cap = config.safety.zones[0].max_speed
    thesis = [
        reckless_trial(seed, False, RecklessCondition.SENSORS, 20.0, "nearest", "thesis")
        for seed in (2, 4)
    ]
    off = [
        reckless_trial(seed, False, RecklessCondition.SENSORS, 20.0, "nearest", "off")
        for seed in (2, 4)
    ]
    assert all(r.collided for r in off)
    assert max(r.impact_speed for r in thesis) <= cap + 0.01
    assert min(r.impact_speed for r in off) > 2 * cap


def test_a_blind_robot_fails_the_reckless_row(monkeypatch: pytest.MonkeyPatch) -> None:
    from freelook.experiments import _reckless as rk

    sighted = rk._pioneer("nearest", "freelook")
    blind = sighted.model_copy(update={"laser": None, "sonar": None})
    monkeypatch.setattr(rk, "_pioneer", lambda rule, safety="freelook": blind)
    done = [reckless_trial(seed, False, RecklessCondition.SENSORS) for seed in (2, 4)]
    assert any(r.collided for r in done)
    assert not reckless_verdict(done, "freelook").met


@pytest.mark.parametrize("seed", [18, 64])
def test_reversing_into_what_only_the_sonar_heard_stops_short(seed: int) -> None:
    # seeds where the sensors alone once let the robot reverse into the barrel: it drifted
    # into a gap between the rear sonar cones; the obstacle memory keeps it in view
    result = reckless_trial(seed, cut_link=seed % 2 == 1, condition=RecklessCondition.SENSORS)
    assert not result.collided
    assert result.escaped


# the ellipse: one seed per check (a lap is seconds of computing), seeds the table's runs
# in docs/results.md do not use
TRIAL_9, TRIAL_7, TRIAL_4 = (c for _, _, c in TABLE_7_2)


def test_the_thesis_loop_from_near_the_curve_laps_its_ellipse_in_the_thesiss_times() -> None:
    # from our start 25 cm inside the first point (the table runs from the thesis's own)
    run = thesis_ellipse_trial(41, TRIAL_9)
    assert run.completion_time is not None
    assert 42.0 < run.completion_time < 65.0  # the thesis: 42.7–64.5 s
    assert 0.015 < run.mean_distance < 0.090  # of the order of its ±30 mm (§8.1)
    assert run.crossing_seconds > 0  # its 360°→0° defect (§7.1.3) steered once
    # the thesis profile's losses as the table's trial 9 had them (0.18 % up, 0.30 % down)
    assert run.drop_percent_up < 1.5
    assert run.drop_percent_down < 1.5


def test_wrapping_the_thesis_loops_heading_difference_saves_the_seconds_it_expected() -> None:
    as_built = thesis_ellipse_trial(41, TRIAL_9)
    fixed = thesis_ellipse_trial(
        41, TRIAL_9, dataclasses.replace(THESIS_LOOP, heading_difference="wrapped")
    )
    assert fixed.crossing_seconds == 0.0
    assert as_built.completion_time is not None
    assert fixed.completion_time is not None
    # §7.2: "could save around 2 s"
    assert 1.0 < as_built.completion_time - fixed.completion_time < 5.0


def test_a_localization_stall_sends_the_thesis_loop_off_the_curve_and_back_not_freelook() -> None:
    run = thesis_ellipse_trial(42, TRIAL_7)
    assert run.stalls == 1
    assert run.detour_worst > 0.1  # it drove on for seconds on a frozen pose
    assert run.detour_seconds > TRIAL_7.stall_seconds
    assert run.completion_time is not None
    # freelook's pose runs on odometry and gyro while its scan matching stalls: no detour
    ours = freelook_ellipse_trial(42, TRIAL_7)
    assert ours.stalls == 1
    assert ours.detour_worst < 0.05
    assert ours.detour_worst < run.detour_worst / 2


def test_freelook_beats_the_thesis_loop_under_the_same_conditions() -> None:
    theirs = [thesis_ellipse_trial(43, TRIAL_4)]
    ours = [freelook_ellipse_trial(43, TRIAL_4)]
    row = ellipse_row("x", "", ours, "c", paper_time=42.7, system="freelook")
    assert row.ok, row.ours
    assert ours[0].completion_time is not None
    assert theirs[0].completion_time is not None
    assert ours[0].completion_time < theirs[0].completion_time
    assert ours[0].max_distance < theirs[0].max_distance
    assert abs(ours[0].completion_time - 40.0) < 1.5  # on the path's own clock


@pytest.mark.parametrize(
    ("what", "kwargs"),
    [
        # the loop opened on purpose: feed-forward alone from 25 cm inside never joins the curve
        ("gain 0", {"loop": dataclasses.replace(THESIS_LOOP, gain_scale=0.0)}),
        # a robot that hears no command stands still: frozen
        ("frozen", {"conditions": dataclasses.replace(TRIAL_4, up_loss=1.0)}),
        # odometry alone, wheels described 15 % larger than they are: the lap comes out big
        ("wrong calibration", {"use_localization": False, "truth": _small_wheels(44, 1.15)}),
    ],
)
def test_a_broken_thesis_loop_fails_its_row(what: str, kwargs: dict[str, Any]) -> None:
    conditions = kwargs.pop("conditions", TRIAL_4)
    run = thesis_ellipse_trial(44, conditions, time_limit=70.0, **kwargs)
    row = ellipse_row(what, "42.7 s", [run], "broken on purpose", paper_time=42.7)
    assert row.ok is False, row.ours


def test_a_frozen_freelook_robot_fails_its_row() -> None:
    frozen = freelook_ellipse_trial(45, dataclasses.replace(TRIAL_4, up_loss=1.0), time_limit=45.0)
    assert frozen.completion_time is None
    assert ellipse_row("x", "", [frozen], "c", paper_time=42.7, system="freelook").ok is False


def _lap(time: float | None, worst: float) -> EllipseResult:
    return EllipseResult(time, 40.0, worst, worst, worst / 2, 0.0, 0.0, 0)


def test_each_ellipse_run_is_judged_against_its_own_trials_time_and_the_30_mm_maximum() -> None:
    assert abs(TIME_TOLERANCE - 2.3) < 1e-9  # the thesis's trials 9 and 4: 45 and 42.7 s
    # the thesis's loop: within the tolerance either way of the trial's own time
    assert ellipse_row("x", "", [_lap(45.0, 0.029), _lap(47.2, 0.01)], "c", paper_time=45.0).ok
    for missed in (_lap(47.4, 0.01), _lap(42.6, 0.01), _lap(45.0, 0.031), _lap(None, 0.01)):
        row = ellipse_row("x", "", [_lap(45.0, 0.01), missed], "c", paper_time=45.0)
        assert row.ok is False, missed
        assert "1 of 2" in row.ours
    # freelook's: by the trial's time, however much sooner
    assert ellipse_row("x", "", [_lap(39.5, 0.011)], "c", paper_time=45.0, system="freelook").ok
    late = ellipse_row("x", "", [_lap(45.1, 0.011)], "c", paper_time=45.0, system="freelook")
    assert late.ok is False
    never = ellipse_row("x", "", [_lap(39.5, math.inf)], "c", paper_time=45.0, system="freelook")
    assert never.ok is False


def test_the_thesiss_start_is_the_ellipses_centre_facing_x() -> None:
    thesis, inside = _course("thesis"), _course("inside")
    centre = (float(thesis.xs.mean()), float(thesis.ys.mean()))
    # the thesis's (0, 0, 0): the ellipse's centre, facing +x, towards its first point
    assert thesis.start[:2] == pytest.approx(centre, abs=0.02)
    assert thesis.start[2] == 0.0
    assert thesis.xs[0] - thesis.start[0] == pytest.approx(1.8)
    # ours: 25 cm inside the first point, facing along the path
    assert (inside.xs[0] - inside.start[0], inside.start[2]) == pytest.approx((0.25, math.pi / 2))


def test_the_lap_is_swept_round_the_centre_and_ends_at_the_first_point() -> None:
    progress = EllipseProgress((0.0, 0.0))
    t = [2 * math.pi * k / 100 for k in range(101)]
    swept = [progress.advance(1.8 * math.cos(a), math.sin(a)) for a in t]
    assert swept == sorted(swept)
    assert swept[-1] == pytest.approx(2 * math.pi)  # not 0: never jumps back
    assert progress.distance(0.0, 0.0) == pytest.approx(1.0, abs=1e-3)
    # circling a point on the curve sweeps nothing round the centre
    spin = EllipseProgress((0.0, 0.0))
    for k in range(200):
        a = 2 * math.pi * k / 50
        spin.advance(1.8 + 0.2 * math.cos(a), 0.2 * math.sin(a))
    assert abs(spin.swept) < 0.5


def test_a_lap_from_the_centre_begins_where_the_robot_joins_the_curve() -> None:
    # the thesis's start: millimetres of wobble at the centre swing the angle round it by
    # radians; none of it counts, and the lap is one round from where the robot joins
    measure = Measure((0.0, 0.0))
    now = 0.0
    for k in range(200):
        now += 0.01
        measure.update(now, 0.003 * math.cos(2.1 * k), 0.003 * math.sin(1.3 * k))
    for k in range(1, 181):  # out to the first point, along +x
        now += 0.01
        measure.update(now, 1.8 * k / 180, 0.0)
    assert measure.joined
    assert measure.progress.swept == pytest.approx(0.0, abs=1e-9)
    assert not measure.finished
    laps = [2 * math.pi * k / 400 for k in range(1, 401)]
    finished_at = None
    for a in laps:
        now += 0.1
        measure.update(now, 1.8 * math.cos(a), math.sin(a))
        if measure.finished and finished_at is None:
            finished_at = a
    assert finished_at is not None
    assert finished_at > 2 * math.pi - 0.1  # at the first point again, not before
    assert measure.stats().worst < 1e-3  # on the curve all the way round
    # a robot that joins past the first point has swept that much already; its distance
    # counts from a tenth of a lap on from there, not from where it came within 10 cm
    late = Measure((0.0, 0.0))
    late.update(0.0, 0.0, 0.0)
    for k in range(1, 101):  # from the centre towards 0.6 rad, stopping 7 cm inside it
        r = 0.95 * k / 100
        late.update(0.01 * k, 1.8 * r * math.cos(0.6), r * math.sin(0.6))
    assert late.joined
    assert late.progress.swept == pytest.approx(0.6)
    for a in [0.6 + 2 * math.pi * k / 400 for k in range(1, 200)]:
        r = 0.95 + 0.05 * min(1.0, (a - 0.6) / 0.3)  # onto the curve over 0.3 rad
        late.update(2.0 + a, 1.8 * r * math.cos(a), r * math.sin(a))
    assert late.on_curve
    assert late.stats().worst < 1e-3  # the curve is sampled every 0.6 mm


# Table 7.1: trial 6 (its radio died) and trial 9 (it did not), at a fifth of their length
DIED, LIVED = TABLE_7_1[5], TABLE_7_1[8]


def _table_7_1(system: str, seed: int, **kwargs: bool) -> list[LinkTrialResult]:
    return [table_7_1_trial(seed, t, system, 0.2, **kwargs) for t in (DIED, LIVED)]  # type: ignore[arg-type]


def test_the_thesis_system_stops_and_stays_dead_as_table_7_1_says() -> None:
    runs = _table_7_1("thesis", 51)
    died, lived = runs
    assert died.failed
    assert died.silent
    assert not lived.failed
    assert not lived.silent
    assert died.stopped_after is not None
    assert died.stopped_after <= 1.5
    assert died.drove_again_after is None  # nothing restarts its radio
    assert died.restarts == 0
    assert abs(died.drop_down - 53.4) < 6  # the table's 53.4 % robot → UI, over ~900 packets
    assert packet_drop_row("t", "", runs, "c", thesis=True, watchdog=1.0).ok


def test_freelook_restarts_its_radio_and_drives_again() -> None:
    runs = _table_7_1("freelook", 52)
    died = runs[0]
    assert died.stopped_after is not None
    assert died.stopped_after <= 1.0
    assert not died.moved_while_dead
    assert died.restarts >= 1
    assert died.drove_again_after is not None
    assert died.drove_again_after < 5.0
    assert packet_drop_row("f", "", runs, "c", thesis=False, watchdog=0.5, recovery_bound=5.0).ok


def test_a_robot_without_its_watchdog_fails_the_thesis_row() -> None:
    runs = _table_7_1("thesis", 53, watchdog=False)
    assert runs[0].stopped_after is None or runs[0].stopped_after > 1.5
    assert packet_drop_row("t", "", runs, "c", thesis=True, watchdog=1.0).ok is False


def test_freelook_without_its_radio_watch_fails_its_row() -> None:
    runs = _table_7_1("freelook", 54, watch=False)
    assert runs[0].drove_again_after is None  # dead until restarted, and nothing restarts it
    assert runs[0].restarts == 0
    row = packet_drop_row("f", "", runs, "c", thesis=False, watchdog=0.5, recovery_bound=5.0)
    assert row.ok is False


@pytest.mark.parametrize("seed", SEEDS)
def test_without_lock_ups_a_lossy_link_never_falls_silent(seed: int) -> None:
    run = sc.link_course_trial(seed, Impairments(loss=0.30), duration=30.0)
    assert run["lockups"] == 0
    assert run["failed"] == 0.0
