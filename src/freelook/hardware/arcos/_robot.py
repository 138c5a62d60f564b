"""An ARCOS robot on asyncio: the client driven over a byte stream, kept connected, behind a HAL.

One session is two coroutines on the stream: a reader that feeds whatever arrives to the client,
and a writer that sleeps until the client's next deadline or until a command is given, then
writes what the client's poll returns. A command given through the HAL wakes the writer, so it
is on the wire within a loop iteration, not at the next keep-alive.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from types import TracebackType

from freelook.config import RobotConfig
from freelook.hardware.arcos._client import (
    ArcosClient,
    ArcosEvent,
    ClientState,
    Closed,
    Connected,
    HandshakeFailed,
    LinkLost,
)
from freelook.hardware.arcos._errors import ArcosError
from freelook.hardware.arcos._hal import PIONEER_3DX_SONAR, SonarLayout, arcos_hardware
from freelook.hardware.arcos._io import ByteStream, SerialStream, TcpStream, parse_arcos_url

__all__ = ["ArcosRobot"]

log = logging.getLogger(__name__)

_ACTIVE = (ClientState.SYNCING, ClientState.CONNECTED, ClientState.CLOSING)
_MAX_SLEEP = 0.1  # the writer wakes at least this often, so nothing waits on a lost wake-up


class ArcosRobot:
    """A Pioneer-class robot (or MobileSim) over ARCOS, as :class:`~freelook.hal`
    devices in :attr:`hardware`.

    ``url`` is ``arcos://HOST[:PORT]`` or ``arcos:///dev/DEVICE[?baud=N]`` (without a baud,
    9600, 38400 and 115200 are tried in turn). ``max_speed`` (m/s) and ``max_turn_rate``
    (rad/s) are sent as the robot's own limits and clamp every command; the drive sends
    each command's twist (v, ω) as it is. ``clock`` stamps every reading (pass the runtime's clock).
    """

    def __init__(
        self,
        url: str,
        *,
        max_speed: float,
        max_turn_rate: float,
        sonar: SonarLayout | None = PIONEER_3DX_SONAR,
        clock: Callable[[], float] = time.monotonic,
        connect_timeout: float = 4.0,
        link_timeout: float = 1.0,
        reconnect_delay: float = 0.5,
        command_timeout: float | None = 1.0,
    ) -> None:
        self.address = parse_arcos_url(url)
        self.client = ArcosClient(
            max_speed=max_speed,
            max_turn_rate=max_turn_rate,
            handshake_timeout=connect_timeout,
            link_timeout=link_timeout,
            command_timeout=command_timeout,
        )
        self.hardware = arcos_hardware(
            self.client,
            self,
            sonar=sonar,
            notify=self._notify,
            clock=clock,
        )
        self.connect_timeout = connect_timeout
        self.reconnect_delay = reconnect_delay
        self._clock = clock
        self._status = f"not connected to {self.address}"
        self._problem = ""
        self._wake = asyncio.Event()
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._loop_thread = 0
        self._session: asyncio.Task[None] | None = None
        self._handshake: asyncio.Future[str | None] | None = None
        self._good_baud: int | None = None
        self._running = False  # run() is keeping the link: a lost one will be reconnected

    @classmethod
    def from_config(
        cls,
        url: str,
        config: RobotConfig,
        *,
        clock: Callable[[], float] = time.monotonic,
        connect_timeout: float = 4.0,
    ) -> ArcosRobot:
        """A robot with the limits and sonar ring of a robot description."""
        drive = config.drive
        return cls(
            url,
            max_speed=drive.max_wheel_speed,
            max_turn_rate=drive.max_turn_rate,
            sonar=None if config.sonar is None else SonarLayout.from_config(config.sonar),
            clock=clock,
            connect_timeout=connect_timeout,
        )

    # -- HardwareConnection ------------------------------------------------------------------

    @property
    def connected(self) -> bool:
        return self.client.connected and self._session is not None and not self._session.done()

    @property
    def status(self) -> str:
        return self._status

    # -- lifecycle ---------------------------------------------------------------------------

    async def connect(self) -> None:
        """Open the link and complete the handshake; :class:`ArcosError` says why not."""
        self._loop = asyncio.get_running_loop()
        self._loop_thread = threading.get_ident()
        self._stopping.clear()
        if not self.connected:
            await self._open_session()

    async def run(self) -> None:
        """Keep the robot connected until :meth:`close`, reconnecting after a lost link.

        Connects first if :meth:`connect` was not called. While disconnected, ``connected``
        is False and ``status`` says why; commands given meanwhile are not queued: after a
        reconnect a STOP goes first, then only the newest command.
        """
        if self._loop is None:
            self._loop = asyncio.get_running_loop()
            self._loop_thread = threading.get_ident()
        self._running = True
        try:
            await self._keep_connected()
        finally:
            self._running = False

    async def _keep_connected(self) -> None:
        while not self._stopping.is_set():
            if self._session is None or self._session.done():
                self._check_ended(self._session)
                try:
                    await self._open_session()
                except ArcosError as err:
                    if self._stopping.is_set():
                        break
                    self._problem = str(err)
                    self._status = (
                        f"disconnected from {self.address} ({err}); "
                        f"retrying every {self.reconnect_delay:.1f} s"
                    )
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(self.reconnect_delay):
                            await self._stopping.wait()
                    continue
            assert self._session is not None
            stopping = asyncio.ensure_future(self._stopping.wait())
            try:
                await asyncio.wait({self._session, stopping}, return_when="FIRST_COMPLETED")
            finally:
                stopping.cancel()

    def stop(self) -> None:
        """STOP now (motors stay enabled); the held motion command is dropped."""
        self.client.stop()
        self._notify()

    def e_stop(self) -> None:
        """E_STOP now: the robot brakes as hard as it can; the held command is dropped."""
        self.client.e_stop()
        self._notify()

    async def close(self) -> None:
        """Send STOP and CLOSE, end the session and stop :meth:`run`."""
        self._stopping.set()
        session = self._session
        if session is not None and not session.done():
            self.client.close()
            self._wake.set()
            try:
                async with asyncio.timeout(1.0):
                    await session
            except TimeoutError:
                session.cancel()
        self._status = f"closed the connection to {self.address}"

    async def __aenter__(self) -> ArcosRobot:
        await self.connect()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    # -- sessions ----------------------------------------------------------------------------

    def _check_ended(self, session: asyncio.Task[None] | None) -> None:
        if session is None or session.cancelled() or session.exception() is None:
            return
        err = session.exception()
        self._problem = f"session failed: {err!r}"
        log.error("ARCOS session with %s failed", self.address, exc_info=err)

    def _notify(self) -> None:
        loop = self._loop
        if loop is None:
            return
        if threading.get_ident() == self._loop_thread:
            self._wake.set()
        else:
            loop.call_soon_threadsafe(self._wake.set)

    async def _open_session(self) -> None:
        address = self.address
        if not self._problem:  # after a problem, the status keeps saying what it was
            self._status = f"connecting to {address}"
        if not address.is_serial:
            stream = await TcpStream.open(address.host, address.port, self.connect_timeout)
            reason = await self._try_handshake(stream, self.connect_timeout)
            if reason is not None:
                raise ArcosError(
                    f"the ARCOS robot at {address} accepted the TCP connection but did not "
                    f"complete the SYNC handshake: {reason}"
                )
            return
        bauds = list(address.bauds)
        if self._good_baud in bauds:  # the speed that worked last time first
            bauds.remove(self._good_baud)
            bauds.insert(0, self._good_baud)
        budget = self.connect_timeout / len(bauds)
        serial_stream = SerialStream(address.device, bauds[0])
        for baud in bauds:
            serial_stream.set_baud(baud)
            reason = await self._try_handshake(serial_stream, budget, close_on_failure=False)
            if reason is None:
                self._good_baud = baud
                return
        await serial_stream.aclose()
        tried = ", ".join(str(b) for b in bauds)
        raise ArcosError(
            f"the ARCOS robot on {address.device} did not answer the SYNC handshake within "
            f"{budget:.1f} s at {tried} baud (expected it to echo SYNC0, SYNC1 and SYNC2)"
        )

    async def _try_handshake(
        self, stream: ByteStream, timeout: float, *, close_on_failure: bool = True
    ) -> str | None:
        """Start a session on ``stream``; None once connected, else why it failed."""
        loop = asyncio.get_running_loop()
        self.client.handshake_timeout = timeout
        self.client.start(self._clock())
        self._handshake = loop.create_future()
        session = asyncio.create_task(self._serve(stream, close_stream=close_on_failure))
        reason = await self._handshake
        if reason is None:
            self._session = session
            self._problem = ""
            return None
        await session
        return reason

    def _on_events(self, events: list[ArcosEvent]) -> None:
        for event in events:
            if isinstance(event, Connected):
                who = " ".join(p for p in (event.name, event.robot_type, event.subtype) if p)
                self._status = f"connected to {who or 'an ARCOS robot'} at {self.address}"
                self._resolve_handshake(None)
            elif isinstance(event, HandshakeFailed):
                self._resolve_handshake(event.reason)
            elif isinstance(event, LinkLost):
                self._problem = f"link lost: {event.reason}"
                then = "; reconnecting" if self._running else ""
                self._status = f"disconnected from {self.address} ({self._problem}){then}"
            elif isinstance(event, Closed):
                self._status = f"closed the connection to {self.address}"

    def _resolve_handshake(self, reason: str | None) -> None:
        if self._handshake is not None and not self._handshake.done():
            self._handshake.set_result(reason)

    async def _serve(self, stream: ByteStream, *, close_stream: bool) -> None:
        client = self.client
        reader = asyncio.create_task(self._read(stream))
        connected = False
        try:
            while client.state in _ACTIVE:
                self._on_events(client.receive(b"", self._clock()))
                self._wake.clear()
                data = client.poll(self._clock())
                if data:
                    try:
                        stream.write(data)
                    except ArcosError as err:
                        self._on_events(client.connection_lost(self._clock(), str(err)))
                connected = connected or client.connected
                if client.state not in _ACTIVE:
                    break
                deadline = client.next_deadline()
                wait = _MAX_SLEEP if deadline is None else deadline - self._clock()
                if wait > 0.0:
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(min(wait, _MAX_SLEEP)):
                            await self._wake.wait()
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reader
            self._on_events(client.receive(b"", self._clock()))
            self._resolve_handshake(f"session ended ({client.state.value})")
            if close_stream or connected:
                await stream.aclose()

    async def _read(self, stream: ByteStream) -> None:
        while True:
            data = await stream.read()
            now = self._clock()
            if not data:
                self._on_events(self.client.connection_lost(now, "the robot closed the link"))
                self._wake.set()
                return
            self._on_events(self.client.receive(data, now))
            self._wake.set()
