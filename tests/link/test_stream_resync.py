"""The resynchronising stream decoder, as a property: any interleaving of valid packets and
garbage (random bytes, false headers, packets cut short or damaged) gives back every valid
packet, in order, at its offset, however the stream is split into reads (one read of it all
included), and counts every other byte as garbage once the stream has ended."""

from __future__ import annotations

import math
from collections.abc import Callable

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from freelook.link import (
    EStop,
    FreeLookCommand,
    Heartbeat,
    NativeCodec,
    PositionReport,
    SetTransmission,
    SetTransmissionSpacing,
    StreamDecoder,
    ThesisCodec,
    VelocityCommand,
    WheelSpeedCommand,
    crc16_ccitt_false,
    derive_key,
)
from keys_for_tests import KEY_C

KEY = derive_key(KEY_C)

_mm = st.integers(-30_000, 30_000).map(lambda v: v / 1000)  # a coordinate (the wire's i16 mm)
_speed = st.integers(-20_000, 20_000).map(lambda v: v / 1000)  # within the decoder's limits
_range = st.integers(0, 65_535).map(lambda v: v / 1000)
THESIS_MESSAGES = st.one_of(
    st.builds(VelocityCommand, _speed, st.integers(-300, 300).map(math.radians)),
    st.builds(WheelSpeedCommand, _speed, _speed),
    st.builds(SetTransmission, st.booleans()),
    st.builds(SetTransmissionSpacing, st.integers(0, 65_535).map(lambda v: v / 1000)),
    st.just(Heartbeat()),
    st.builds(
        PositionReport,
        _mm,
        _mm,
        st.integers(-180, 180).map(math.radians),
        _speed,
        st.integers(-300, 300).map(math.radians),
        st.lists(_range, min_size=35, max_size=35).map(tuple),
        st.lists(_range, min_size=8, max_size=8).map(tuple),
    ),
)
NATIVE_MESSAGES = st.one_of(
    st.builds(VelocityCommand, _speed, st.integers(-300, 300).map(math.radians)),
    st.builds(FreeLookCommand, _speed, _speed, st.integers(-300, 300).map(math.radians)),
    st.builds(EStop, st.booleans()),
    st.just(Heartbeat()),
)


def _garbage(packets: st.SearchStrategy[bytes], sync: bytes) -> st.SearchStrategy[bytes]:
    """Bytes that are no packet: random, a header's start (a length byte and the sync pair,
    a type), a packet cut short, a packet with one bit flipped."""
    cut = st.tuples(packets, st.integers(1, 10_000)).map(lambda p: p[0][: p[1] % len(p[0])])
    flipped = st.tuples(packets, st.integers(0, 1 << 20)).map(
        lambda p: (
            p[0][: p[1] // 8 % len(p[0])]
            + bytes([p[0][p[1] // 8 % len(p[0])] ^ 1 << p[1] % 8])
            + p[0][p[1] // 8 % len(p[0]) + 1 :]
        )
    )
    header = st.tuples(st.integers(0, 255), st.integers(0, 255)).map(
        lambda t: bytes([t[0]]) + sync + bytes([t[1]])
    )
    return st.one_of(
        st.binary(min_size=1, max_size=48),
        header,
        st.sampled_from([sync, sync[:1], sync[1:], b"\x6b", b"\x0b"]),
        cut,
        flipped,
    )


def _accidental(
    stream: bytes, starts: set[int], codec: Callable[[], ThesisCodec | NativeCodec]
) -> bool:
    """Whether a valid packet sits anywhere but where one was put (garbage that happens to
    hold a packet, a CRC's one chance in 65,536): no decoder could tell it from a real one."""
    probe = codec()
    sync, offset = probe.sync, probe.sync_offset
    found = stream.find(sync, offset)
    while found >= 0:
        start = found - offset
        found = stream.find(sync, found + 1)
        if start in starts:
            continue
        try:
            length = probe.frame_length(stream, start)
        except Exception:
            continue
        if start + length > len(stream) or length < probe.min_length:
            continue
        try:
            codec().decode(stream[start : start + length])
        except Exception:
            continue
        return True
    return False


def _check(
    pieces: list[tuple[bool, bytes]],
    cuts: list[int],
    codec: Callable[[], ThesisCodec | NativeCodec],
) -> None:
    stream = b"".join(data for _, data in pieces)
    offsets, at = [], 0
    for is_packet, data in pieces:
        if is_packet:
            offsets.append(at)
        at += len(data)
    assume(not _accidental(stream, set(offsets), codec))
    packets = [data for is_packet, data in pieces if is_packet]
    decoder = StreamDecoder(codec())
    events = []
    position = 0
    for cut in cuts:  # the reads; what is left comes in one
        events += decoder.feed(stream[position : position + cut])
        position += cut
    events += decoder.feed(stream[position:])
    assert len(decoder._buffer) <= decoder.max_buffer
    events += decoder.finish()
    found = [e for e in events if e.kind == "packet"]
    assert [e.data for e in found] == packets
    assert [e.offset for e in found] == offsets
    assert decoder.stats.packets == len(packets)
    assert decoder.stats.garbage_bytes == len(stream) - sum(map(len, packets))
    # packets and garbage tile the stream, in order
    tiles = [e for e in events if e.kind != "rejected"]
    assert [e.offset for e in tiles] == [
        sum(len(t.data) for t in tiles[:i]) for i in range(len(tiles))
    ]
    assert b"".join(t.data for t in tiles) == stream


def _interleavings(
    packets: st.SearchStrategy[bytes], garbage: st.SearchStrategy[bytes]
) -> st.SearchStrategy[list[tuple[bool, bytes]]]:
    piece = st.one_of(packets.map(lambda p: (True, p)), garbage.map(lambda g: (False, g)))
    return st.lists(piece, max_size=40)


_thesis_packets = st.builds(
    lambda m, t: ThesisCodec().encode(m, t), THESIS_MESSAGES, st.integers(0, 2**31).map(float)
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    _interleavings(_thesis_packets, _garbage(_thesis_packets, b"\xff\xfa")),
    st.lists(st.integers(0, 300), max_size=8),
)
def test_every_thesis_packet_comes_back_from_any_interleaving_with_garbage(
    pieces: list[tuple[bool, bytes]], cuts: list[int]
) -> None:
    _check(pieces, cuts, ThesisCodec)


@st.composite
def _native_stream(draw: st.DrawFn) -> list[tuple[bool, bytes]]:
    """Packets of one sender in order (each sequence once), with garbage between them."""
    sender = NativeCodec(KEY, sender=1)
    messages = draw(st.lists(st.tuples(st.booleans(), NATIVE_MESSAGES), max_size=24))
    made = [sender.encode(m, 1000.0 + 0.01 * i) for i, (_, m) in enumerate(messages)]
    samples = st.sampled_from(made) if made else st.just(sender.encode(Heartbeat(), 999.0))
    garbage = _garbage(samples, NativeCodec.sync)
    pieces: list[tuple[bool, bytes]] = []
    for (noise, _), packet in zip(messages, made, strict=True):
        if noise:
            pieces.append((False, draw(garbage)))
        pieces.append((True, packet))
    return pieces


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_native_stream(), st.lists(st.integers(0, 700), max_size=8))
def test_every_native_packet_comes_back_from_any_interleaving_with_garbage(
    pieces: list[tuple[bool, bytes]], cuts: list[int]
) -> None:
    _check(pieces, cuts, lambda: NativeCodec(KEY, sender=2))


def _crc_by_the_bit(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE as its definition says, bit by bit."""
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xFFFF
    return crc


@given(st.binary(max_size=300), st.integers(0, 0xFFFF))
def test_the_thesis_crc_is_ccitt_false(data: bytes, start: int) -> None:
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    assert crc16_ccitt_false(data) == _crc_by_the_bit(data)
    assert crc16_ccitt_false(data, start) == _crc_by_the_bit(data, start)
    assert crc16_ccitt_false(memoryview(data)) == crc16_ccitt_false(bytearray(data))
