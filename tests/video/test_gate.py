"""The operator's keyframe gate and feedback, and the robot's sender: a lost frame holds the
deltas back until a keyframe, the keyframe is asked for at a bounded rate, and the robot
answers it at a bounded rate too."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import VideoCodec, VideoFeedback, VideoFrame
from freelook.video import (
    ByteBudget,
    FeedbackReporter,
    FrameGate,
    RateController,
    Rung,
    VideoEncoder,
    VideoSender,
    VideoSetting,
)


def vp8(frame_id: int, keyframe: bool = False, stream: int = 0) -> VideoFrame:
    return VideoFrame(frame_id, 1.0, 8, 8, b"x", stream, 0, VideoCodec.VP8, keyframe)


def test_a_gap_holds_deltas_until_the_next_keyframe() -> None:
    gate = FrameGate()
    assert [gate.admit(vp8(i, i == 0)) for i in range(3)] == [True, True, True]
    assert not gate.wants_keyframe(0)
    # frame 3 lost
    assert gate.admit(vp8(4)) is False
    assert gate.wants_keyframe(0)
    assert gate.admit(vp8(5)) is False
    assert gate.admit(vp8(6, keyframe=True)) is True
    assert not gate.wants_keyframe(0)
    assert gate.admit(vp8(7)) is True
    assert (gate.gaps, gate.held, gate.passed) == (1, 2, 5)


def test_deltas_before_any_keyframe_are_held() -> None:
    gate = FrameGate()
    assert gate.admit(vp8(10)) is False
    assert gate.wants_keyframe(0)


def test_streams_are_gated_apart_and_jpeg_always_passes() -> None:
    gate = FrameGate()
    assert gate.admit(vp8(0, True, stream=0))
    assert gate.admit(vp8(0, True, stream=1))
    assert not gate.admit(vp8(5, stream=1))
    assert gate.admit(vp8(1, stream=0))  # stream 0 is still in step
    assert gate.admit(VideoFrame(9, 1.0, 8, 8, b"j", 2))


def test_feedback_reports_loss_and_rate_limits_keyframe_requests() -> None:
    gate = FrameGate()
    reporter = FeedbackReporter(gate, period=0.5, request_spacing=0.5)
    gate.admit(vp8(0, True))
    assert reporter.poll(0.0, 0, 0) == [VideoFeedback(0, 0.0, False)]
    assert reporter.poll(0.1, 10, 0) == []  # nothing due
    gate.admit(vp8(3))  # a gap
    (request,) = reporter.poll(0.2, 10, 0)
    assert request.keyframe
    assert reporter.poll(0.3, 10, 0) == []  # asked 0.1 s ago: not again yet
    reports = reporter.poll(0.75, 90, 10)  # 10 of the 100 packets since 0.0 lost
    assert reports == [VideoFeedback(0, 0.1, True)] * 2  # the request twice, at 10 % loss
    gate.admit(vp8(4, True))
    (report,) = reporter.poll(1.3, 180, 10)
    assert report == VideoFeedback(0, 0.0, False)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(0.0, 10.0), min_size=1, max_size=200))
def test_keyframe_requests_never_come_faster_than_their_spacing(times: list[float]) -> None:
    gate = FrameGate()
    reporter = FeedbackReporter(gate, period=0.5, request_spacing=0.5)
    gate.admit(vp8(1))  # no keyframe yet: wanted until one comes
    asked = [t for t in sorted(times) for f in reporter.poll(t, 0, 0) if f.keyframe]
    assert all(b - a >= 0.5 for a, b in itertools.pairwise(asked))


@pytest.mark.parametrize(
    ("loss", "copies"), [(0.0, 1), (0.03, 1), (0.05, 2), (0.1, 2), (0.2, 3), (0.4, 4), (0.9, 4)]
)
def test_a_keyframe_request_goes_in_copies_enough_for_the_loss(loss: float, copies: int) -> None:
    # every request lost freezes the picture until the next one: on a lossy link it goes out
    # often enough that all copies are lost one time in fifty at most (four at the most)
    gate = FrameGate()
    reporter = FeedbackReporter(gate, period=0.5, request_spacing=0.2)
    gate.admit(vp8(0, True))
    reporter.poll(0.0, 0, 0)
    lost = round(1000 * loss)
    gate.admit(vp8(2))  # a gap
    requests = reporter.poll(0.5, 1000 - lost, lost)
    assert requests == [VideoFeedback(0, loss, True)] * copies
    assert copies == 4 or loss < 0.04 or loss**copies <= 0.02  # below 4 %: once, as on a clean link
    assert reporter.poll(1.0, 2000 - lost, lost) == [VideoFeedback(0, 0.0, True)]  # clean again


def test_the_copies_of_a_report_count_its_loss_once() -> None:
    # a request's copies (and a request between two reports) repeat the last measured loss:
    # the robot's smoothed loss moves as it would on one report
    once, thrice = RateController(250_000, 64, 48, 10.0), RateController(250_000, 64, 48, 10.0)
    one, three = _sender(controller=once), _sender(controller=thrice)
    for t in range(4):
        one.on_feedback(VideoFeedback(0, 0.4, True), t * 0.5)
        for _ in range(3):
            three.on_feedback(VideoFeedback(0, 0.4, True), t * 0.5)
    assert thrice.loss == once.loss > 0.0
    assert three.keyframe_requests == 3 * one.keyframe_requests == 12


def test_on_a_lossy_link_a_keyframe_goes_once_more_than_the_other_frames() -> None:
    control = RateController(250_000, 64, 48, 10.0)
    sender = _sender(controller=control)
    sender.encoder.configure(control.setting)
    first = sender.encode(IMAGE, 0.0, 0.0)
    assert first is not None
    assert first.keyframe
    assert sender.copies_of(first) == sender.copies == 1  # a clean link: once each
    for t in range(6):
        sender.on_feedback(VideoFeedback(0, 0.2, t == 5), t * 0.5)
    assert sender.copies == 2
    key, delta = sender.encode(IMAGE, 3.0, 3.0), sender.encode(IMAGE, 3.1, 3.1)
    assert key is not None
    assert delta is not None
    assert (key.keyframe, delta.keyframe) == (True, False)
    assert (sender.copies_of(key), sender.copies_of(delta)) == (3, 2)


def _sender(**kwargs: object) -> VideoSender:
    setting = VideoSetting(200_000, Rung(64, 48, 10.0))
    return VideoSender(0, VideoEncoder(VideoCodec.VP8, setting), **kwargs)  # type: ignore[arg-type]


IMAGE = np.full((48, 64, 3), 128, np.uint8)


def test_the_sender_numbers_frames_one_by_one_and_answers_keyframe_requests_at_a_bounded_rate() -> (
    None
):
    sender = _sender(keyframe_spacing=0.25)
    frames = [sender.encode(IMAGE, t * 0.1, t * 0.1) for t in range(3)]
    assert [f.frame_id for f in frames if f] == [0, 1, 2]
    assert [f.keyframe for f in frames if f] == [True, False, False]
    sender.on_feedback(VideoFeedback(0, 0.0, True), 0.3)
    frame = sender.encode(IMAGE, 0.3, 0.3)
    assert frame is not None
    assert frame.keyframe
    sender.on_feedback(VideoFeedback(0, 0.0, True), 0.35)
    frame = sender.encode(IMAGE, 0.4, 0.4)  # 0.1 s after the last keyframe: not yet
    assert frame is not None
    assert not frame.keyframe
    frame = sender.encode(IMAGE, 0.6, 0.6)  # the request still stands
    assert frame is not None
    assert frame.keyframe
    sender.on_feedback(VideoFeedback(1, 0.0, True), 1.0)  # another stream's: not ours
    frame = sender.encode(IMAGE, 1.0, 1.0)
    assert frame is not None
    assert not frame.keyframe
    assert sender.keyframe_requests == 2


def test_the_budget_thins_frames_before_they_are_encoded() -> None:
    budget = ByteBudget(1000.0, burst_s=0.5)  # 1000 bytes/s
    sender = _sender(budget=budget)
    sent = 0
    for i in range(100):  # 10 s at 10 fps
        now = i * 0.1
        if sender.ready(now):
            frame = sender.encode(IMAGE, now, now)
            assert frame is not None
            sender.spent(len(frame.data) + 300)  # a frame of over 300 bytes on the wire
            sent += 1
    assert sender.skipped == 100 - sent
    assert 0 < sent < 40
    assert sender.sent_bytes <= 1000 * 10 + 500 + 2000  # the rate, the burst, one frame's debt


def test_feedback_sets_the_encoders_bitrate() -> None:
    control = RateController(250_000, 64, 48, 10.0)
    sender = _sender(controller=control)
    sender.encoder.configure(control.setting)
    before = sender.bitrate
    assert before is not None
    for t in range(6):
        sender.on_feedback(VideoFeedback(0, 0.4, False), float(t))
    assert sender.bitrate is not None
    assert sender.bitrate < 0.5 * before
