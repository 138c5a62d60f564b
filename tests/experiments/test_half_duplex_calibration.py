"""The half-duplex link's one free constant comes from Table 7.1's trial 1 alone, by code: its
one failure after its operation time over the model's mean collision rate."""

from __future__ import annotations

import dataclasses

import pytest

from freelook.experiments import _packet_drop
from freelook.experiments._packet_drop import TABLE_7_1, calibrated_lock_per_collision


@pytest.mark.slow
def test_the_lock_up_probability_is_trial_1s_failure_over_the_models_collisions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    p, rate = calibrated_lock_per_collision()
    trial = TABLE_7_1[0]
    assert p * rate * trial.operation_time == pytest.approx(1.0)
    assert 3.0 < rate < 5.0  # collisions/s at the thesis's frames and spacings, on average
    # trial 1's measurement moved, the constant moves with it; no other trial enters
    longer = dataclasses.replace(trial, operation_time=2 * trial.operation_time)
    others = tuple(dataclasses.replace(t, up_loss=0.5, down_loss=0.5) for t in TABLE_7_1[1:])
    monkeypatch.setattr(_packet_drop, "TABLE_7_1", (longer, *others))
    p2, rate2 = calibrated_lock_per_collision.__wrapped__()
    assert p2 * rate2 * longer.operation_time == pytest.approx(1.0)
    assert p2 == pytest.approx(p / 2, rel=0.1)
