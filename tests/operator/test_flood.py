"""A wrong-key flood from another process does not push the operator's commands out."""

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
