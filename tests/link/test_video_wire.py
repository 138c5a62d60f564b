"""Inter-frame video on the native wire: the codec and the keyframe flag travel with every
frame, the operator's video feedback (loss, keyframe request) is bounded and validated, and
forged codec ids, flags and feedback are refused and counted."""

from __future__ import annotations

import hashlib
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import (
    MAX_STREAMS,
    FrameAssembler,
    FrameLayout,
    LinkSession,
    NativeCodec,
    Refused,
    ThesisCodec,
    ValueRangeError,
    VideoCodec,
    VideoFeedback,
    VideoFragment,
    VideoFrame,
    derive_key,
)

KEY = derive_key("video wire")
HEADER_SIZE = 22  # the native header (docs/protocol.md)
FRAGMENT_SIZE = 9  # frame id, index, count, stream
HEAD = struct.Struct("<dHHBBB")  # the frame head: stamp, width, height, layout, codec, flags


def codecs() -> tuple[NativeCodec, NativeCodec]:
    return NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)


def _retag(packet: bytes) -> bytes:
    body = packet[:-16]
    return body + hashlib.blake2s(body, key=KEY, digest_size=16).digest()


def _assemble(datagrams: list[bytes], receiver: NativeCodec) -> tuple[FrameAssembler, list]:
    assembler = FrameAssembler()
    out = []
    for d in datagrams:
        fragment = receiver.decode(d).message
        assert isinstance(fragment, VideoFragment)
        out.append(assembler.add(fragment))
    return assembler, out


@settings(max_examples=80, deadline=None)
@given(
    data=st.binary(min_size=0, max_size=5000),
    codec=st.sampled_from(VideoCodec),
    keyframe=st.booleans(),
    frame_id=st.integers(0, 0xFFFFFFFF),
    stream=st.integers(0, MAX_STREAMS - 1),
    size=st.tuples(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF)),
)
def test_codec_and_keyframe_survive_fragmenting(
    data: bytes,
    codec: VideoCodec,
    keyframe: bool,
    frame_id: int,
    stream: int,
    size: tuple[int, int],
) -> None:
    keyframe = keyframe or codec == VideoCodec.JPEG  # a JPEG frame is always a keyframe
    frame = VideoFrame(frame_id, 3.5, size[0], size[1], data, stream, 0, codec, keyframe)
    sender, receiver = codecs()
    assembler, out = _assemble(sender.encode_video(frame, 1.0), receiver)
    assert out[-1] == frame
    assert isinstance(out[-1].codec, VideoCodec)
    assert out[-1].keyframe is keyframe
    assert all(o is None for o in out[:-1])
    assert assembler.completed == 1


def _forge_head(sender: NativeCodec, codec: int, flags: int) -> bytes:
    frame = VideoFrame(5, 2.5, 8, 8, b"chunk", 0, 0, VideoCodec.VP8, True)
    (packet,) = sender.encode_video(frame, 1.0)
    at = HEADER_SIZE + FRAGMENT_SIZE
    head = HEAD.pack(2.5, 8, 8, FrameLayout.MONO, codec, flags)
    return _retag(packet[:at] + head + packet[at + HEAD.size :])


@pytest.mark.parametrize(
    ("codec", "flags"),
    [(4, 1), (200, 0), (255, 1), (1, 0x02), (1, 0x81), (0, 0)],  # (0, 0): a JPEG delta
)
def test_an_unknown_codec_or_flag_is_refused_and_counted(codec: int, flags: int) -> None:
    sender, receiver = codecs()
    assembler, out = _assemble([_forge_head(sender, codec, flags)], receiver)
    assert out == [None]
    assert assembler.refused == 1
    assert assembler.dropped == 1
    assert assembler.completed == 0
    # the next frame of the stream still comes through
    good = VideoFrame(6, 3.0, 8, 8, b"next", 0, 0, VideoCodec.VP8, False)
    (packet,) = sender.encode_video(good, 1.0)
    fragment = receiver.decode(packet).message
    assert isinstance(fragment, VideoFragment)
    assert assembler.add(fragment) == good


@pytest.mark.parametrize("cut", [0, 1, HEAD.size - 1])
def test_a_frame_shorter_than_its_head_is_refused(cut: int) -> None:
    sender, receiver = codecs()
    frame = VideoFrame(5, 2.5, 8, 8, b"", 0, 0, VideoCodec.VP8, True)
    (packet,) = sender.encode_video(frame, 1.0)
    at = HEADER_SIZE + FRAGMENT_SIZE
    body = packet[:-16]
    payload = body[HEADER_SIZE:at] + body[at : at + cut]
    header = bytearray(body[:HEADER_SIZE])
    struct.pack_into("<H", header, 20, len(payload))
    forged = _retag(bytes(header) + payload + bytes(16))
    assembler, out = _assemble([forged], receiver)
    assert out == [None]
    assert assembler.refused == 1


@pytest.mark.parametrize(
    ("frame", "match"),
    [
        (VideoFrame(1, 1.0, 8, 8, b"x", 0, 0, 4, True), "VideoFrame.codec"),
        (VideoFrame(1, 1.0, 8, 8, b"x", 0, 0, -1, True), "VideoFrame.codec"),
        (VideoFrame(1, 1.0, 8, 8, b"x", 0, 0, VideoCodec.JPEG, False), "always a keyframe"),
    ],
)
def test_the_encoder_refuses_a_bad_codec(frame: VideoFrame, match: str) -> None:
    sender, _ = codecs()
    with pytest.raises(ValueRangeError, match=match):
        sender.encode_video(frame, 1.0)
    assert LinkSession(sender, spacing=0.05).send(frame, 1.0) == []


@settings(max_examples=80, deadline=None)
@given(
    stream=st.integers(0, MAX_STREAMS - 1),
    loss=st.floats(0.0, 1.0, width=32),
    keyframe=st.booleans(),
)
def test_video_feedback_round_trips(stream: int, loss: float, keyframe: bool) -> None:
    sender, receiver = codecs()
    message = VideoFeedback(stream, loss, keyframe)
    assert receiver.decode(sender.encode(message, 1.0)).message == message


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (VideoFeedback(MAX_STREAMS, 0.0), "VideoFeedback.stream"),
        (VideoFeedback(0, 1.5), "VideoFeedback.loss"),
        (VideoFeedback(0, -0.1), "VideoFeedback.loss"),
        (VideoFeedback(0, math.nan), "not finite"),
        (VideoFeedback(0, math.inf), "not finite"),
    ],
)
def test_the_encoder_refuses_bad_feedback(message: VideoFeedback, match: str) -> None:
    sender, _ = codecs()
    with pytest.raises(ValueRangeError, match=match):
        sender.encode(message, 1.0)


def _feedback_packet(payload: bytes) -> bytes:
    sender, _ = codecs()
    packet = sender.encode(VideoFeedback(0, 0.25, True), 1.0)
    header = bytearray(packet[:HEADER_SIZE])
    struct.pack_into("<H", header, 20, len(payload))
    return _retag(bytes(header) + payload + bytes(16))


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (struct.pack("<BfB", MAX_STREAMS, 0.1, 0), "value"),
        (struct.pack("<BfB", 0, math.nan, 0), "value"),
        (struct.pack("<BfB", 0, 7.0, 0), "value"),
        (struct.pack("<BfB", 0, 0.1, 2), "malformed"),  # a boolean byte of 2
        (struct.pack("<BfB", 0, 0.1, 1) + b"\x00", "malformed"),  # a byte too many
        (struct.pack("<Bf", 0, 0.1), "malformed"),  # a byte short
    ],
)
def test_forged_feedback_is_refused_and_counted(payload: bytes, reason: str) -> None:
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(_feedback_packet(payload), 1.0)
    assert isinstance(event, Refused)
    assert event.reason == reason
    assert session.stats.refused == {reason: 1}


def test_the_thesis_wire_carries_no_video_feedback() -> None:
    """The thesis profile stays what it was: JPEG-free, feedback-free."""
    session = LinkSession(ThesisCodec(), spacing=0.05)
    assert session.send(VideoFeedback(0, 0.1, True), 1.0) == []
