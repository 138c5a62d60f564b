"""ARCOS packets: known bytes worked out by hand, and the stream decoder under random input."""

from __future__ import annotations

import pytest
from arcos_emulator import arcos_checksum, frame, sip_payload
from hypothesis import given, settings
from hypothesis import strategies as st

import freelook.hardware.arcos as arcos
from freelook.errors import ProtocolError
from freelook.hardware.arcos import (
    MAX_PAYLOAD,
    Command,
    PacketDecoder,
    checksum,
    encode_command,
    encode_packet,
    parse_sip,
)

DETERMINISTIC = settings(derandomize=True, max_examples=100, deadline=None)


def test_the_package_face_is_locked() -> None:
    assert set(arcos.__all__) == {
        "ANGLE_UNIT",
        "MAX_PAYLOAD",
        "PIONEER_3DX_SONAR",
        "ArcosAddress",
        "ArcosClient",
        "ArcosError",
        "ArcosEvent",
        "ArcosRobot",
        "ArcosStats",
        "ArgType",
        "ClientState",
        "Closed",
        "Command",
        "Connected",
        "HandshakeFailed",
        "LinkLost",
        "PacketDecoder",
        "Sip",
        "SipReceived",
        "SonarLayout",
        "SonarReading",
        "arcos_hardware",
        "checksum",
        "encode_command",
        "encode_packet",
        "open_arcos_server",
        "parse_arcos_url",
        "parse_sip",
    }
    for name in arcos.__all__:
        assert hasattr(arcos, name), name


def test_checksums_worked_out_by_hand() -> None:
    # ENABLE 1 = payload 04 3B 01 00 → words 0x043B + 0x0100 = 0x053B, sent 05 3B
    assert encode_command(Command.ENABLE, 1) == bytes.fromhex("FAFB06043B0100053B")
    # VEL −200 = 0B 1B C8 00 (ARGNINT, |−200| = 0x00C8 little-endian) → 0x0B1B + 0xC800 = 0xD31B
    assert encode_command(Command.VEL, -200) == bytes.fromhex("FAFB060B1BC800D31B")
    # OPEN = payload 01: no whole word, the odd byte XOR'd into 0 → 0x0001
    assert encode_command(Command.OPEN) == bytes.fromhex("FAFB03010001")
    # SYNC0 (and PULSE) = payload 00 → checksum 0
    assert encode_command(0) == bytes.fromhex("FAFB03000000")
    # the sum wraps at 16 bits: 0xFFFF + 0xFFFF = 0x1FFFE → 0xFFFE, then ^ 0x01 = 0xFFFF
    assert checksum(bytes.fromhex("FFFFFFFF01")) == 0xFFFF
    # a string argument: command 15, ARGSTR, length 2, "hi"
    assert encode_command(15, b"hi") == frame(bytes((15, 0x2B, 2)) + b"hi")


@given(st.binary(min_size=1, max_size=MAX_PAYLOAD))
@DETERMINISTIC
def test_checksum_agrees_with_the_longhand_one(payload: bytes) -> None:
    assert checksum(payload) == arcos_checksum(payload)
    assert encode_packet(payload) == frame(payload)


def test_encoding_refuses_what_arcos_cannot_carry() -> None:
    with pytest.raises(ValueError, match=r"integer argument 40000 to command 11: .*±32767"):
        encode_command(Command.VEL, 40000)
    with pytest.raises(ValueError, match="string argument of 247 bytes to command 15: at most 246"):
        encode_command(15, b"x" * 247)
    with pytest.raises(ValueError, match="payload of 250 bytes: must be 1 to 249"):
        encode_packet(b"x" * 250)
    with pytest.raises(ValueError, match="command number 256"):
        encode_command(256)


def _chunks(data: bytes, cuts: list[int]) -> list[bytes]:
    points = sorted({c % (len(data) + 1) for c in cuts})
    return [data[a:b] for a, b in zip([0, *points], [*points, len(data)], strict=True)]


payloads = st.lists(st.binary(min_size=1, max_size=MAX_PAYLOAD), min_size=1, max_size=8)
# garbage that cannot itself hold a header (a header inside it would rightly swallow bytes)
garbage = st.binary(max_size=64).filter(lambda g: b"\xfa\xfb" not in g)


@given(payloads, st.lists(st.integers(min_value=0), max_size=10))
@DETERMINISTIC
def test_encode_then_decode_gives_the_payloads_back(packets: list[bytes], cuts: list[int]) -> None:
    decoder = PacketDecoder()
    stream = b"".join(encode_packet(p) for p in packets)
    out = [p for chunk in _chunks(stream, cuts) for p in decoder.feed(chunk)]
    assert out == packets
    assert (decoder.bad_checksums, decoder.bad_counts, decoder.skipped_bytes) == (0, 0, 0)


@given(payloads, st.lists(garbage, min_size=9, max_size=9), st.lists(st.integers(0), max_size=10))
@DETERMINISTIC
def test_garbage_between_packets_is_skipped_and_never_decoded(
    packets: list[bytes], junk: list[bytes], cuts: list[int]
) -> None:
    gaps = junk[1 : len(packets) + 1]
    stream = junk[0] + b"".join(encode_packet(p) + g for p, g in zip(packets, gaps, strict=True))
    decoder = PacketDecoder()
    out = [p for chunk in _chunks(stream, cuts) for p in decoder.feed(chunk)]
    assert out == packets
    fed = sum(len(encode_packet(p)) for p in out) + decoder.skipped_bytes + decoder.pending
    assert fed == len(stream)


@given(st.lists(st.binary(max_size=600), max_size=6))
@DETERMINISTIC
def test_arbitrary_bytes_never_crash_and_the_buffer_stays_bounded(chunks: list[bytes]) -> None:
    decoder = PacketDecoder()
    total = decoded = 0
    for chunk in chunks:
        total += len(chunk)
        for payload in decoder.feed(chunk):
            assert 1 <= len(payload) <= MAX_PAYLOAD
            decoded += len(payload) + 5
        assert decoder.pending <= 3 + MAX_PAYLOAD + 1
    assert decoded + decoder.skipped_bytes + decoder.pending == total


@given(payloads, st.integers(min_value=0), st.integers(min_value=1, max_value=255))
@DETERMINISTIC
def test_a_corrupted_byte_never_yields_a_packet_that_was_not_sent(
    packets: list[bytes], where: int, flip: int
) -> None:
    stream = bytearray(b"".join(encode_packet(p) for p in packets))
    stream[where % len(stream)] ^= flip
    decoder = PacketDecoder()
    # the filler stands for later traffic: it completes a header whose count was damaged
    out = decoder.feed(bytes(stream)) + decoder.feed(bytes(3 + MAX_PAYLOAD))
    assert all(p in packets for p in out)
    assert len(out) >= len(packets) - 1  # only the damaged packet is lost


def test_a_bad_checksum_or_count_is_counted_and_the_next_packet_still_found() -> None:
    good = encode_command(Command.VEL, 300)
    bad_sum = bytearray(good)
    bad_sum[-1] ^= 0xFF
    bad_count = bytes.fromhex("FAFB01") + b"\x00"  # a count of 1 cannot hold a type byte
    decoder = PacketDecoder()
    assert decoder.feed(bytes(bad_sum) + bad_count + good) == [good[3:-2]]
    assert (decoder.bad_checksums, decoder.bad_counts) == (1, 1)


def test_a_real_packet_behind_a_false_header_is_found() -> None:
    good = encode_command(Command.RVEL, -15)
    decoder = PacketDecoder()
    # a false header claims 9 bytes; the real packet starts inside them
    assert decoder.feed(b"\xfa\xfb\x09\x00" + good + b"\x00" * 4) == [good[3:-2]]
    assert decoder.bad_checksums == 1


def test_a_sip_decodes_field_by_field() -> None:
    payload = sip_payload(
        moving=True,
        x=32000,
        y=15,
        th=-1024,
        left=-120,
        right=250,
        battery=127,
        stall=0x0101 | (0b10 << 9) | (0b100 << 1),
        flags=1,
        sonar=((0, 480), (15, 5000)),
        extra=b"\x00" * 12,  # later firmware appends fields; they are ignored
    )
    sip = parse_sip(payload)
    assert (sip.moving, sip.x, sip.y, sip.th) == (True, 32000, 15, -1024)
    assert (sip.left_velocity, sip.right_velocity, sip.battery) == (-120, 250, 127)
    assert (sip.left_stalled, sip.right_stalled, sip.motors_enabled) == (True, True, True)
    assert (sip.front_bumpers, sip.rear_bumpers) == (0b10, 0b100)
    assert sip.sonar == ((0, 480), (15, 5000))


def test_malformed_sips_are_refused_with_what_was_wrong() -> None:
    with pytest.raises(ProtocolError, match="type 0x20 is not a standard SIP"):
        parse_sip(b"\x20" + bytes(30))
    with pytest.raises(ProtocolError, match="SIP of 10 bytes: the fixed part needs 20"):
        parse_sip(sip_payload()[:10])
    short = sip_payload(sonar=((1, 100), (2, 200)))[:-3]
    with pytest.raises(ProtocolError, match="2 sonar readings has 23 bytes, needs 26"):
        parse_sip(short)
