"""Transports: thin I/O shells that move bytes. Codecs and statistics stay elsewhere.

``UdpEndpoint`` (asyncio datagrams) and ``SerialEndpoint`` (pyserial byte stream, for USB
radio nodes) share one surface, :class:`Endpoint`: ``send(bytes)``, ``await recv_from(timeout)``
(the data and where it came from), ``learn_peer(source)``, ``close()``, and what the end
opening it may need to know: ``local_address`` (a socket's, else None) and ``link_rate`` (how
fast a radio carries bytes, else None). A transport never decides who its peer is: the link
session verifies a packet first, and only then does the driver tell the transport to answer
its source. A Zenoh, JAUS or MAVLink gateway is one more class with the same surface. Which
URL opens which endpoint is the transport table's (``link/_transport_table.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import queue
import socket
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Protocol

import serial

from freelook.errors import ConfigError
from freelook.link._inbox import Inbox
from freelook.link._udp_socket import (
    Address,
    attach_prefix_filter,
    udp_socket,
    udp_socket_beside,
)

__all__ = ["Endpoint", "LinkRate", "SerialEndpoint", "UdpEndpoint"]

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class LinkRate:
    """How fast an endpoint's link carries bytes, where a radio limits it."""

    rate: float  # baud on a byte stream (8N1 framing), bit/s on a datagram link
    stream: bool  # a serial line: one byte stream that every kind of packet shares


class Endpoint(Protocol):
    @property
    def local_address(self) -> Address | None:
        """Where a socket of its own is bound (None: no socket, or not one of its own)."""
        ...

    @property
    def link_rate(self) -> LinkRate | None:
        """How fast its link carries bytes, when a radio limits it (None: not limited)."""
        ...

    def send(self, data: bytes) -> None:
        """Write to the peer (nothing before there is one)."""

    async def recv_from(self, timeout: float | None = None) -> tuple[bytes, object] | None:
        """The next datagram or chunk and its source; None after ``timeout`` seconds."""
        ...

    def send_to(self, data: bytes, source: object) -> None:
        """Write to ``source`` (where :meth:`recv_from` said a packet came from; None or
        anything else: nobody), or to the one peer an endpoint with a fixed peer has."""

    def learn_peer(self, source: object) -> None:
        """Answer ``source`` from now on (called only for verified packets)."""

    def close(self) -> None: ...


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


#: datagrams read at once when the socket wakes the loop: asyncio reads one a turn of the
#: event loop, which a flood of strangers outpaces until the kernel drops the operator's too.
#: Only after a stranger's datagram or a verified one that found others queued before it:
#: a verified one alone is the common case (a command, its answer), and a read that finds
#: nothing more costs a system call each time (1-2 us of a 30 us round trip); a verified
#: burst is read one a turn until its datagrams queue, a flood at the first stranger's
DRAIN = 256
#: sources a UDP endpoint remembers as verified (read first, answered): the robot keeps at most
#: 16 stations' sessions, and a station may move ports (NAT)
MAX_VERIFIED = 256
_MAX_READ = 65536


class _UdpProtocol(asyncio.DatagramProtocol):
    def __init__(self, endpoint: UdpEndpoint, sock: socket.socket) -> None:
        self.endpoint = endpoint
        self.sock = weakref.ref(sock)  # the transport owns and closes it

    def datagram_received(self, data: bytes, addr: Address) -> None:
        deliver = self.endpoint._deliver
        if deliver(data, addr):  # a verified one, none before it: no flood (see DRAIN)
            return
        sock = self.sock()
        if sock is None:
            return
        recvfrom = sock.recvfrom
        for _ in range(DRAIN - 1):  # what else waits, read now rather than a turn each
            try:
                data, addr = recvfrom(_MAX_READ)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # an ICMP error reported on a connected socket
                self.endpoint.errors += 1
                return
            deliver(data, addr)

    def error_received(self, exc: Exception) -> None:
        self.endpoint.errors += 1


class UdpEndpoint(Inbox[Address]):
    """A UDP socket on asyncio. Without a fixed peer it answers the source the link last
    verified (:meth:`learn_peer`), never merely whoever sent a datagram.

    What arrives goes through an :class:`~freelook.link._inbox.Inbox`: verified sources'
    datagrams first, strangers' in a small queue of their own, and the fast path to
    :attr:`on_verified`. With a fixed peer, nobody else is heard at all. A following endpoint
    (``open(..., follow=True)``) starts at its remote and hears the kernel-connected peer
    apart from everyone else, but moves to a new source once the link verified a packet from
    it: a robot behind NAT keeps its session when its public address changes.
    """

    def __init__(self, max_queue: int = 1024, max_strangers: int = 64) -> None:
        super().__init__(max_queue, max_strangers)
        self._transport: asyncio.DatagramTransport | None = None
        #: a following endpoint's socket connected to its peer (the kernel's fast lane)
        self._lane: asyncio.DatagramTransport | None = None
        self._lane_socket: socket.socket | None = None  # its socket (the transport closes it)
        self._lane_peer: Address | None = None
        self.peer: Address | None = None
        self.fixed_peer = False
        #: the newest :data:`MAX_VERIFIED` sources that sent a verified packet, oldest first
        #: (a dict as an ordered set: key holders from ever new ports cannot grow it)
        self.verified: dict[Address, None] = {}
        #: times a following endpoint moved to a new peer address
        self.moves = 0
        self.errors = 0
        self.link_rate: LinkRate | None = None  # a radio behind an IP bridge, when told
        #: the source learned last, while it is still the newest verified and the peer
        self._learned: Address | None = None

    @classmethod
    async def open(
        cls,
        local: Address | None = ("127.0.0.1", 0),
        remote: Address | None = None,
        max_queue: int = 1024,
        follow: bool = False,
    ) -> UdpEndpoint:
        """A socket bound to ``local`` (None: wherever the route to ``remote`` leaves from).
        With ``remote`` the socket is connected to it: the kernel drops every datagram from
        anywhere else before this process sees it, so a flood at this port costs nothing.
        ``follow`` (with ``remote``): a second socket on the same port hears the rest, and
        the peer moves to where the link's verified packets come from."""
        endpoint = cls(max_queue)
        loop = asyncio.get_running_loop()
        shared = follow and remote is not None
        try:
            sock = await udp_socket(loop, local, remote, shared=shared)
            transport, _ = await loop.create_datagram_endpoint(
                lambda: _UdpProtocol(endpoint, sock), sock=sock
            )
            if shared:
                try:
                    beside = udp_socket_beside(sock)
                    endpoint._transport, _ = await loop.create_datagram_endpoint(
                        lambda: _UdpProtocol(endpoint, beside), sock=beside
                    )
                except BaseException:
                    transport.close()
                    raise
        except (OSError, OverflowError) as err:  # a port in use, an address not here
            reason = err.strerror if isinstance(err, OSError) and err.strerror else str(err)
            if remote is not None:
                where = f"open udp://{_host(remote[0])}:{remote[1]}"
            else:
                assert local is not None
                where = f"listen on udp://{_host(local[0])}:{local[1]}"
            raise ConfigError(f"cannot {where}: {reason}") from None
        if shared:
            endpoint._lane, endpoint._lane_socket = transport, sock
            endpoint.peer = endpoint._lane_peer = _address(sock.getpeername())
            endpoint.verified[endpoint.peer] = None
            return endpoint
        endpoint._transport = transport
        if remote is not None:
            endpoint.peer = remote
            endpoint.fixed_peer = True
            endpoint.verified[remote] = None
        return endpoint

    @property
    def local_address(self) -> Address:
        transport = self._lane or self._transport
        assert transport is not None
        host, port = transport.get_extra_info("sockname")[:2]
        return (str(host), int(port))

    def drop_in_kernel_unless(self, prefix: bytes, min_length: int) -> bool:
        """Have the kernel drop every datagram shorter than ``min_length`` or not starting
        with ``prefix`` (a profile's sync and version), so garbage floods cost this process
        nothing (Linux: a classic BPF socket filter). False where the kernel cannot."""
        attached = False
        for transport in (self._transport, self._lane):
            if transport is None:
                continue
            sock = transport.get_extra_info("socket")
            if sock is None or not attach_prefix_filter(sock, prefix, min_length):
                return False
            attached = True
        return attached

    def _deliver(self, data: bytes, addr: Address) -> bool:
        """Hand a datagram on; True: a verified one that found none queued before it."""
        if self.fixed_peer:  # connected: the kernel let through only the peer's datagrams
            assert self.peer is not None
            return self._queue(data, self.peer, True)
        if len(addr) != 2:  # IPv6: (host, port, flow, scope)
            addr = (addr[0], addr[1])
        return self._queue(data, addr, addr in self.verified)

    def send(self, data: bytes, addr: Address | None = None) -> None:
        if self._transport is None:
            return
        if self.fixed_peer:  # connected: only to the peer
            self._transport.sendto(data)
            return
        target = addr or self.peer
        if target is None:
            return
        if self._lane is not None and target == self._lane_peer:
            self._lane.sendto(data)
        else:
            self._transport.sendto(data, target)

    def send_to(self, data: bytes, source: object) -> None:
        if self.fixed_peer:  # connected: only to the peer
            self.send(data)
        elif isinstance(source, tuple):
            self.send(data, (str(source[0]), int(source[1])))

    def learn_peer(self, source: object) -> None:
        """``source`` sent a packet the link verified: answer it, and read it first."""
        if source == self._learned:  # learned last: already the newest and the peer
            return
        if isinstance(source, tuple):
            address = (str(source[0]), int(source[1]))
            self.verified.pop(address, None)
            self.verified[address] = None  # the newest last
            while len(self.verified) > MAX_VERIFIED:
                del self.verified[next(iter(self.verified))]
            if self.fixed_peer or address == self.peer:
                self._learned = address
                return
            if self.peer is not None and self._lane is not None:
                self.moves += 1
                log.info("the peer moved from %s to %s", _where(self.peer), _where(address))
                self._connect_lane(address)
            self.peer = address
            self._learned = address

    def _connect_lane(self, address: Address) -> None:
        """The fast lane's socket connected to ``address`` (the kernel's own reconnect)."""
        assert self._lane_socket is not None
        try:
            self._lane_socket.connect(address)
        except OSError:
            self.errors += 1
            return
        self._lane_peer = address

    def close(self) -> None:
        for transport in (self._transport, self._lane):
            if transport is not None:
                transport.close()
        self._transport = self._lane = self._lane_socket = None
        self._stop_timer()


def _address(name: Any) -> Address:
    return (str(name[0]), int(name[1]))


def _where(address: Address) -> str:
    return f"{_host(address[0])}:{address[1]}"


class SerialEndpoint:
    """A serial port (USB radio node) as a byte stream.

    A reader thread feeds asyncio; a writer thread drains a bounded queue, so a slow radio
    never blocks the event loop. When the radio cannot keep up, the newest writes are dropped
    and counted (``dropped_out``): a late packet is worth less than the next one.
    """

    def __init__(
        self, device: str, baud: int = 921600, read_chunk: int = 4096, max_queue: int = 64
    ) -> None:
        try:
            self._port = serial.serial_for_url(
                device, baudrate=baud, timeout=0.05, write_timeout=1.0
            )
        except (serial.SerialException, ValueError) as err:
            raise ConfigError(f"{device}: cannot open serial port: {err}") from None
        self.baud = baud
        self.local_address: Address | None = None  # a port, not a socket
        self.link_rate = LinkRate(baud, stream=True)
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[bytes] = asyncio.Queue(1024)
        self._out: queue.Queue[bytes | None] = queue.Queue(max_queue)
        self._stop = threading.Event()
        self._chunk = read_chunk
        self.dropped = 0
        self.dropped_out = 0
        self.write_errors = 0
        self._thread = threading.Thread(
            target=self._read_loop, name=f"serial {device}", daemon=True
        )
        self._writer = threading.Thread(
            target=self._write_loop, name=f"serial {device} writer", daemon=True
        )
        self._thread.start()
        self._writer.start()

    def _push(self, data: bytes) -> None:
        if self._queue.full():
            self._queue.get_nowait()
            self.dropped += 1
        self._queue.put_nowait(data)

    def _read_loop(self) -> None:
        while not self._stop.is_set():
            try:
                data = self._port.read(max(1, min(self._chunk, self._port.in_waiting or 1)))
            except (serial.SerialException, OSError, TypeError):
                if self._stop.is_set():
                    return
                continue
            if data:
                with contextlib.suppress(RuntimeError):  # loop closed during shutdown
                    self._loop.call_soon_threadsafe(self._push, data)

    def _write_loop(self) -> None:
        while True:
            data = self._out.get()
            if data is None:
                return
            try:
                self._port.write(data)
            except (serial.SerialException, OSError):
                self.write_errors += 1

    def send(self, data: bytes) -> None:
        """Queue ``data`` for the writer thread; never blocks."""
        try:
            self._out.put_nowait(data)
        except queue.Full:
            self.dropped_out += 1

    async def recv(self, timeout: float | None = None) -> bytes | None:
        if not self._queue.empty():
            return self._queue.get_nowait()
        try:
            async with asyncio.timeout(timeout):
                return await self._queue.get()
        except TimeoutError:
            return None

    async def recv_from(self, timeout: float | None = None) -> tuple[bytes, object] | None:
        data = await self.recv(timeout)
        return None if data is None else (data, self._port.port)

    def send_to(self, data: bytes, source: object) -> None:
        """A serial line's one peer hears everything."""
        self.send(data)

    def learn_peer(self, source: object) -> None:
        """A serial line has one peer, the other end of the cable or radio."""

    def close(self) -> None:
        self._stop.set()
        with contextlib.suppress(queue.Full):
            self._out.put_nowait(None)
        self._writer.join(timeout=1.0)
        self._thread.join(timeout=1.0)
        self._port.close()
