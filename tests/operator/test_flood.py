"""Floods from another process push nothing out: the robot refuses a wrong-key flood and the
station one of garbage from many sources, while the operator drives and keeps its telemetry
and video."""

from __future__ import annotations

import pytest

from freelook.launch import flood_trial

pytestmark = pytest.mark.realtime


def test_a_wrong_key_flood_stops_nothing_and_the_operator_keeps_its_telemetry() -> None:
    result = flood_trial(20_000.0, seconds=2.0)
    assert result.flood_pps > 10_000  # the flood really ran
    assert result.refused > 1000  # and reached the robot, which refused it
    assert result.watchdog_stops == 0
    assert result.telemetry_hz >= 0.9 * result.telemetry_hz_quiet
    assert result.video_fps >= 0.9 * result.video_fps_quiet


def test_garbage_from_many_sources_at_the_station_leaves_the_cockpit_its_rates() -> None:
    result = flood_trial(20_000.0, seconds=2.0, target="station", payload="garbage", sockets=64)
    assert result.flood_pps > 10_000
    assert result.refused == 0  # none of it reached the station: its socket hears the robot only
    assert result.watchdog_stops == 0
    assert result.video_fps_quiet > 5  # the camera runs, so its share means something
    assert result.telemetry_hz >= 0.9 * result.telemetry_hz_quiet
    assert result.video_fps >= 0.9 * result.video_fps_quiet
