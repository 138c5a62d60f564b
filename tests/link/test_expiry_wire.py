"""Native profile: a command's expiry on the wire (header flag bit 2, the payload's last eight
bytes), and the robot's clock echo."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import (
    ClockEcho,
    FramingError,
    FreeLookCommand,
    Heartbeat,
    MalformedError,
    NativeCodec,
    ValueRangeError,
    VelocityCommand,
    derive_key,
)

KEY = derive_key("expiry test passphrase")
speed = st.floats(-20, 20, width=32)


@settings(max_examples=200)
@given(
    st.builds(FreeLookCommand, speed, speed, speed, speed)
    | st.builds(VelocityCommand, speed, speed),
    st.floats(0, 1e9),
    st.floats(0, 1e9),
)
def test_an_expiry_round_trips_to_the_microsecond(
    message: object, stamp: float, expires: float
) -> None:
    sender, receiver = NativeCodec(KEY, sender=3), NativeCodec(KEY, sender=4)
    packet = sender.encode(message, stamp, expires=expires)  # type: ignore[arg-type]
    decoded = receiver.decode(packet)
    assert decoded.message == message
    assert decoded.expires == pytest.approx(expires, abs=1e-6)


def test_without_expiry_the_packet_is_as_before() -> None:
    """No flag, no extra bytes: a version-1 packet of earlier releases, byte for byte."""
    codec = NativeCodec(KEY, sender=3)
    plain = codec.encode(VelocityCommand(0.5, 0.1), 12.0)
    codec.keying.sequences.clear()
    expiring = codec.encode(VelocityCommand(0.5, 0.1), 12.0, expires=13.0)
    assert plain[3] == 0x01
    assert expiring[3] == 0x05
    assert len(expiring) == len(plain) + 8
    assert NativeCodec(KEY, sender=4).decode(plain).expires is None


def test_only_commands_expire() -> None:
    codec = NativeCodec(KEY, sender=3)
    with pytest.raises(MalformedError, match="cannot expire"):
        codec.encode(Heartbeat(), 1.0, expires=2.0)
    with pytest.raises(ValueRangeError, match="stamp"):
        codec.encode(VelocityCommand(0.0, 0.0), 1.0, expires=float("nan"))


def _forge(packet: bytes, flags: int, payload_cut: int = 0) -> bytes:
    """The packet with other flags (and a payload cut short), CRC-32 recomputed."""
    import zlib

    body = bytearray(packet[:-4])
    body[3] = flags
    if payload_cut:
        length = struct.unpack_from("<H", body, 20)[0] - payload_cut
        struct.pack_into("<H", body, 20, length)
        del body[22 + length : 22 + length + payload_cut]
    return bytes(body) + struct.pack("<I", zlib.crc32(bytes(body)))


def test_an_expiry_flag_where_none_can_be_is_refused() -> None:
    """On a session-stream packet, or on a payload shorter than an expiry: malformed."""
    codec = NativeCodec(None, sender=3, allow_unauthenticated=True)
    beat = codec.encode(Heartbeat(), 1.0)
    with pytest.raises(MalformedError, match="expiry on Heartbeat"):
        codec.decode(_forge(beat, 0x04))
    command = codec.encode(VelocityCommand(0.1, 0.0), 1.0)
    with pytest.raises(MalformedError, match="expiry on VelocityCommand"):
        codec.decode(_forge(command, 0x04, payload_cut=4))
    with pytest.raises(FramingError, match="unknown flags"):
        codec.decode(_forge(command, 0x08))


def test_the_clock_echo_round_trips_and_is_range_checked() -> None:
    sender, receiver = NativeCodec(KEY, sender=3), NativeCodec(KEY, sender=4)
    echo = ClockEcho(1.7e9 + 0.123456, 1.7e9 + 1000.25)
    assert receiver.decode(sender.encode(echo, 5.0)).message == echo
    with pytest.raises(ValueRangeError, match="sent"):
        sender.encode(ClockEcho(-1.0, 0.0), 5.0)
