"""``freelook link decode``: real units, status per packet, bad bytes shown, exit codes."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from freelook.cli import app
from freelook.link import (
    NativeCodec,
    SetTransmission,
    Telemetry,
    ThesisCodec,
    VelocityCommand,
    derive_key,
)
from keys_for_tests import KEY_A, KEY_B


def test_decodes_a_capture_with_garbage_and_a_corrupt_packet(tmp_path: Path) -> None:
    codec = ThesisCodec()
    good = codec.encode(VelocityCommand(0.25, 0.17453292519943295), 1.0)
    bad = bytearray(codec.encode(SetTransmission(True), 2.0))
    bad[5] ^= 1
    telemetry = Telemetry(
        0, (0, 0, 0), (1.5, 2.0, 0.0), 0.1, 0.0, 0, 0, 0, 0, laser=(2.0,) * 181, sonar=(1.0,) * 16
    )
    capture = tmp_path / "capture.bin"
    capture.write_bytes(b"\x01\x02\x03" + good + bytes(bad) + codec.encode(telemetry, 3.0))
    result = CliRunner().invoke(app, ["link", "decode", "--file", str(capture)])
    assert result.exit_code == 0, result.output
    out = result.output
    assert "undecodable: 01 02 03" in out
    assert "VelocityCommand(v=0.250 m/s (250 mm/s), omega=0.1745 rad/s (10.0 °/s))" in out
    assert "REJECTED: CRC" in out
    assert "PositionReport(x=1.5" in out
    assert "2 packets, 1 CRC failures" in out


def test_hex_input_and_native_profile() -> None:
    key = KEY_A
    packet = NativeCodec(derive_key(key), sender=4).encode(VelocityCommand(0.5, 0.0), 7.0)
    runner = CliRunner()
    result = runner.invoke(
        app, ["link", "decode", "--wire", "native", "--key", key, packet.hex(" ")]
    )
    assert result.exit_code == 0, result.output
    assert "station=4" in result.output
    assert "tag ok" in result.output
    wrong = runner.invoke(app, ["link", "decode", "--wire", "native", "--key", KEY_B, packet.hex()])
    assert wrong.exit_code == 0
    assert "REJECTED" in wrong.output


def test_unusable_arguments_exit_2(tmp_path: Path) -> None:
    runner = CliRunner()
    assert runner.invoke(app, ["link", "decode", "zz"]).exit_code == 2
    assert runner.invoke(app, ["link", "decode"]).exit_code == 2
    missing = runner.invoke(app, ["link", "decode", "--file", str(tmp_path / "none.bin")])
    assert missing.exit_code == 2
    assert runner.invoke(app, ["link", "decode", "--wire", "morse", "00"]).exit_code == 2
