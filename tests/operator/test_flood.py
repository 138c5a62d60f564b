"""Floods from another process push nothing out: the robot refuses a wrong-key flood and the
station one of garbage from many sources, while the operator drives and keeps getting what the
robot sends.

The operator's telemetry and video rates under a flood depend on the machine (the flooder and
the kernel's handling of 20,000 datagrams a second take their share of its cores): they are
the ``link.flood…`` benchmarks' figures. These tests assert what does not: the flood ran, was
refused where it should be, stopped nothing, and cost the operator none of the robot's
packets."""

from __future__ import annotations

import pytest

from tools.attack import flood_trial

pytestmark = pytest.mark.realtime


def test_a_wrong_key_flood_stops_nothing_and_the_operator_keeps_its_telemetry() -> None:
    result = flood_trial(20_000.0, seconds=2.0)
    # the flood ran (its rate, which the machine sets, is link.flood's figure)
    assert result.flood_pps > 1000
    assert result.refused > 1000  # and reached the robot, which refused it
    assert result.watchdog_stops == 0
    assert result.telemetry_hz > 0  # the robot kept reporting
    assert result.video_fps > 0
    assert result.delivered >= 0.99  # and what it sent arrived
    assert result.driving_share > 0.9  # the robot drove all along (a still one passes the rest)


def test_garbage_from_many_sources_at_the_station_leaves_the_cockpit_its_rates() -> None:
    result = flood_trial(20_000.0, seconds=2.0, target="station", payload="garbage", sockets=64)
    assert result.flood_pps > 1000  # it ran (the rate is link.flood_station's figure)
    assert result.refused == 0  # none of it reached the station: its socket hears the robot only
    assert result.watchdog_stops == 0
    assert result.video_fps_quiet > 5  # the camera runs
    assert result.telemetry_hz > 0
    assert result.video_fps > 0
    assert result.delivered >= 0.99
    assert result.driving_share > 0.9  # the robot drove all along (a still one passes the rest)
