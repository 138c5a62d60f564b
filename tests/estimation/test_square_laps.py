"""Seed 000's five square laps on the slipping FOI UGV with gyro + encoders alone (no laser).

The paper reports −3…−6° (CW) and 0…+1° (CCW) of camera heading drift after five laps; the
heading filter, calibrating the gyro's scale against the tracks in the 90° turns in place,
keeps it within 1.5° (the full 10-seed run is ``freelook experiment square-laps``).
"""

from __future__ import annotations

import pytest

from freelook.experiments import _scenarios as sc


@pytest.mark.parametrize(
    ("seed", "clockwise"), [(1, True), (4, False), (5, False), (7, True), (9, True)]
)
def test_five_square_laps_with_gyro_and_encoders_drift_at_most_1_5_degrees(
    seed: int, clockwise: bool
) -> None:
    drifts = sc.square_laps_trial(seed, clockwise, laps=5, use_localization=False)
    assert len(drifts) == 5
    assert max(abs(d) for d in drifts) <= 1.5
