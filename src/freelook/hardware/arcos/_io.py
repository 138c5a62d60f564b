"""Byte streams to an ARCOS robot: TCP (MobileSim, a serial-to-Ethernet bridge) or a serial port.

Both are asyncio-native and thread-free. TCP uses asyncio streams. The serial port is opened and
configured by pyserial, then read and written as a non-blocking file descriptor watched with
``loop.add_reader``/``add_writer``: no thread blocks on a read, and closing is immediate.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import parse_qs, urlparse

import serial

from freelook.errors import ConfigError
from freelook.hardware.arcos._errors import ArcosError

__all__ = [
    "AUTO_BAUDS",
    "DEFAULT_PORT",
    "ArcosAddress",
    "ByteStream",
    "SerialStream",
    "TcpStream",
    "parse_arcos_url",
]

DEFAULT_PORT = 8101  # MobileSim's first robot
AUTO_BAUDS = (9600, 38400, 115200)  # what ARIA tries on a serial port, in this order
_READ_CHUNK = 4096
_MAX_PENDING = 64 * 1024  # bytes read or to write that nobody took: the link is stuck


@dataclass(frozen=True, slots=True)
class ArcosAddress:
    """Where the robot is: a TCP ``host``/``port`` or a serial ``device`` (``bauds`` to try)."""

    url: str
    host: str = ""
    port: int = 0
    device: str = ""
    bauds: tuple[int, ...] = ()

    @property
    def is_serial(self) -> bool:
        return bool(self.device)

    def __str__(self) -> str:
        return self.device if self.device else f"{self.host}:{self.port}"


def parse_arcos_url(url: str) -> ArcosAddress:
    """``arcos://HOST[:PORT]`` (port 8101 by default) or ``arcos:///dev/DEVICE[?baud=N]``."""
    parsed = urlparse(url)
    if parsed.scheme != "arcos":
        raise ConfigError(f"{url}: expected arcos://HOST:PORT or arcos:///dev/DEVICE[?baud=N]")
    try:
        port = parsed.port
    except ValueError:
        raise ConfigError(f"{url}: the port must be a number from 0 to 65535") from None
    if parsed.hostname:
        return ArcosAddress(url, host=parsed.hostname, port=port or DEFAULT_PORT)
    if not parsed.path:
        raise ConfigError(f"{url}: expected arcos://HOST:PORT or arcos:///dev/DEVICE[?baud=N]")
    bauds: tuple[int, ...] = AUTO_BAUDS
    given = parse_qs(parsed.query).get("baud")
    if given:
        try:
            bauds = (int(given[0]),)
        except ValueError:
            raise ConfigError(f"{url}: baud must be an integer, got {given[0]!r}") from None
        if bauds[0] <= 0:
            raise ConfigError(f"{url}: baud must be positive, got {bauds[0]}")
    return ArcosAddress(url, device=parsed.path, bauds=bauds)


class ByteStream(Protocol):
    """What the driver needs from a connection to the robot."""

    async def read(self) -> bytes:
        """The next bytes that arrived; ``b""`` once the stream has ended."""
        ...

    def write(self, data: bytes) -> None:
        """Queue bytes; raises :class:`ArcosError` when the link is stuck."""

    async def aclose(self) -> None: ...


class TcpStream:
    """A TCP connection on asyncio streams (Nagle off, so each command leaves at once)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer

    @classmethod
    async def open(cls, host: str, port: int, timeout: float) -> TcpStream:
        try:
            async with asyncio.timeout(timeout):
                reader, writer = await asyncio.open_connection(host, port)
        except TimeoutError:
            raise ArcosError(
                f"cannot reach the ARCOS robot at {host}:{port}: no TCP connection within "
                f"{timeout:.1f} s (expected a robot or MobileSim listening there)"
            ) from None
        except OSError as err:
            raise ArcosError(
                f"cannot reach the ARCOS robot at {host}:{port}: {err.strerror or err} "
                "(expected a robot or MobileSim listening there)"
            ) from None
        return cls(reader, writer)

    async def read(self) -> bytes:
        try:
            return await self._reader.read(_READ_CHUNK)
        except OSError:
            return b""

    def write(self, data: bytes) -> None:
        if self._writer.is_closing():
            return
        if self._writer.transport.get_write_buffer_size() > _MAX_PENDING:
            raise ArcosError(f"TCP link stuck: over {_MAX_PENDING} bytes not accepted by the peer")
        self._writer.write(data)

    async def aclose(self) -> None:
        self._writer.close()
        with contextlib.suppress(OSError, asyncio.TimeoutError):
            async with asyncio.timeout(0.5):
                await self._writer.wait_closed()


class SerialStream:
    """A serial port in non-blocking mode, read when the event loop says it is readable."""

    def __init__(self, device: str, baud: int) -> None:
        try:
            self._port = serial.Serial(device, baudrate=baud, timeout=0, write_timeout=0)
        except (serial.SerialException, ValueError) as err:
            raise ArcosError(f"cannot open serial port {device} at {baud} baud: {err}") from None
        self.device = device
        self._loop = asyncio.get_running_loop()
        self._fd = self._port.fileno()
        os.set_blocking(self._fd, False)
        self._received = bytearray()
        self._to_write = bytearray()
        self._ready = asyncio.Event()
        self._ended = False
        self.dropped = 0  # bytes read that overflowed the receive buffer
        self._loop.add_reader(self._fd, self._on_readable)

    @property
    def baud(self) -> int:
        return int(self._port.baudrate)

    def set_baud(self, baud: int) -> None:
        """Switch the port's speed and forget what was read at the old one."""
        self._port.baudrate = baud
        self._port.reset_input_buffer()
        self._received.clear()

    def _on_readable(self) -> None:
        try:
            data = os.read(self._fd, _READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:  # EIO: the device is gone (unplugged, the other end closed)
            data = b""
        if not data:
            self._end()
            return
        if len(self._received) + len(data) > _MAX_PENDING:
            self.dropped += len(self._received)
            self._received.clear()
        self._received += data
        self._ready.set()

    def _end(self) -> None:
        if not self._ended:
            self._ended = True
            self._loop.remove_reader(self._fd)
            with contextlib.suppress(Exception):
                self._loop.remove_writer(self._fd)
        self._ready.set()

    async def read(self) -> bytes:
        while not self._received and not self._ended:
            self._ready.clear()
            await self._ready.wait()
        data = bytes(self._received)
        self._received.clear()
        return data

    def write(self, data: bytes) -> None:
        if self._ended:
            return
        if len(self._to_write) + len(data) > _MAX_PENDING:
            raise ArcosError(
                f"serial link {self.device} stuck: over {_MAX_PENDING} bytes not written"
            )
        was_empty = not self._to_write
        self._to_write += data
        if was_empty:
            self._flush()

    def _flush(self) -> None:
        try:
            written = os.write(self._fd, self._to_write)
        except BlockingIOError:
            written = 0
        except OSError:
            self._end()
            return
        del self._to_write[:written]
        if self._to_write:
            self._loop.add_writer(self._fd, self._flush)
        else:
            self._loop.remove_writer(self._fd)

    async def aclose(self) -> None:
        if self._to_write and not self._ended:  # give the last STOP and CLOSE a moment
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.2):
                    while self._to_write and not self._ended:
                        await asyncio.sleep(0.005)
        self._end()
        self._port.close()
