"""The reckless run's projection: the experiment's own trials, scaled section by section."""

from __future__ import annotations

import pytest

from freelook.experiments._bench import projected_wall, reckless_sample, trial_cpu_seconds
from freelook.experiments._reckless import RecklessCondition
from freelook.experiments._tables import reckless_jobs, reckless_sections


def test_the_job_list_is_the_tables_sections_in_order_with_every_other_link_cut() -> None:
    jobs = reckless_jobs(8, seed=5)
    sections = reckless_sections(8)
    assert [n for *_, n in sections] == [9, 9, 9, 9, 1, 1, 1] + [8] * 6 + [2] + [8] * 4
    start = 0
    for condition, rule, safety, driver, protocol, n in sections:
        part = jobs[start : start + n]
        assert [job[0] for job in part] == list(range(5, 5 + n))  # seeds from the first
        ours = protocol == "ours" and driver != "passage"
        assert [job[1] for job in part] == [ours and k % 2 == 1 for k in range(n)]
        table = protocol == "thesis" and driver == "steering"
        assert [job[7] for job in part] == [k + 1 if table else 0 for k in range(n)]
        assert {job[2:3] + job[4:7] for job in part} == {(condition, rule, safety, driver)}
        start += n
    assert start == len(jobs)


def test_the_sample_takes_each_section_in_proportion() -> None:
    sample, trials = reckless_sample(1000)
    assert trials == {
        "sensors_nearest_printed_steering_table_7_1": 9,
        "sensors_nearest_thesis_steering_table_7_1": 9,
        "sensors_nearest_off_steering_table_7_1": 9,
        "sensors_nearest_freelook_steering_table_7_1": 9,
        "sensors_nearest_printed_passage": 1001,
        "sensors_nearest_thesis_passage": 1001,
        "sensors_nearest_freelook_passage": 1001,
        "sensors_nearest_printed_steering": 1000,
        "sensors_nearest_thesis_steering": 1000,
        "sensors_nearest_off_steering": 1000,
        "sensors_nearest_freelook_steering": 1000,
        "localized_map_nearest_freelook_steering": 1000,
        "odometry_map_nearest_freelook_steering": 1000,
        "sensors_direction_freelook_steering": 250,
        "sensors_nearest_freelook_pushing": 1000,
    }
    # each section's every 11th: 1 of each 9 and each passage drive, 91 of each 1000, 23 of 250
    assert len(sample) == 4 + 3 + 91 * 10 + 23
    jobs = reckless_jobs(1000, seed=1)
    assert all(job in jobs for job in sample)
    wandering = [job for job in sample if job[6] != "passage" and job[7] == 0]
    cut = sum(job[1] for job in wandering)
    # half of our wandering trials cut the link, as in the run (each section's may be one off)
    assert abs(cut - len(wandering) / 2) <= len(trials)


def test_the_projection_scales_each_section_and_shares_it_over_the_cores() -> None:
    cpu = {"sensors": 0.1, "localized": 0.4}
    trials = {"sensors": 1000, "localized": 500}
    assert projected_wall(cpu, trials, cores=2) == pytest.approx((100 + 200) / 2)
    assert projected_wall(cpu, trials, cores=1) == pytest.approx(300)
    with pytest.raises(KeyError):  # a section with no sampled trial is not silently free
        projected_wall({"sensors": 0.1}, trials, cores=2)


def test_a_timed_trial_reports_its_cpu_seconds() -> None:
    seconds = trial_cpu_seconds(3, True, RecklessCondition.SENSORS, 8.0, "nearest")
    assert seconds > 0.0
