"""Radios that die and stay dead until their node is restarted, and the watch that restarts."""

from __future__ import annotations

import pytest

from freelook.link import DeadRadio, ImpairedChannel, Impairments, RadioWatch


def test_a_dead_radio_stays_dead_until_its_own_node_is_restarted() -> None:
    radio = DeadRadio([(10.0, "robot")], boot=1.0)
    assert not radio.silent(9.99)
    assert radio.silent(10.0)
    assert radio.silent(1e6)  # nothing brings it back by itself
    radio.restart("station", 20.0)  # the other node: no help
    assert radio.silent(25.0)
    radio.restart("robot", 30.0)
    assert radio.silent(30.5)  # still booting
    assert not radio.silent(31.0)
    assert radio.revived == [31.0]
    assert radio.restarts == [(20.0, "station"), (30.0, "robot")]


def test_a_restart_before_the_failure_does_not_prevent_it() -> None:
    radio = DeadRadio([(10.0, "station")], boot=0.5)
    radio.restart("station", 5.0)
    assert radio.silent(10.0)
    assert radio.dead_at(10.0) == 1


def test_both_directions_through_a_dead_pair_fall_silent() -> None:
    radio = DeadRadio([(1.0, "robot")])
    up = ImpairedChannel(Impairments(), seed=1, lockups=radio)
    down = ImpairedChannel(Impairments(), seed=2, lockups=radio)
    for t in (0.5, 1.5, 2.5):
        up.send(b"u", t)
        down.send(b"d", t)
    assert up.receive(3.0) == [b"u"]
    assert down.receive(3.0) == [b"d"]
    assert up.counters.silenced == down.counters.silenced == 2


def test_the_watch_restarts_after_the_silence_and_retries_while_it_lasts() -> None:
    watch = RadioWatch(silence=2.0, retry=5.0)
    watch.heard(10.0)
    assert not watch.update(11.9)
    assert watch.update(12.0)
    assert not watch.update(13.0)  # once per retry interval
    assert not watch.update(16.9)
    assert watch.update(17.0)
    watch.heard(17.5)  # the peer is back: quiet again
    assert not watch.update(19.0)
    assert watch.update(19.5)  # a new silence, a fresh restart
    assert watch.restarts == 3


def test_the_watch_counts_silence_from_its_start_and_refuses_bad_settings() -> None:
    assert RadioWatch(silence=1.0, start=5.0).update(6.0)
    with pytest.raises(ValueError, match="silence"):
        RadioWatch(silence=0.0)
    with pytest.raises(ValueError, match="retry"):
        RadioWatch(retry=-1.0)
