"""A transport URL is parsed by the entry of the ``TRANSPORTS`` table for its scheme: an
unknown scheme is refused naming every known one, and a new one plugs in with
``register_transport``."""

from __future__ import annotations

import pytest

from freelook.errors import ConfigError
from freelook.link import (
    TRANSPORTS,
    Transport,
    TransportUrl,
    known_transports,
    parse_transport_url,
    register_transport,
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

    try:
        register_transport("radio", Transport("radio://HOST:PORT", parse))
        assert parse_transport_url("radio://base:9") == TransportUrl("radio", "base", 9)
        with pytest.raises(ConfigError, match="expected radio://HOST:PORT"):
            parse_transport_url("radio://base")
        with pytest.raises(
            ConfigError, match=r"zenoh\+tls://RELAY:PORT/ROBOT or radio://HOST:PORT\)"
        ):
            parse_transport_url("tcp://127.0.0.1:1")
        with pytest.raises(ValueError, match="already serves 'udp'"):
            register_transport("udp", Transport("udp://X", parse))
    finally:
        TRANSPORTS.clear()
        TRANSPORTS.update(saved)
    assert known_transports() == (
        "udp://HOST:PORT, serial:///dev/…, zenoh://HOST:PORT/ROBOT or zenoh+tls://RELAY:PORT/ROBOT"
    )
