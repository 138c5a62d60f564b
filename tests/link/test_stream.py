"""Byte-stream framing: resynchronisation and arbitrary split points."""

from __future__ import annotations

import struct

from hypothesis import given
from hypothesis import strategies as st

from freelook.link import (
    Decoded,
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


def test_a_stream_dense_with_false_packets_is_searched_once_not_on_every_read() -> None:
    """A forged header that declares a long packet, then eighty complete packets with bad tags:
    each false packet is tried once, not again on every read while the long one is awaited
    (which let a few forged frames a second starve a radio station's real telemetry)."""
    receiver = NativeCodec(KEY, sender=2)
    tried = 0
    decode = receiver.decode

    def counting(data: bytes | bytearray | memoryview) -> Decoded:
        nonlocal tried
        tried += 1
        return decode(data)

    receiver.decode = counting  # type: ignore[method-assign]
    decoder = StreamDecoder(receiver)
    # the native header: sync, version 1, flags (1: tagged), type, stream, sender, sequence,
    # stamp, payload length; a tag of 16 bytes follows the payload
    header = struct.Struct("<2sBBBBHIQH")
    long_header = header.pack(b"\xfe\x4c", 1, 1, 1, 0, 1, 0, 0, 4000)
    false_packet = header.pack(b"\xfe\x4c", 1, 1, 1, 0, 1, 0, 0, 8) + bytes(8 + 16)
    stream = long_header + false_packet * 80
    for i in range(0, len(stream), 32):  # a radio's reads
        decoder.feed(stream[i : i + 32])
    real = NativeCodec(KEY, sender=1).encode(VelocityCommand(0.5, 0.0), 1.0)
    events = decoder.feed(real)
    assert [e.decoded.message for e in events if e.decoded is not None] == [
        VelocityCommand(0.5, 0.0)
    ]
    assert tried <= 80 + 2
