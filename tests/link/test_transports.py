"""Real transports: UDP on loopback with forged and replayed packets, serial over a pty pair."""

from __future__ import annotations

import asyncio
import os
import socket
import tty

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.errors import ConfigError, ProtocolError
from freelook.link import (
    EStop,
    LinkStatistics,
    NativeCodec,
    SerialEndpoint,
    StreamDecoder,
    ThesisCodec,
    UdpEndpoint,
    VelocityCommand,
    derive_key,
    parse_transport_url,
)
from freelook.link._errors import ReplayError
from waiting import wait_until_async

KEY = derive_key("udp test key")


def test_forged_and_replayed_commands_over_udp_are_never_accepted() -> None:
    async def scenario() -> tuple[list[object], LinkStatistics]:
        robot = await UdpEndpoint.open(("127.0.0.1", 0))
        operator = await UdpEndpoint.open(("127.0.0.1", 0), remote=robot.local_address)
        codec_op = NativeCodec(KEY, sender=1)
        codec_robot = NativeCodec(KEY, sender=100)
        attacker = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        forger = NativeCodec(derive_key("guessed key"), sender=1)
        stats = LinkStatistics()
        accepted: list[object] = []
        captured = []
        loop = asyncio.get_running_loop()
        try:
            for i in range(20):
                packet = codec_op.encode(VelocityCommand(0.1, 0.0), loop.time())
                captured.append(packet)
                operator.send(packet)
                attacker.sendto(
                    forger.encode(VelocityCommand(1.5, 0.0), loop.time()), robot.local_address
                )
                if i >= 1:  # replay an earlier genuine packet
                    attacker.sendto(captured[i - 1], robot.local_address)
                await asyncio.sleep(0.002)  # paced, so the socket buffer holds them all
            attacker.sendto(b"\x00garbage\xff", robot.local_address)
            sent = 20 + 20 + 19 + 1  # genuine, forged, replayed, garbage

            def handle(data: bytes) -> None:
                try:
                    decoded = codec_robot.decode(data)
                except ReplayError:
                    stats.on_rejected("replay", loop.time())
                    return
                except ProtocolError:
                    stats.on_rejected("auth", loop.time())
                    return
                stats.on_received(decoded.stream, decoded.sequence, decoded.stamp, loop.time())
                accepted.append(decoded.message)

            handled = 0

            async def all_handled() -> bool:
                nonlocal handled
                data = await robot.recv(timeout=0.2)
                if data is not None:
                    handle(data)
                    handled += 1
                return handled == sent

            await wait_until_async(
                all_handled, 10.0, f"all {sent} datagrams at the robot", show=lambda: handled
            )
            extra = await robot.recv(timeout=0.2)  # and nothing more than was sent
            if extra is not None:
                handle(extra)
        finally:
            attacker.close()
            robot.close()
            operator.close()
        return accepted, stats

    accepted, stats = asyncio.run(scenario())
    assert accepted == [VelocityCommand(pytest.approx(0.1), 0.0)] * 20  # type: ignore[list-item]
    report = stats.report(0.0)
    assert report.auth_failures == 20 + 19 + 1  # forged, replayed, garbage
    assert report.packets_received == 20


def test_serial_over_a_pty_carries_both_profiles_and_resynchronises() -> None:
    master, slave = os.openpty()
    tty.setraw(master)
    slave_name = os.ttyname(slave)

    async def scenario() -> list[object]:
        port = SerialEndpoint(slave_name, baud=921600)
        thesis = ThesisCodec()
        native_tx, native_rx = NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)
        thesis_decoder = StreamDecoder(thesis)
        native_decoder = StreamDecoder(native_rx)
        received: list[object] = []
        try:
            # operator → robot: thesis packets with garbage between them
            os.write(
                master,
                b"\x13\x37"
                + thesis.encode(VelocityCommand(0.2, 0.0), 1.0)
                + b"\xff\xfa\x01garbage"
                + thesis.encode(VelocityCommand(-0.1, 0.0), 2.0),
            )
            # robot → operator over the same wire, native profile
            port.send(
                native_tx.encode(EStop(True), 3.0)
                + b"\x00\x01\x02"
                + native_tx.encode(VelocityCommand(0.3, 0.0), 4.0)
            )

            async def two_received() -> bool:
                data = await port.recv(timeout=0.2)
                if data:
                    decoded = (e.decoded for e in thesis_decoder.feed(data))
                    received.extend(d.message for d in decoded if d is not None)
                return len(received) >= 2

            await wait_until_async(
                two_received, 3, "both thesis commands through the pty", show=lambda: received
            )
            echoed = bytearray()

            async def all_echoed() -> bool:
                echoed.extend(await asyncio.to_thread(os.read, master, 4096))
                return len(echoed) >= 80

            await wait_until_async(
                all_echoed, 3, "80 bytes from the robot's end", show=lambda: bytes(echoed)
            )
            received += [
                e.decoded.message
                for e in native_decoder.feed(bytes(echoed))
                if e.decoded is not None
            ]
        finally:
            port.close()
        return received

    try:
        received = asyncio.run(scenario())
    finally:
        os.close(master)
        os.close(slave)
    assert received[0] == VelocityCommand(0.2, 0.0)
    assert received[1] == VelocityCommand(-0.1, 0.0)
    assert received[2] == EStop(True)
    assert received[3] == VelocityCommand(pytest.approx(0.3), 0.0)  # type: ignore[arg-type]


def test_transport_urls() -> None:
    assert parse_transport_url("udp://127.0.0.1:7000").port == 7000
    url = parse_transport_url("serial:///dev/ttyUSB0?baud=115200")
    assert (url.device, url.baud) == ("/dev/ttyUSB0", 115200)
    assert parse_transport_url("serial:///dev/ttyACM0").baud == 921600
    with pytest.raises(ConfigError, match="udp://HOST:PORT"):
        parse_transport_url("udp://nohost")
    with pytest.raises(ConfigError, match="unknown transport"):
        parse_transport_url("tcp://127.0.0.1:1")
    with pytest.raises(ConfigError, match="cannot open serial port"):
        asyncio.run(_open_missing())


async def _open_missing() -> None:
    SerialEndpoint("/dev/no-such-radio")


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(
        ["udp://", "serial://", "zenoh://", "udp://[", "zenoh://[::1]:", "serial:///dev/", ""]
    ),
    st.text(max_size=30),
)
def test_any_transport_url_parses_or_is_refused_in_one_line(prefix: str, rest: str) -> None:
    """Fuzzed URLs ended in urllib's ValueError tracebacks (an open bracket, a bad IPv6
    literal); each is now a TransportUrl or a ConfigError of one line naming the URL."""
    url = prefix + rest
    refusal = None
    try:
        parsed = parse_transport_url(url)
    except ConfigError as err:
        refusal = str(err)
    if refusal is not None:
        assert "\n" not in refusal
        return
    assert parsed.scheme in ("udp", "serial", "zenoh")
    assert 50 <= parsed.baud <= 16_000_000


@pytest.mark.parametrize(
    "url",
    [
        "udp://[::1",
        "udp://[nonsense]:5",
        "serial:///dev/ttyS0?baud=²",
        "udp://a b:5",
        "udp://\x00:1",
    ],
)
def test_malformed_urls_are_config_errors(url: str) -> None:
    with pytest.raises(ConfigError):
        parse_transport_url(url)
