"""``freelook link decode --file``: a capture read packet by packet from its start, whatever
its size; the thesis profile's packets back to back and between garbage, and a real capture of
the native profile's sessions (handshakes included) read with the station key."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.link import (
    Accepted,
    Heartbeat,
    LinkSession,
    NativeCodec,
    PositionReport,
    Reply,
    SessionOpened,
    ThesisCodec,
    VelocityCommand,
    derive_key,
)
from keys_for_tests import KEY_A, KEY_B

SUMMARY = re.compile(
    r"^(\d+) packets, (\d+) CRC failures, (\d+) authentication failures, "
    r"(\d+) bytes of garbage$",
    re.MULTILINE,
)


def _position(i: int) -> PositionReport:
    return PositionReport(
        0.01 * i, -0.02 * i, math.radians(i % 180), 0.1, 0.0, (1.0 + i / 1000,) * 35, (2.0,) * 8
    )


def _decode(tmp_path: Path, data: bytes, *args: str) -> tuple[str, tuple[int, ...]]:
    capture = tmp_path / "capture.bin"
    capture.write_bytes(data)
    result = CliRunner().invoke(app, ["link", "decode", "--file", str(capture), *args])
    assert result.exit_code == 0, result.output
    found = SUMMARY.search(result.output)
    assert found is not None, result.output
    return result.output, tuple(int(g) for g in found.groups())


@pytest.mark.parametrize("count", [1, 2, 3, 4, 5, 10, 323, 5000])
def test_thesis_position_reports_back_to_back_all_decode(tmp_path: Path, count: int) -> None:
    codec = ThesisCodec()
    packets = [codec.encode(_position(i), 1.0 + 0.031 * i) for i in range(count)]
    assert {len(p) for p in packets} == {107}
    out, (decoded, crc, auth, garbage) = _decode(tmp_path, b"".join(packets))
    assert (decoded, crc, auth, garbage) == (count, 0, 0, 0)
    assert out.count("PositionReport(") == count
    # each at its own offset, in order
    offsets = [int(m) for m in re.findall(r"^@(\d+) +107 B", out, re.MULTILINE)]
    assert offsets == [107 * i for i in range(count)]


@pytest.mark.parametrize("count", [3, 4, 5, 10, 400])
def test_garbage_at_the_start_between_and_at_the_end_is_counted(tmp_path: Path, count: int) -> None:
    codec = ThesisCodec()
    stream = bytearray(b"\x00\x17garbage")  # at the start
    garbage = len(stream)
    for i in range(count):
        stream += codec.encode(_position(i), 1.0 + 0.031 * i)
        if i % 3 == 0:
            # a byte that starts a header (a length, the sync pair) before the next packet
            piece = b"\x6b\xff\xfa" if i % 2 else b"\xff"
        elif i % 3 == 1:
            piece = bytes(range(i % 7 + 1))
        else:
            piece = b""
        if i < count - 1:
            stream += piece
            garbage += len(piece)
    stream += b"\x6b\xff\xfa\xa1\x00tail"  # at the end: a header whose packet never comes
    garbage += 9
    out, (decoded, _, auth, counted) = _decode(tmp_path, bytes(stream))
    assert decoded == count
    assert out.count("PositionReport(") == count
    assert auth == 0
    assert counted == garbage
    assert "undecodable: 00 17 67 61" in out  # the start, shown
    assert "a packet of 107 bytes cut off after 9 at the end of the stream" in out


def test_a_corrupt_packet_costs_only_itself(tmp_path: Path) -> None:
    codec = ThesisCodec()
    packets = [codec.encode(_position(i), 1.0 + i) for i in range(6)]
    bad = bytearray(packets[2])
    bad[40] ^= 0x10
    stream = b"".join([*packets[:2], bytes(bad), *packets[3:]])
    out, (decoded, crc, _, garbage) = _decode(tmp_path, stream)
    assert (decoded, crc, garbage) == (5, 1, 107)
    assert "REJECTED: CRC" in out


# -- the native profile: a real capture of a session --------------------------------------

ROBOT = 100


@dataclass
class Radio:
    """One serial radio channel both ends share: everything sent is captured, in order, and
    delivered to the other end as a byte stream."""

    operator: LinkSession
    robot: LinkSession
    capture: list[tuple[str, bytes]] = field(default_factory=list)
    accepted: dict[str, list[object]] = field(default_factory=lambda: {"up": [], "down": []})
    opened: int = 0

    def send(self, direction: str, packets: list[bytes] | tuple[bytes, ...], now: float) -> None:
        to = self.robot if direction == "up" else self.operator
        back = "down" if direction == "up" else "up"
        for packet in packets:
            self.capture.append((direction, packet))
            for event in to.receive(packet, now):
                if isinstance(event, Reply):
                    self.send(back, event.packets, now + 0.001)
                elif isinstance(event, Accepted):
                    self.accepted[direction].append(event.message)
                elif isinstance(event, SessionOpened):
                    self.opened += 1

    def run(self, start: float, seconds: float, step: float = 0.01) -> float:
        now = start
        for k in range(round(seconds / step)):
            now = start + k * step
            if k % 4 == 0:
                self.send("up", self.operator.send(VelocityCommand(0.01 * (k % 50), 0.0), now), now)
            self.send("up", self.operator.poll(now), now)
            self.send("down", [o.data for o in self.robot.poll_to(now)], now)
        return now + step

    def bytes_of(self, keep: Callable[[str], bool] = lambda _: True) -> bytes:
        return b"".join(p for d, p in self.capture if keep(d))


def _robot(nonce: bytes) -> LinkSession:
    return LinkSession(
        NativeCodec(derive_key(KEY_A), sender=ROBOT),
        framing="stream",
        spacing=0.05,
        periodic=lambda now: [Heartbeat()],
        obey_transmission_control=True,
        role="robot",
        nonce=nonce,
    )


def _radio(station: int) -> Radio:
    operator = LinkSession(
        NativeCodec(derive_key(KEY_A), sender=station),
        framing="stream",
        spacing=0.047,
        periodic=lambda now: [Heartbeat()],
        role="operator",
        nonce=b"the station's nonces",
    )
    return Radio(operator, _robot(b"first start"))


@pytest.fixture(scope="module")
def session_capture() -> Radio:
    """Two sessions on one radio: the robot restarts between them (new nonces), and the
    station opens a session with it again."""
    radio = _radio(station=40_000)  # an id far into the search, for a capture that lacks it
    now = radio.run(1000.0, 1.5)
    radio.robot = _robot(b"second start")  # the robot restarted: its sessions are gone
    radio.run(now + 2.0, 1.5)  # the station reopens after a silence
    assert radio.opened == 4  # each session opened at both ends
    assert len(radio.accepted["up"]) > 20
    assert len(radio.accepted["down"]) > 20
    return radio


def test_a_native_capture_with_the_key_decodes_its_sessions(
    tmp_path: Path, session_capture: Radio
) -> None:
    radio = session_capture
    sent = len(radio.capture)
    data = b"\x00\x01noise" + radio.bytes_of()[:-1] + b"\xfe"  # the last byte damaged
    out, (decoded, crc, auth, garbage) = _decode(tmp_path, data, "--wire", "native", "--key", KEY_A)
    assert "this end has no sessions" not in out
    # every packet but the damaged last one decodes, the handshakes' and the sessions' alike
    assert (decoded, crc, auth) == (sent - 1, 0, 1)
    assert garbage == 7 + len(radio.capture[-1][1])
    assert out.count("SessionOpen(") == 2
    assert out.count("SessionChallenge(") == 2
    assert out.count("SessionConfirm(") == 2
    assert "session tag ok  VelocityCommand(v=" in out
    assert "session tag ok  Heartbeat()" in out
    assert "station=40000 stream=" in out
    assert f"station={ROBOT} stream=" in out
    assert "2 handshakes in the capture, 2 session keys derived from them" in out


def test_a_capture_of_the_robots_side_alone_still_finds_the_station(
    tmp_path: Path, session_capture: Radio
) -> None:
    """The opens are not in it, so no packet names the station: its id is searched for."""
    radio = session_capture
    data = radio.bytes_of(lambda d: d == "down")
    sent = sum(1 for d, _ in radio.capture if d == "down")
    out, (decoded, _, auth, garbage) = _decode(tmp_path, data, "--wire", "native", "--key", KEY_A)
    assert (decoded, auth, garbage) == (sent, 0, 0)
    assert "2 handshakes in the capture, 2 session keys derived from them" in out


def test_a_capture_begun_mid_session_says_why_its_packets_do_not_decode(
    tmp_path: Path, session_capture: Radio
) -> None:
    radio = session_capture
    first_session = radio.capture[: len(radio.capture) // 4]
    handshake = {22, 23, 24}  # SessionOpen, SessionChallenge, SessionConfirm (their type byte)
    assert {p[4] for _, p in first_session[:10]} & handshake
    assert not {p[4] for _, p in first_session[10:]} & handshake  # none after the start
    data = b"".join(p for _, p in first_session[10:])
    out, (decoded, _, auth, _) = _decode(tmp_path, data, "--wire", "native", "--key", KEY_A)
    assert decoded == 0
    assert auth == len(first_session) - 10
    assert "no handshake in the capture gives the key of" in out


def test_a_native_capture_with_another_key_or_none_decodes_nothing(
    tmp_path: Path, session_capture: Radio
) -> None:
    data = session_capture.bytes_of()
    sent = len(session_capture.capture)
    out, (decoded, _, auth, _) = _decode(tmp_path, data, "--wire", "native", "--key", KEY_B)
    assert (decoded, auth) == (0, sent)
    out, (decoded, _, auth, _) = _decode(tmp_path, data, "--wire", "native")
    assert (decoded, auth) == (0, sent)
    assert "an authenticated packet: give the key it was made with (--key)" in out
