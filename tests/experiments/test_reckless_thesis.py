"""The reckless experiment's thesis rows: Algorithm 5.1 as printed beside its erratum corrected,
the thesis's operator (its station's packets, its keys) and its trials (Table 7.1's nine, the
narrow passage)."""

from __future__ import annotations

import math

import pytest

from freelook.experiments import _reckless as rk
from freelook.experiments import run_experiment
from freelook.experiments._reckless_operator import (
    REACTION_TIME,
    Keys,
    PacketView,
    Wander,
)
from freelook.experiments._tables import reckless_jobs
from freelook.link import Telemetry


def _telemetry(laser: list[float], sonar: list[float]) -> Telemetry:
    """A telemetry record with a 181-beam laser over 180° and the two sonar rings."""
    return Telemetry(
        stamp=0.0,
        odom=(0.0, 0.0, 0.0),
        pose=(1.0, 2.0, 0.5),
        v=0.0,
        omega=0.0,
        cmd_v=0.0,
        cmd_omega=0.0,
        pan=0.0,
        tilt=0.0,
        laser_angle_min=-math.pi / 2,
        laser_angle_increment=math.pi / 180,
        laser_range_max=30.0,
        laser=tuple(laser),
        sonar=tuple(sonar),
    )


def test_the_operator_sees_the_packets_35_laser_readings_and_the_rear_sonars_only() -> None:
    laser = [10.0 + i for i in range(181)]
    sonar = [float(i) for i in range(16)]  # front ring 0–7, rear 8–15
    view = PacketView()
    view.arrive(0.0, _telemetry(laser, sonar))
    seen = view.look(REACTION_TIME)
    assert seen is not None
    assert len(seen.packet.laser) == 35
    assert seen.packet.sonar == tuple(float(i) for i in range(8, 16))
    assert seen.packet.laser[0] == laser[0]
    assert seen.packet.laser[-1] == laser[-1]
    assert seen.bearings[0] == pytest.approx(-math.pi / 2)
    assert seen.bearings[-1] == pytest.approx(math.pi / 2)
    assert seen.bearings[17] == pytest.approx(0.0)  # the middle reading is straight ahead


def test_a_packet_is_acted_on_a_reaction_time_after_it_arrived() -> None:
    view = PacketView()
    view.arrive(1.0, _telemetry([5.0] * 181, [5.0] * 16))
    assert view.look(1.0 + REACTION_TIME - 0.01) is None
    assert view.look(1.0 + REACTION_TIME) is not None


def test_the_keys_step_the_set_point_as_the_thesiss_manual_control_does() -> None:
    keys = Keys()
    # 30 events a second: 15 steps of 20 mm/s and 2 °/s in half a second
    v, w = keys.step(0.5, 1.0, 1.0)
    assert v == pytest.approx(0.3)
    assert w == pytest.approx(math.radians(30.0))
    v, w = keys.step(5.0, 1.0, -1.0)  # held on: capped at 500 mm/s; ω through zero to −50 °/s
    assert v == pytest.approx(0.5)
    assert w == pytest.approx(-math.radians(50.0))
    keys.space()
    assert (keys.v, keys.w) == (0.0, 0.0)


def test_the_wandering_operator_turns_away_from_a_reading_ahead_and_stops_when_close() -> None:
    # a wall 0.8 m ahead on the right half, open on the left: turn left at full speed
    laser = [0.8 if i < 90 else 5.0 for i in range(181)]
    view = PacketView()
    view.arrive(0.0, _telemetry(laser, [5.0] * 16))
    operator = Wander()
    operator.keys.v = 0.5
    v, w = operator.command(view.look(1.0), 0.047)
    assert v == pytest.approx(0.5)
    assert w > 0.0
    # nearer than 0.5 m: the space bar, then turning on the spot
    view.arrive(1.0, _telemetry([0.4] * 181, [5.0] * 16))
    v, w = operator.command(view.look(2.0), 0.047)
    assert v == 0.0
    assert w > 0.0  # on to the side chosen
    # nothing ahead: straight on
    view.arrive(2.0, _telemetry([5.0] * 181, [5.0] * 16))
    for _ in range(40):
        v, w = operator.command(view.look(3.0), 0.047)
    assert w == 0.0
    assert v > 0.0


def test_the_printed_order_is_b2_alone_and_the_corrected_keeps_all_three_zones() -> None:
    printed = rk._pioneer("nearest", "printed").safety
    corrected = rk._pioneer("nearest", "thesis").safety
    assert len(corrected.zones) == 3
    assert printed.zones == corrected.zones[-1:]
    assert printed.watchdog_timeout == corrected.watchdog_timeout == rk.THESIS_WATCHDOG
    assert not printed.approach_check
    assert printed.obstacle_memory == 0.0


def test_the_thesiss_nine_trials_are_table_7_1s() -> None:
    jobs = reckless_jobs(4, seed=501)
    nine = jobs[:9]
    assert [job[7] for job in nine] == list(range(1, 10))
    assert [job[0] for job in nine] == list(range(501, 510))
    assert {job[5] for job in nine} == {"printed"}
    assert not any(job[1] for job in nine)  # the radio dies by the table, not at random
    rng = rk.np.random.default_rng(0)
    trial_6 = rk._protocol(6, False, 20.0, "steering", rng)
    assert (trial_6.start, trial_6.cut_at, trial_6.duration) == ("origin", 140.0, 145.0)
    trial_9 = rk._protocol(9, False, 20.0, "steering", rng)
    assert trial_9.cut_at is None
    assert trial_9.up_loss == 0.003


def test_the_printed_order_crosses_the_passage_at_b2s_cap_the_corrected_slower() -> None:
    # seed 1's drive through the narrow passage: as printed only B2 acts (0.35 m/s) beside
    # the passage's walls 0.4 m away; corrected, Min's 0.1 m/s acts there
    printed = rk.reckless_trial(
        1, False, rk.RecklessCondition.SENSORS, 20.0, "nearest", "printed", "passage"
    )
    corrected = rk.reckless_trial(
        1, False, rk.RecklessCondition.SENSORS, 20.0, "nearest", "thesis", "passage"
    )
    assert printed.through
    assert corrected.through
    assert printed.zone_acted
    assert corrected.zone_acted
    assert printed.passage_speed > 0.3
    assert corrected.passage_speed < printed.passage_speed - 0.05


def test_without_zones_the_passage_drive_has_no_zone_acting() -> None:
    off = rk.reckless_trial(
        1, False, rk.RecklessCondition.SENSORS, 20.0, "nearest", "off", "passage"
    )
    assert not off.zone_acted


@pytest.mark.slow
def test_on_table_7_1s_trial_2_the_printed_order_collides_where_the_corrected_does_not() -> None:
    # seed 102, Table 7.1's trial 2 (linear drive, then 189 s of keys, the radio dying at its
    # end): the thesis's operator does not hear the glass (no front sonar in its packets); as
    # printed the zones let the robot on at B2's 0.35 m/s into it, corrected Min's 0.1 m/s
    # (and the operator turns away)
    args = (102, False, rk.RecklessCondition.SENSORS, 20.0, "nearest")
    printed = rk.reckless_trial(*args, "printed", "steering", 2)
    corrected = rk.reckless_trial(*args, "thesis", "steering", 2)
    assert printed.collided
    assert 0.2 < printed.impact_speed <= 0.36
    assert not corrected.collided
    assert corrected.stopped_after_cut is not None  # its radio died and it stood still


@pytest.mark.slow
def test_the_reckless_table_has_the_thesiss_rows_first_and_judges_them(trial_jobs: int) -> None:
    result = run_experiment("reckless", 2, 1, lambda done, total: None, jobs=trial_jobs)
    assert len(result.rows) == 18
    thesis, corrected, control, freelook = result.rows[:4]
    assert thesis.paper.startswith("no collision in 9 trials")
    assert "as printed" in thesis.what
    assert "erratum corrected" in corrected.what
    assert control.ok, control.ours  # without zones the thesis's operator does collide
    assert freelook.ok, freelook.ours
    assert all(row.ok is not None for row in result.rows)
    assert len(result.trials[0].lines) == 9
