"""The sockets under a UDP endpoint: opened, bound and connected, filtered in the kernel.

A station that follows its robot (a robot behind NAT whose public address may change) holds
two sockets on one local port, both with ``SO_REUSEPORT``: one connected to the robot's
current address, which the kernel hands that address's datagrams alone, and one unconnected,
which hears everyone else (the robot from a new address among them, to be verified before the
station answers there). Linux prefers the connected socket for its peer's datagrams, so a flood
at the station's port never fills the queue the robot's packets wait in.
"""

from __future__ import annotations

import asyncio
import ctypes
import socket
from typing import Any

__all__ = ["Address", "attach_prefix_filter", "udp_socket", "udp_socket_beside"]

Address = tuple[str, int]

_UDP_HEADER = 8  # a UDP socket's filter sees the datagram from its UDP header on
_SO_ATTACH_FILTER = 26  # Linux


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_uint16),
        ("jt", ctypes.c_uint8),
        ("jf", ctypes.c_uint8),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def attach_prefix_filter(sock: Any, prefix: bytes, min_length: int) -> bool:
    """Attach a BPF program: accept a datagram of at least ``min_length`` payload bytes that
    starts with ``prefix``; drop anything else before it is queued."""
    ld_len, jge, ldb, jeq, ret = 0x80, 0x35, 0x30, 0x15, 0x06
    count = 2 + 2 * len(prefix) + 2  # length check, a load and a test a byte, two returns
    drop = count - 1
    program = [(ld_len, 0, 0, 0), (jge, 0, drop - 2, _UDP_HEADER + min_length)]
    for i, byte in enumerate(prefix):
        at = len(program)
        program.append((ldb, 0, 0, _UDP_HEADER + i))
        program.append((jeq, 0, drop - (at + 2), byte))
    program += [(ret, 0, 0, 0x0004_0000), (ret, 0, 0, 0)]
    filters = (_SockFilter * len(program))(*(_SockFilter(*op) for op in program))
    fprog = _SockFprog(len(program), filters)
    try:
        sock.setsockopt(socket.SOL_SOCKET, _SO_ATTACH_FILTER, bytes(fprog))
    except (OSError, AttributeError):
        return False
    return True


def _share_port(sock: socket.socket) -> None:
    reuse = getattr(socket, "SO_REUSEPORT", None)
    if reuse is None:
        raise OSError("this system has no SO_REUSEPORT: a station cannot follow its robot")
    sock.setsockopt(socket.SOL_SOCKET, reuse, 1)


async def udp_socket(
    loop: asyncio.AbstractEventLoop,
    local: Address | None,
    remote: Address | None,
    shared: bool = False,
) -> socket.socket:
    """A non-blocking UDP socket bound to ``local`` and connected to ``remote`` (either may
    be None), of the family their addresses resolve to; ``shared``: its port open to a second
    socket of this process (:func:`udp_socket_beside`)."""
    where = remote if remote is not None else local
    if where is None:
        raise ValueError("a UDP endpoint needs a local or a remote address")
    for address in (local, remote):
        if address is not None and not 0 <= address[1] <= 0xFFFF:
            raise OverflowError("a port is 0-65535")  # getaddrinfo would wrap it
    infos = await loop.getaddrinfo(where[0], where[1], type=socket.SOCK_DGRAM)
    family = infos[0][0]
    sock = socket.socket(family, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        if shared:
            _share_port(sock)
        if local is not None:
            bound = await loop.getaddrinfo(
                local[0], local[1], family=family, type=socket.SOCK_DGRAM
            )
            sock.bind(bound[0][4])
        if remote is not None:
            sock.connect(infos[0][4])
    except BaseException:
        sock.close()
        raise
    return sock


def udp_socket_beside(connected: socket.socket) -> socket.socket:
    """An unconnected socket on ``connected``'s local address and port (opened ``shared``):
    it hears every source but the one ``connected`` is connected to."""
    sock = socket.socket(connected.family, socket.SOCK_DGRAM)
    try:
        sock.setblocking(False)
        _share_port(sock)
        sock.bind(connected.getsockname())
    except BaseException:
        sock.close()
        raise
    return sock
