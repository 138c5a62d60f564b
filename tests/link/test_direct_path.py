"""The direct-path decision (sans-I/O, on an injected clock) and the STUN messages it is fed
by: a punch that probes the peer's candidates with the link's own packets, goes direct once
the round trip works both ways, gives up, falls back and tries again on its timers."""

from __future__ import annotations

import os

import pytest

from freelook.link import (
    DirectPath,
    DirectTiming,
    binding_request,
    binding_response,
    parse_binding_response,
    parse_stun_request,
)

PEER = ("198.51.100.7", 40001)
OTHER = ("198.51.100.7", 40517)  # the peer's NAT moved it to another port
TIMING = DirectTiming(
    probe_spacing=0.1, opener_for=0.3, punch_for=5.0, silence=1.0, retry=10.0, again=2.0
)


def _punching(now: float = 0.0) -> DirectPath:
    path = DirectPath(TIMING)
    path.peer_candidates((PEER,), now)
    return path


def test_no_candidates_no_punch_and_the_relay_carries_the_link() -> None:
    path = DirectPath(TIMING)
    assert path.path(0.0) == "relay"
    assert path.probes(0.0) == []
    path.verified(PEER, 0.1)  # a straggler nobody asked for
    assert path.chosen is None
    assert path.path(0.2) == "relay"


def test_a_punch_probes_each_candidate_at_its_spacing_openers_first() -> None:
    path = _punching()
    assert path.state == "punching"
    assert path.probes(0.0) == [(PEER, True)]  # a small TTL: opens this end's NAT only
    assert path.probes(0.05) == []  # one a candidate every 0.1 s
    assert path.probes(0.1) == [(PEER, True)]
    assert path.probes(0.35) == [(PEER, False)]  # then probes that reach the peer
    assert path.path(0.35) == "relay"  # no round trip yet


def test_direct_only_when_the_round_trip_works_both_ways() -> None:
    path = _punching()
    path.verified(OTHER, 0.5)  # the peer's packet reached us (from the port its NAT chose)
    assert path.path(0.5) == "relay"  # but does it hear us?
    assert path.hears(0.5)
    assert (OTHER, False) in path.probes(0.6)  # where it came from is probed too
    path.peer_hears(True, 0.7)
    assert path.path(0.7) == "direct"
    assert path.chosen == OTHER
    assert path.probes(0.8) == []  # direct: the packets themselves go there


def test_the_peer_hearing_us_alone_is_not_enough() -> None:
    path = _punching()
    path.peer_hears(True, 0.5)
    assert path.path(0.5) == "relay"


def test_a_punch_without_a_round_trip_gives_up_and_tries_again_after_retry() -> None:
    path = _punching()
    assert path.path(5.01) == "relay"
    assert path.state == "waiting"
    path.verified(PEER, 5.5)  # late: ignored while waiting
    path.peer_hears(True, 5.5)
    assert path.path(5.6) == "relay"
    assert path.probes(6.0) == []
    assert path.probes(15.02) == [(PEER, True)]  # the next punch, openers again
    assert path.punches == 2


def _direct() -> DirectPath:
    path = _punching()
    path.verified(PEER, 0.5)
    path.peer_hears(True, 0.5)
    assert path.path(0.5) == "direct"
    return path


def test_direct_packets_stopping_fall_back_to_the_relay_at_once() -> None:
    path = _direct()
    for t in (0.9, 1.3, 1.7):  # both ends keep hearing each other
        path.verified(PEER, t)
        path.peer_hears(True, t)
    assert path.path(2.6) == "direct"
    assert path.path(2.71) == "relay"  # 1 s of nothing direct
    assert path.fallbacks == 1
    assert path.probes(3.0) == []
    assert path.probes(4.72) == [(PEER, True)]  # a path that worked: punched again soon
    assert path.punches == 2


def test_the_peer_no_longer_hearing_us_falls_back() -> None:
    path = _direct()
    for t in (0.9, 1.3, 1.6):
        path.verified(PEER, t)  # we hear it; it stopped saying it hears us after 0.5 s
    assert path.path(1.6) == "relay"
    assert path.fallbacks == 1


def test_stun_binding_request_and_response_round_trip() -> None:
    transaction = os.urandom(12)
    request = binding_request(transaction)
    assert len(request) == 20
    assert parse_stun_request(request) == transaction
    for source in (("203.0.113.9", 54321), ("2001:db8::5", 7447)):
        response = binding_response(transaction, source)
        assert parse_binding_response(response, transaction) == source
        assert parse_binding_response(response, os.urandom(12)) is None  # another's
        assert parse_binding_response(response[:-1], transaction) is None
    assert parse_stun_request(b"\x00\x01" + bytes(10)) is None
    assert parse_stun_request(binding_response(transaction, ("203.0.113.9", 1))) is None


def test_stun_response_known_bytes() -> None:
    """RFC 5769 §2.2's sample IPv4 response: XOR-MAPPED-ADDRESS 192.0.2.1:32853."""
    transaction = bytes.fromhex("b7e7a701bc34d686fa87dfae")
    response = binding_response(transaction, ("192.0.2.1", 32853))
    assert response[20:] == bytes.fromhex("0020 0008 0001 a147 e112a643".replace(" ", ""))
    with pytest.raises(ValueError, match="12 bytes"):
        binding_request(b"short")


def test_a_relay_url_asks_for_the_direct_path_with_direct() -> None:
    from freelook.errors import ConfigError
    from freelook.link import parse_transport_url

    assert parse_transport_url("zenoh+tls://relay.example:7447/r1?direct").direct
    assert parse_transport_url("zenoh+tls://a.example:7447,b.example:7447/r1?direct").direct
    assert not parse_transport_url("zenoh+tls://relay.example:7447/r1").direct
    for bad in ("?direct=1", "?direct&x", "?Direct"):
        with pytest.raises(ConfigError, match="expected zenoh\\+tls://RELAY:PORT/ROBOT"):
            parse_transport_url(f"zenoh+tls://relay.example:7447/r1{bad}")
