"""STUN binding requests and responses (RFC 5389), the part a hole punch needs (sans-I/O).

An end behind NAT asks a reflector (``freelook relay`` answers on UDP beside its TLS port)
where its datagram came from; the answer, an XOR-MAPPED-ADDRESS, is the end's address as the
internet sees it: its candidate for a direct path. Only IPv4 and IPv6 mapped addresses; no
authentication or fingerprint (the reflector's answer is a hint: the link switches to a
direct path only on packets its session verified).
"""

from __future__ import annotations

import ipaddress
import struct

__all__ = ["binding_request", "binding_response", "parse_binding_response", "parse_request"]

MAGIC = 0x2112A442
_REQUEST, _RESPONSE = 0x0001, 0x0101
_XOR_MAPPED = 0x0020
_HEADER = struct.Struct("!HHI12s")
_MASK4 = MAGIC.to_bytes(4, "big")

Address = tuple[str, int]


def binding_request(transaction: bytes) -> bytes:
    """A binding request with the 12-byte ``transaction`` id."""
    if len(transaction) != 12:
        raise ValueError("a STUN transaction id is 12 bytes")
    return _HEADER.pack(_REQUEST, 0, MAGIC, transaction)


def parse_request(data: bytes) -> bytes | None:
    """The transaction id of the binding request ``data``, or None if it is not one."""
    if len(data) < _HEADER.size:
        return None
    kind, length, magic, transaction = _HEADER.unpack_from(data)
    if kind != _REQUEST or magic != MAGIC or length != len(data) - _HEADER.size:
        return None
    return bytes(transaction)


def binding_response(transaction: bytes, source: Address) -> bytes:
    """The success response telling ``source`` (HOST, PORT) where it came from."""
    address = ipaddress.ip_address(source[0])
    port = source[1] ^ (MAGIC >> 16)
    if address.version == 4:
        body = struct.pack("!BBH", 0, 1, port) + bytes(
            a ^ b for a, b in zip(address.packed, _MASK4, strict=True)
        )
    else:
        mask = _MASK4 + transaction
        body = struct.pack("!BBH", 0, 2, port) + bytes(
            a ^ b for a, b in zip(address.packed, mask, strict=True)
        )
    attribute = struct.pack("!HH", _XOR_MAPPED, len(body)) + body
    return _HEADER.pack(_RESPONSE, len(attribute), MAGIC, transaction) + attribute


def parse_binding_response(data: bytes, transaction: bytes) -> Address | None:
    """The mapped address in the response ``data`` to ``transaction``, or None when it is
    not one (another transaction, malformed, no XOR-MAPPED-ADDRESS)."""
    if len(data) < _HEADER.size:
        return None
    kind, length, magic, got = _HEADER.unpack_from(data)
    if kind != _RESPONSE or magic != MAGIC or got != transaction:
        return None
    if length != len(data) - _HEADER.size:
        return None
    at = _HEADER.size
    while at + 4 <= len(data):
        kind, size = struct.unpack_from("!HH", data, at)
        value = data[at + 4 : at + 4 + size]
        if len(value) != size:
            return None
        if kind == _XOR_MAPPED and size >= 8:
            family, port = value[1], struct.unpack_from("!H", value, 2)[0] ^ (MAGIC >> 16)
            if family == 1 and size == 8:
                raw = bytes(a ^ b for a, b in zip(value[4:8], _MASK4, strict=True))
                return str(ipaddress.IPv4Address(raw)), port
            if family == 2 and size == 20:
                mask = _MASK4 + transaction
                raw = bytes(a ^ b for a, b in zip(value[4:20], mask, strict=True))
                return str(ipaddress.IPv6Address(raw)), port
            return None
        at += 4 + size + (-size % 4)  # attributes are padded to 4 bytes
    return None
