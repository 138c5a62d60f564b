"""Camera streams on the native profile: stream id and layout travel with every frame, each
stream is assembled apart, and hostile stream or layout values are refused and counted."""

from __future__ import annotations

import hashlib
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import (
    MAX_DATAGRAM,
    MAX_STREAMS,
    FrameAssembler,
    FrameLayout,
    LinkSession,
    NativeCodec,
    Refused,
    ThesisCodec,
    ValueRangeError,
    VideoFragment,
    VideoFrame,
    derive_key,
)

KEY = derive_key("camera streams")
HEADER_SIZE = 22  # the native header (docs/protocol.md)


def codecs() -> tuple[NativeCodec, NativeCodec]:
    return NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)


def _retag(packet: bytes) -> bytes:
    body = packet[:-16]
    return body + hashlib.blake2s(body, key=KEY, digest_size=16).digest()


@settings(max_examples=60, deadline=None)
@given(
    st.binary(min_size=0, max_size=6000),
    st.integers(0, MAX_STREAMS - 1),
    st.sampled_from(FrameLayout),
    st.integers(1, 2000).map(lambda w: 2 * w),
)
def test_stream_and_layout_survive_fragmenting(
    jpeg: bytes, stream: int, layout: FrameLayout, width: int
) -> None:
    sender, receiver = codecs()
    frame = VideoFrame(7, 12.25, width, 240, jpeg, stream, layout)
    datagrams = sender.encode_video(frame, 1.0)
    assert all(len(d) <= MAX_DATAGRAM for d in datagrams)
    assembler = FrameAssembler()
    out = [assembler.add(receiver.decode(d).message) for d in datagrams]  # type: ignore[arg-type]
    assert out[-1] == frame
    assert out[-1].stream == stream
    assert out[-1].layout == layout


def test_interleaved_streams_are_assembled_apart() -> None:
    """A driving-camera frame arriving in the middle of an arm frame abandons neither; frame
    ids are compared within a stream (stream 1's ids may lag stream 0's)."""
    sender, receiver = codecs()
    drive = sender.encode_video(VideoFrame(900, 1.0, 8, 8, bytes(3000)), 1.0)
    arm = sender.encode_video(VideoFrame(3, 1.0, 16, 8, bytes(range(256)) * 12, 1, 1), 1.0)
    assert len(drive) > 1
    assert len(arm) > 1
    order = [arm[0], *drive, *arm[1:]]
    assembler = FrameAssembler()
    done = [assembler.add(receiver.decode(d).message) for d in order]  # type: ignore[arg-type]
    frames = [f for f in done if f is not None]
    assert [(f.stream, f.frame_id) for f in frames] == [(0, 900), (1, 3)]
    assert assembler.dropped == 0
    assert assembler.stale == 0


def test_the_first_fragment_header_carries_the_stream_byte() -> None:
    """The wire layout documented in docs/protocol.md: u32 frame id, u16 index, u16 count,
    u8 stream, then the blob: f64 stamp, u16 width, u16 height, u8 layout, u8 codec, u8 flags
    (bit 0: a keyframe), the encoded frame."""
    sender, _ = codecs()
    (datagram,) = sender.encode_video(VideoFrame(5, 2.5, 640, 240, b"JPEG", 1, 1), 1.0)
    payload = datagram[HEADER_SIZE:-16]
    head = struct.pack("<IHHB", 5, 0, 1, 1) + struct.pack("<dHHBBB", 2.5, 640, 240, 1, 0, 1)
    assert payload == head + b"JPEG"


@pytest.mark.parametrize("stream", [MAX_STREAMS, 200, 255])
def test_a_fragment_of_an_unknown_stream_is_refused_and_counted(stream: int) -> None:
    sender, _ = codecs()
    (packet,) = sender.encode_video(VideoFrame(5, 2.5, 8, 8, b"x", 1), 1.0)
    at = HEADER_SIZE + 8
    assert packet[at] == 1
    forged = _retag(packet[:at] + bytes([stream]) + packet[at + 1 :])
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(forged, 1.0)
    assert isinstance(event, Refused)
    assert event.reason == "value"
    assert "VideoFragment.stream" in str(event.error)
    assert session.stats.refused == {"value": 1}


@pytest.mark.parametrize(("width", "layout"), [(8, 2), (8, 255), (9, 1)])
def test_a_frame_with_an_unknown_layout_or_an_odd_pair_is_refused_and_counted(
    width: int, layout: int
) -> None:
    """The layout lives in the frame blob: the assembler checks the complete frame."""
    sender, receiver = codecs()
    (packet,) = sender.encode_video(VideoFrame(5, 2.5, 8, 8, b"x", 1, 0), 1.0)
    blob = HEADER_SIZE + 9
    head = struct.pack("<dHHB", 2.5, width, 8, layout)
    forged = _retag(packet[:blob] + head + packet[blob + len(head) :])
    fragment = receiver.decode(forged).message
    assert isinstance(fragment, VideoFragment)
    assembler = FrameAssembler()
    assert assembler.add(fragment) is None
    assert assembler.refused == 1
    assert assembler.dropped == 1
    assert assembler.completed == 0


@pytest.mark.parametrize(
    ("frame", "match"),
    [
        (VideoFrame(1, 1.0, 8, 8, b"x", MAX_STREAMS), "VideoFrame.stream"),
        (VideoFrame(1, 1.0, 8, 8, b"x", -1), "VideoFrame.stream"),
        (VideoFrame(1, 1.0, 8, 8, b"x", 1, 2), "VideoFrame.layout"),
        (VideoFrame(1, 1.0, 9, 8, b"x", 1, FrameLayout.SIDE_BY_SIDE), "odd"),
        (VideoFrame(1, math.nan, 8, 8, b"x", 1), "not finite"),
    ],
)
def test_the_encoder_refuses_a_bad_stream_or_layout(frame: VideoFrame, match: str) -> None:
    sender, _ = codecs()
    with pytest.raises(ValueRangeError, match=match):
        sender.encode_video(frame, 1.0)
    # the session sends nothing rather than raise
    assert LinkSession(sender, spacing=0.05).send(frame, 1.0) == []


def test_assembler_state_is_bounded_by_the_stream_count() -> None:
    assembler = FrameAssembler()
    for stream in range(-3, 300):
        assembler.add(VideoFragment(1, 0, 2, b"x", stream))
    assert len(assembler._streams) == MAX_STREAMS  # one frame in progress per stream at most


def test_the_thesis_profile_carries_no_camera_stream() -> None:
    session = LinkSession(ThesisCodec(), spacing=0.05)
    assert session.send(VideoFrame(1, 1.0, 8, 8, b"x", 1, 1), 1.0) == []
    assert session.send(VideoFrame(1, 1.0, 8, 8, b"x"), 1.0) == []


@settings(max_examples=100, deadline=None)
@given(st.data())
def test_any_interleaving_of_two_streams_completes_every_frame(data: st.DataObject) -> None:
    """Fragments of each stream in order, the streams merged in any order: every frame of
    both streams comes out whole, none dropped (a stream never abandons another's frame)."""
    sender, receiver = codecs()
    frames = {
        stream: [
            VideoFrame(
                i, 1.0 + i, 16, 8, bytes([stream, i]) * data.draw(st.integers(1, 3000)), stream, 1
            )
            for i in range(3)
        ]
        for stream in (0, 1)
    }
    queues = {s: [d for f in fs for d in sender.encode_video(f, 1.0)] for s, fs in frames.items()}
    order = data.draw(st.permutations([s for s, q in queues.items() for _ in q]))
    assembler = FrameAssembler()
    out: list[VideoFrame] = []
    for stream in order:
        done = assembler.add(receiver.decode(queues[stream].pop(0)).message)  # type: ignore[arg-type]
        if done is not None:
            out.append(done)
    assert sorted(out, key=lambda f: (f.stream, f.frame_id)) == frames[0] + frames[1]
    assert assembler.dropped == 0
    assert assembler.stale == 0
