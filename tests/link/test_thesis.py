"""Thesis profile: golden bytes written by hand from docs/design.md §4, CRC, saturation."""

from __future__ import annotations

import math

import pytest

from freelook.link import (
    ChecksumError,
    FramingError,
    Heartbeat,
    PositionReport,
    SetTransmission,
    SetTransmissionSpacing,
    Telemetry,
    ThesisCodec,
    UnknownTypeError,
    VelocityCommand,
    WheelSpeedCommand,
    crc16_ccitt_false,
)


def crc_bitwise(data: bytes) -> int:
    """CRC-16/CCITT-FALSE, one bit at a time (independent of the table-driven one)."""
    crc = 0xFFFF
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    return crc


def with_crc(hex_without_crc: str) -> bytes:
    body = bytes.fromhex(hex_without_crc)
    crc = crc_bitwise(body)
    return body + bytes([crc & 0xFF, crc >> 8])


def test_crc_check_value() -> None:
    assert crc16_ccitt_false(b"123456789") == 0x29B1
    assert crc_bitwise(b"123456789") == 0x29B1


CODEC = ThesisCodec()
TICK = 1.0  # 1000 ms → e8 03 00 00


@pytest.mark.parametrize(
    ("message", "golden"),
    [
        # length, sync, type A2 (command), sub-type, payload, time, CRC
        (Heartbeat(), "0b fffa a2 00 e8030000"),
        (SetTransmission(True), "0c fffa a2 01 01 e8030000"),
        (SetTransmission(False), "0c fffa a2 01 00 e8030000"),
        (SetTransmissionSpacing(0.031), "0d fffa a2 02 1f00 e8030000"),
        (WheelSpeedCommand(0.1, -0.2), "0f fffa a2 03 6400 38ff e8030000"),
        (VelocityCommand(0.25, math.radians(10)), "0f fffa a2 04 fa00 0a00 e8030000"),
        (VelocityCommand(-0.5, math.radians(-50)), "0f fffa a2 04 0cfe ceff e8030000"),
    ],
)
def test_command_packets_match_hand_written_bytes(message: object, golden: str) -> None:
    expected = with_crc(golden.replace(" ", ""))
    assert CODEC.encode(message, TICK) == expected  # type: ignore[arg-type]
    decoded = CODEC.decode(expected)
    assert decoded.stamp == TICK
    assert decoded.size == len(expected)
    if isinstance(message, VelocityCommand):
        assert decoded.message.v == pytest.approx(message.v)  # type: ignore[union-attr]
    else:
        assert decoded.message == message


def test_position_packet_is_107_bytes_as_laid_out() -> None:
    laser = tuple(1.0 + 0.1 * i for i in range(35))
    sonar = tuple(0.5 * (i + 1) for i in range(8))
    report = PositionReport(1.234, -2.5, math.radians(-90), 0.3, math.radians(15), laser, sonar)
    fields = "d204" + "3cf6" + "a6ff" + "2c01" + "0f00"  # 1234, −2500, −90, 300, 15
    fields += "".join(f"{round(r * 1000):04x}"[2:] + f"{round(r * 1000):04x}"[:2] for r in laser)
    fields += "".join(f"{round(r * 1000):04x}"[2:] + f"{round(r * 1000):04x}"[:2] for r in sonar)
    expected = with_crc("6b fffa a1 00".replace(" ", "") + fields + "e8030000")
    assert len(expected) == 107
    assert CODEC.encode(report, TICK) == expected
    back = CODEC.decode(expected).message
    assert isinstance(back, PositionReport)
    assert back.x == pytest.approx(1.234)
    assert back.laser == pytest.approx(laser)
    assert back.sonar == pytest.approx(sonar)


def test_values_saturate_instead_of_wrapping() -> None:
    packet = CODEC.encode(VelocityCommand(40.0, math.radians(-1e6)), 0.0)
    assert packet[5:9] == bytes.fromhex("ff7f" + "0080")  # 32767 mm/s, −32768 deg/s
    report = PositionReport(100.0, -100.0, 7.0, 0.0, 0.0, (70.0,) * 35, (-1.0,) * 8)
    decoded = CODEC.decode(CODEC.encode(report, 0.0)).message
    assert isinstance(decoded, PositionReport)
    assert decoded.x == pytest.approx(32.767)
    assert decoded.y == pytest.approx(-32.768)
    assert decoded.theta == pytest.approx(math.radians(round(math.degrees(7.0 - 2 * math.pi))))
    assert decoded.laser[0] == pytest.approx(65.535)
    assert decoded.sonar[0] == 0.0


def test_telemetry_goes_out_as_a_position_packet() -> None:
    telemetry = Telemetry(
        0.0,
        (0, 0, 0),
        (1.0, 2.0, 0.5),
        0.2,
        0.1,
        0,
        0,
        0,
        0,
        laser=tuple(float(i) / 10 for i in range(181)),
        sonar=tuple(float(i) for i in range(16)),
    )
    decoded = CODEC.decode(CODEC.encode(telemetry, 0.0)).message
    assert isinstance(decoded, PositionReport)
    assert decoded.laser[0] == 0.0
    assert decoded.laser[-1] == pytest.approx(18.0)
    assert decoded.sonar == pytest.approx(tuple(float(i) for i in range(8, 16)))


def test_decoder_errors() -> None:
    good = CODEC.encode(VelocityCommand(0.1, 0.0), 0.0)
    with pytest.raises(ChecksumError, match="CRC"):
        CODEC.decode(good[:-1] + bytes([good[-1] ^ 1]))
    with pytest.raises(FramingError, match="sync"):
        CODEC.decode(good[:1] + b"\x00" + good[2:])
    with pytest.raises(FramingError, match="length byte says"):
        CODEC.decode(good + b"\x00")
    with pytest.raises(FramingError, match="shorter"):
        CODEC.decode(good[:5])
    bad_sub = with_crc("0b fffa a2 09 e8030000".replace(" ", ""))
    with pytest.raises(UnknownTypeError, match="sub-type 9"):
        CODEC.decode(bad_sub)
    bad_type = with_crc("0b fffa b7 00 e8030000".replace(" ", ""))
    with pytest.raises(UnknownTypeError, match="0xb7"):
        CODEC.decode(bad_type)
