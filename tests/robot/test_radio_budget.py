"""A slow radio's budget on injected times: telemetry first, video only from what is left, and
no frame that would hold the air longer than ``max_hold`` (the commands and reports behind it
would wait that long)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freelook.robot._radio import FULL_REFILL, RadioBudget

BAUD = 115200
TELEMETRY = 120  # bytes of a report
SPACING = 0.031  # s: the robot's own report spacing


def test_at_115200_baud_telemetry_takes_at_most_its_share_and_video_the_rest() -> None:
    budget = RadioBudget.for_baud(BAUD, TELEMETRY, SPACING)
    usable = 0.8 * BAUD / 10
    assert budget.bytes_per_s == pytest.approx(usable)
    assert TELEMETRY / budget.telemetry_spacing <= 0.7 * usable + 1e-9
    assert budget.telemetry_spacing >= SPACING
    assert budget.video_rate == pytest.approx(usable - TELEMETRY / budget.telemetry_spacing)


def test_a_frame_that_would_hold_the_radio_longer_than_max_hold_never_goes() -> None:
    budget = RadioBudget.for_baud(BAUD, TELEMETRY, SPACING)
    longest = int(budget.max_hold * budget.bytes_per_s)  # 921 bytes at 115200 baud
    budget.may_send_frame(0.0, 0)
    for t in (1.0, 2.0, 10.0, 100.0):  # however long the budget fills
        assert not budget.may_send_frame(t, longest + 1)
    assert budget.wait_for(longest + 1) == FULL_REFILL  # tried again later: the next may fit
    assert budget.may_send_frame(200.0, longest)


def test_the_tokens_refill_at_the_video_rate_and_hold_at_most_two_seconds_of_it() -> None:
    budget = RadioBudget(10_000.0, 0.1, video_rate=200.0)  # frames of up to 1000 bytes
    budget.may_send_frame(0.0, 0)
    assert not budget.may_send_frame(0.5, 101)  # 100 bytes after 0.5 s
    assert budget.may_send_frame(0.5, 100)
    budget.spent(100)
    assert budget.wait_for(100) == pytest.approx(0.5)
    assert not budget.may_send_frame(0.99, 100)
    assert budget.may_send_frame(1.0, 100)
    budget.spent(100)
    assert budget.may_send_frame(1000.0, 100)  # a long quiet fills it, to its bound only
    budget.spent(100)
    held = int(FULL_REFILL * 200.0) - 100  # two seconds of the rate, less the frame sent
    assert budget.may_send_frame(1000.0, held)
    assert not budget.may_send_frame(1000.0, held + 1)


def test_no_video_budget_sends_no_frame() -> None:
    budget = RadioBudget(1000.0, 0.1, video_rate=0.0)
    budget.may_send_frame(0.0, 0)
    assert not budget.may_send_frame(100.0, 1)
    assert budget.wait_for(1) == FULL_REFILL


@given(
    sizes=st.lists(st.integers(1, 2000), min_size=1, max_size=60),
    gaps=st.lists(st.floats(0.0, 0.5), min_size=60, max_size=60),
)
def test_the_video_sent_never_exceeds_its_rate(sizes: list[int], gaps: list[float]) -> None:
    budget = RadioBudget.for_baud(BAUD, TELEMETRY, SPACING)
    now, sent = 0.0, 0
    budget.may_send_frame(now, 0)
    for size, gap in zip(sizes, gaps, strict=False):
        now += gap
        if budget.may_send_frame(now, size):
            assert size <= budget.max_hold * budget.bytes_per_s
            budget.spent(size)
            sent += size
    # what the radio carried for video: no more than its rate over the time (the tokens start
    # empty)
    assert sent <= budget.video_rate * now + 1e-6
