"""Byte-stream framing: resynchronisation and arbitrary split points."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from freelook.link import (
    EStop,
    NativeCodec,
    SetTransmission,
    StreamDecoder,
    ThesisCodec,
    VelocityCommand,
    derive_key,
)

KEY = derive_key("stream")


def test_resynchronises_after_garbage_without_losing_the_next_packet() -> None:
    codec = ThesisCodec()
    decoder = StreamDecoder(codec)
    first = codec.encode(VelocityCommand(0.2, 0.0), 1.0)
    second = codec.encode(SetTransmission(True), 2.0)
    # garbage that even contains a false header claiming a long packet
    garbage = b"\x00\x13\x6b\xff\xfa\xa1\x00" + bytes(range(40))
    events = decoder.feed(first + garbage + second)
    packets = [e.decoded.message for e in events if e.decoded is not None]
    assert packets == [VelocityCommand(0.2, 0.0), SetTransmission(True)]
    assert decoder.stats.garbage_bytes >= len(garbage) - 10


@given(st.lists(st.integers(1, 30), min_size=1, max_size=50))
def test_split_points_do_not_matter(cuts: list[int]) -> None:
    sender = NativeCodec(KEY, sender=1)
    stream = b"".join(sender.encode(VelocityCommand(0.1 * i, 0.0), 1.0 + i) for i in range(5))
    stream += sender.encode(EStop(True), 9.0)
    decoder = StreamDecoder(NativeCodec(KEY, sender=2))
    messages = []
    position = 0
    for cut in cuts * 20:
        if position >= len(stream):
            break
        for event in decoder.feed(stream[position : position + cut]):
            assert event.kind == "packet"
            messages.append(event.decoded.message)  # type: ignore[union-attr]
        position += cut
    for event in decoder.feed(stream[position:]):
        messages.append(event.decoded.message)  # type: ignore[union-attr]
    assert messages[-1] == EStop(True)
    assert len(messages) == 6
