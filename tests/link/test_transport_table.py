"""A transport URL is parsed and opened by the entry of the ``TRANSPORTS`` table for its
scheme: an unknown scheme is refused naming every known one, a new one plugs in with
``register_transport``, and each built-in one opens the endpoint its side asks for."""

from __future__ import annotations

import asyncio
import socket

import pytest

from freelook.errors import ConfigError
from freelook.link import (
    TRANSPORTS,
    Endpoint,
    LinkRate,
    Side,
    Transport,
    TransportUrl,
    ZenohBus,
    ZenohEndpoint,
    known_transports,
    parse_transport_url,
    register_transport,
    transport_for,
)


def test_an_unknown_transport_names_every_known_one() -> None:
    with pytest.raises(ConfigError) as refused:
        parse_transport_url("tcp://127.0.0.1:1")
    assert str(refused.value) == (
        "tcp://127.0.0.1:1: unknown transport "
        "(use udp://HOST:PORT, serial:///dev/…, zenoh://HOST:PORT/ROBOT or "
        "zenoh+tls://RELAY:PORT/ROBOT)"
    )


def test_a_registered_transport_parses_its_urls() -> None:
    saved = dict(TRANSPORTS)

    def parse(url: str) -> TransportUrl:
        host, _, port = url.removeprefix("radio://").partition(":")
        if not port.isdigit():
            raise ConfigError(f"{url}: expected radio://HOST:PORT")
        return TransportUrl("radio", host, int(port))

    async def open_radio(url: TransportUrl, side: Side) -> Endpoint:
        raise AssertionError("never opened here")

    try:
        register_transport("radio", Transport("radio://HOST:PORT", parse, open_radio))
        assert parse_transport_url("radio://base:9") == TransportUrl("radio", "base", 9)
        with pytest.raises(ConfigError, match="expected radio://HOST:PORT"):
            parse_transport_url("radio://base")
        with pytest.raises(
            ConfigError, match=r"zenoh\+tls://RELAY:PORT/ROBOT or radio://HOST:PORT\)"
        ):
            parse_transport_url("tcp://127.0.0.1:1")
        with pytest.raises(ValueError, match="already serves 'udp'"):
            register_transport("udp", Transport("udp://X", parse, open_radio))
    finally:
        TRANSPORTS.clear()
        TRANSPORTS.update(saved)
    assert known_transports() == (
        "udp://HOST:PORT, serial:///dev/…, zenoh://HOST:PORT/ROBOT or zenoh+tls://RELAY:PORT/ROBOT"
    )


def test_udp_opens_the_side_asked_for() -> None:
    """A robot's end listens (its kernel dropping what cannot be a packet, its link rate kept),
    a station's end connects to it; the table's entry opens both."""

    async def scenario() -> None:
        udp = transport_for("udp")
        robot = await udp.open(
            parse_transport_url("udp://127.0.0.1:0"),
            Side("robot", kernel_filter=(b"\xfe\x4c", 8), link_rate=64_000.0),
        )
        assert robot.local_address is not None
        host, port = robot.local_address
        station = await udp.open(TransportUrl("udp", host, port), Side("station"))
        try:
            assert robot.link_rate == LinkRate(64_000.0, stream=False)
            assert station.link_rate is None
            station.send(b"not a packet at all")  # dropped in the kernel, never read
            station.send(b"\xfe\x4c" + bytes(10))
            received = await robot.recv_from(timeout=5.0)
            assert received is not None
            assert received[0] == b"\xfe\x4c" + bytes(10)
            assert await robot.recv_from(timeout=0.2) is None
        finally:
            station.close()
            robot.close()

    asyncio.run(scenario())


def test_serial_opens_a_port_at_its_baud() -> None:
    async def scenario() -> None:
        url = TransportUrl("serial", device="loop://", baud=115_200)  # pyserial's loopback
        assert url.transport.framing == "stream"
        endpoint = await url.transport.open(url, Side("robot"))
        try:
            assert endpoint.link_rate == LinkRate(115_200, stream=True)
            assert endpoint.local_address is None
            endpoint.send(b"radio")
            heard = b""
            while len(heard) < 5:  # a byte stream: chunks as they come
                received = await endpoint.recv_from(timeout=5.0)
                assert received is not None
                heard += received[0]
            assert heard == b"radio"
        finally:
            endpoint.close()

    asyncio.run(scenario())


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_a_zenoh_end_closes_the_bus_it_opened_and_not_a_shared_one() -> None:
    async def scenario() -> None:
        url = parse_transport_url(f"zenoh://127.0.0.1:{_free_port()}/rover")
        own = await url.transport.open(url, Side("robot", model="pioneer3dx"))
        assert isinstance(own, ZenohEndpoint)
        assert own.owns_bus
        assert own.link_rate is None
        assert own.local_address is None
        own.close()
        assert own.bus._closed
        shared = ZenohBus.peer(listen=[url.zenoh_endpoint])
        try:
            station = await url.transport.open(url, Side("station", bus=shared))
            assert isinstance(station, ZenohEndpoint)
            assert station.bus is shared
            assert not station.owns_bus
            # told the rate it carries (an LTE uplink to a relay), an end says so: the robot's
            # video fits in what its telemetry leaves of it
            told = await url.transport.open(url, Side("robot", bus=shared, link_rate=250e3))
            assert told.link_rate == LinkRate(250e3, stream=False)
            told.close()
            station.close()
            assert not shared._closed
        finally:
            shared.close()

    asyncio.run(scenario())
