"""The latency experiment: its link's bursts, its operator, its rows, and a frozen robot that
fails them."""

from __future__ import annotations

import math

import pytest

from freelook.experiments import Fault, injected
from freelook.experiments._latency import (
    COURSE,
    REACH,
    Bursts,
    Clicker,
    Driver,
    LatencyConditions,
    latency_trial,
)
from freelook.experiments._parallel import map_trials, workers
from freelook.experiments._reckless_operator import REACTION_TIME
from freelook.experiments._tables._latency import _beats, _verdict
from freelook.link import GoalStart, Heartbeat, ImpairedChannel, Impairments, Mode


def _quiet(done: int, total: int) -> None:
    pass


def test_a_burst_holds_the_packets_and_delivers_them_at_once_when_it_ends() -> None:
    channel = ImpairedChannel(Impairments(delay=0.1), seed=1)
    link = Bursts(channel, rate=0.5, seconds=1.0, seed=3)
    start, end = _stall(link)
    sent = [start + 0.01 * k for k in range(5)]  # five packets inside the stall
    for k, t in enumerate(sent):
        link.send(bytes([k]), t)
    assert link.receive(end - 1e-6) == []  # held while it stalls
    assert link.receive(end) == []  # released at its end, on through the delay
    arrived = link.receive(end + 0.1 + 1e-6)  # the stall's end plus the delay
    assert [data for data, _ in arrived] == [bytes([k]) for k in range(5)]
    for (_, took), t in zip(arrived, sent, strict=True):
        assert took == pytest.approx(end + 0.1 + 1e-6 - t)  # the truth of each one's delay


def _stall(link: Bursts) -> tuple[float, float]:
    """The first stall longer than 0.2 s, found as time goes on (as the link meets them)."""
    t = 0.0
    while True:
        t = round(t + 0.01, 6)
        if link.stalls.silent(t):
            _, end = link.stalls.intervals[-1]
            if end - t > 0.2:
                return t, end


def test_the_operator_acts_on_the_display_a_reaction_time_later_and_stops_at_the_end() -> None:
    driver = Driver()
    driver.show(0.0, (COURSE[0][0], COURSE[0][1], 0.0))
    assert driver.seen(REACTION_TIME / 2) is None  # not yet taken in
    assert driver.seen(REACTION_TIME) == (COURSE[0][0], COURSE[0][1], 0.0)
    # along the first leg, straight ahead: ↑ held, the set-point climbs, no turn
    command = driver.command(REACTION_TIME + 0.5, 0.5)
    assert command.v > 0.0
    assert abs(command.omega) < 1e-9
    # the display shows the robot at the end: space, and nothing more
    end = (COURSE[-1][0], COURSE[-1][1] - REACH / 2, math.pi / 2)
    driver.show(2.0, end)
    stop = driver.command(2.0 + REACTION_TIME, 0.05)
    assert (stop.v, stop.omega) == (0.0, 0.0)
    assert driver.finished


def test_click_to_go_clicks_the_corners_in_turn() -> None:
    clicker = Clicker()
    assert clicker.command(None, Mode.IDLE) == GoalStart(*COURSE[1])
    assert clicker.command((3.5, 3.0, 0.0), Mode.GOAL) == Heartbeat()
    assert clicker.command((COURSE[1][0] - 0.3, COURSE[1][1], 0.0), Mode.GOAL) == GoalStart(
        *COURSE[2]
    )


@pytest.mark.slow
def test_with_expiry_no_late_command_acts_and_without_it_the_bursts_queued_ones_do() -> None:
    link = LatencyConditions(0.25)
    with_expiry = latency_trial(101, "prediction", link)
    assert with_expiry.done_in is not None
    assert not with_expiry.collided
    assert with_expiry.late_arrived > 0  # the bursts held commands past their lifetime
    assert with_expiry.late_acted == 0
    assert with_expiry.late_refused >= with_expiry.late_arrived
    without = latency_trial(101, "plain-no-expiry", link)
    assert without.late_refused == 0
    assert without.late_acted == without.late_arrived > 0


@pytest.mark.slow
def test_a_frozen_robot_fails_the_rows_it_is_judged_by(trial_jobs: int) -> None:
    link = LatencyConditions(1.0)
    controls = ("plain", "prediction", "plain-no-expiry")
    with workers(trial_jobs), injected(Fault.FROZEN):
        done = map_trials(latency_trial, [(101, c, link) for c in controls], _quiet)
    runs = {c: [run] for c, run in zip(controls, done, strict=True)}
    assert all(r.travelled < 0.05 for done in runs.values() for r in done)
    assert not _verdict("prediction", runs["prediction"])[1]
    assert not _verdict("plain-no-expiry", runs["plain-no-expiry"])[1]
    assert not _beats(runs["prediction"], runs["plain"])[1]
