"""The video rate controller: the bitrate follows the budget and falls as the loss rises, and
the frame rate and resolution step down before the bits per pixel collapse."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.video import RateController, ladder


def test_the_ladder_steps_rate_then_size() -> None:
    rungs = ladder(640, 480, 15.0)
    assert [(r.width, r.height, r.fps) for r in rungs[:3]] == [
        (640, 480, 15.0),
        (640, 480, 10.0),
        (320, 240, 15.0),
    ]
    assert all(a.pixel_rate > b.pixel_rate for a, b in itertools.pairwise(rungs))


def test_the_bitrate_starts_from_the_budget() -> None:
    control = RateController(250_000, 320, 240, 15.0)
    assert control.setting.bitrate == pytest.approx(0.85 * 250_000, rel=0.01)
    assert control.setting.rung.width == 320


def test_the_bitrate_falls_as_loss_rises_and_comes_back_after_the_hold() -> None:
    control = RateController(250_000, 320, 240, 15.0)
    assert control.setting.copies == 1
    rates = [control.on_feedback(loss, t).bitrate for t, loss in enumerate([0.1] * 4)]
    at_ten = rates[-1]
    # 10 % loss: each frame twice, at half the bitrate (the copies cover that much loss)
    assert control.setting.copies == 2
    assert at_ten == pytest.approx(0.85 * 250_000 / 2, rel=0.01)
    for t in range(4, 14):
        control.on_feedback(0.4, float(t))
    at_forty = control.setting.bitrate
    assert at_forty < 0.6 * at_ten  # the loss beyond what the copies cover lowers it further
    # recovery waits out the hold after each change: not at once
    control.on_feedback(0.0, 14.0)
    early = control.setting.bitrate
    for t in range(15, 60):
        control.on_feedback(0.0, float(t))
    assert control.setting.bitrate > early
    assert control.setting.bitrate == pytest.approx(0.85 * 250_000, rel=0.11)
    assert control.setting.copies == 1


def test_copies_start_and_stop_with_hysteresis() -> None:
    control = RateController(250_000, 320, 240, 15.0, smoothing=1.0)  # the reports as they are
    losses = [0.03, 0.03, 0.05, 0.05, 0.03, 0.03, 0.03, 0.01, 0.01, 0.0]
    copies = [control.on_feedback(loss, 10.0 * t).copies for t, loss in enumerate(losses)]
    assert copies == [1, 1, 2, 2, 2, 2, 2, 1, 1, 1]


def test_a_small_budget_steps_the_rate_and_size_down() -> None:
    big = RateController(2_000_000, 640, 480, 15.0)
    assert (big.setting.rung.width, big.setting.rung.fps) == (640, 15.0)
    small = RateController(120_000, 640, 480, 15.0)
    assert small.setting.rung.width == 320
    # heavy loss on a small budget: down the ladder
    for t in range(10):
        small.on_feedback(0.6, float(t))
    assert small.setting.rung.pixel_rate < 320 * 240 * 15


def test_a_camera_of_another_size_gets_a_ladder_of_its_own() -> None:
    """Described as 640 × 480, its frames come 64 × 48 (a ROS topic's camera), then 65 × 49
    (odd): the rungs follow the frames, even-sized, at the same bitrate and rate."""
    control = RateController(2_000_000, 640, 480, 15.0)
    bitrate = control.setting.bitrate
    setting = control.resize(64, 48)
    assert (setting.rung.width, setting.rung.height, setting.rung.fps) == (64, 48, 15.0)
    assert setting.bitrate == bitrate
    assert all(r.width <= 64 for r in control.rungs)
    assert (control.resize(65, 49).rung.width, control.setting.rung.height) == (64, 48)
    tiny = control.resize(12, 10)  # smaller than any rung of the ladder: its own size
    assert (tiny.rung.width, tiny.rung.height) == (12, 10)
    # and back up: 640 × 480 again
    assert control.resize(640, 480).rung.width == 640


@pytest.mark.parametrize("budget", [0.0, -1.0, math.nan, math.inf])
def test_a_budget_that_is_no_number_is_refused(budget: float) -> None:
    with pytest.raises(ValueError, match="video budget"):
        RateController(budget, 320, 240, 15.0)


@settings(max_examples=200, deadline=None)
@given(
    budget=st.floats(20_000, 10_000_000),
    losses=st.lists(st.one_of(st.floats(allow_nan=True, allow_infinity=True)), max_size=30),
)
def test_the_setting_stays_within_the_budget_and_the_ladder(
    budget: float, losses: list[float]
) -> None:
    """Whatever the reports (NaN, negative, huge included): a bitrate within the budget, on a
    rung whose bits per pixel are enough unless it is the lowest."""
    control = RateController(budget, 640, 480, 15.0)
    for t, loss in enumerate(losses):
        setting = control.on_feedback(loss, t * 0.5)
        assert 1000 <= setting.bitrate <= budget
        assert setting.copies in (1, 2)
        assert setting.bitrate * setting.copies <= budget  # the copies fit the budget too
        assert setting.rung in control.rungs
        enough = setting.bitrate >= control.min_bpp * setting.rung.pixel_rate
        assert enough or setting.rung == control.rungs[-1]
    assert 0.0 <= control.loss <= 1.0


@settings(max_examples=100, deadline=None)
@given(low=st.floats(0.0, 1.0), high=st.floats(0.0, 1.0))
def test_more_loss_never_means_more_bitrate(low: float, high: float) -> None:
    low, high = sorted((low, high))
    a, b = RateController(500_000, 320, 240, 15.0), RateController(500_000, 320, 240, 15.0)
    for t in range(12):
        a.on_feedback(low, float(t))
        b.on_feedback(high, float(t))
    # a held setting stays until the wanted bitrate moves by the deadband of the held one, so
    # it lies within held · (1 − deadband) … held of what is wanted while the loss only rises
    assert b.setting.bitrate <= a.setting.bitrate / (1 - a.deadband)
