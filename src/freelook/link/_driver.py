"""The real-time driver of a :class:`LinkSession`: one asyncio loop over any transport.

It receives (never blocking longer than a short poll, so Ctrl-C stays responsive), feeds the
session, tells the transport to answer a source only after the session verified a packet from
it, hands every event to the program, and sends what the session has due at its spacing. The
robot server and the operator station both run their link through it.

With sessions (a :class:`LinkSession` given a ``role``) it keeps, per station, the source of
that station's newest authenticated packet (:attr:`LinkDriver.peers`), sends handshake
answers back to where the handshake came from, and sends each packet to the station it is
for: telemetry and video reach only the sources that authenticated in the current session.

Given a :class:`LinkShaping`, everything it sends passes a :class:`LinkShaper` first (a link
rehearsed on this machine: delay, jitter, loss) and goes out when the shaper releases it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable

from freelook.link._events import Accepted, LinkEvent, Outgoing, Reply, SessionOpened
from freelook.link._inbox import Inbox
from freelook.link._messages import Message
from freelook.link._session import LinkSession
from freelook.link._shaper import LinkShaper, LinkShaping
from freelook.link._transport import Endpoint

__all__ = ["LinkDriver"]

log = logging.getLogger(__name__)
RECEIVE_POLL = 0.2  # s: the longest a receive waits before the loop looks around again


class LinkDriver:
    """Runs ``session`` over ``endpoint`` on the caller's clock until cancelled."""

    def __init__(
        self,
        session: LinkSession,
        endpoint: Endpoint,
        clock: Callable[[], float],
        on_event: Callable[[LinkEvent], None],
        shaping: LinkShaping | None = None,
    ) -> None:
        self.session = session
        #: what this end sends, held as the rehearsed link would (None: sent at once)
        self.shaper: LinkShaper[Callable[[], None]] | None = (
            LinkShaper(shaping) if shaping is not None and shaping.shapes else None
        )
        self._released = asyncio.Event()
        self.endpoint = endpoint
        self.clock = clock
        self.on_event = on_event
        #: station → the source of its newest authenticated packet (sessions only)
        self.peers: dict[int, object] = {}

    @staticmethod
    def wall_offset(clock: Callable[[], float]) -> float:
        """What to add to ``clock()`` for wall-clock wire stamps (comparable across hosts)."""
        return time.time() - clock()

    def send(self, message: Message) -> int:
        """Send one message now (replies, commands the operator just gave); returns the
        bytes it took on the wire."""
        size = 0
        for out in self.session.send_to(message, self.clock()):
            self._deliver(out)
            size += len(out.data)
        return size

    def _emit(self, send: Callable[[], None]) -> None:
        """Send now, or through the shaper when the link is shaped."""
        if self.shaper is None:
            send()
            return
        self.shaper.push(self.clock(), send)
        self._released.set()  # the release loop looks again

    def _to(self, data: bytes, source: object) -> None:
        self._emit(lambda: self._to_now(data, source))

    def _to_now(self, data: bytes, source: object) -> None:
        # a station without a known source (None) gets nothing; a fixed peer, or a serial
        # line, is the endpoint's one peer whatever the source
        self.endpoint.send_to(data, source)

    def _deliver(self, out: Outgoing) -> None:
        if out.station is None:
            data = out.data
            self._emit(lambda: self.endpoint.send(data))
        else:
            self._to(out.data, self.peers.get(out.station))

    async def run(self) -> None:
        tasks = [asyncio.create_task(self._transmit())]
        if self.shaper is not None:
            tasks.append(asyncio.create_task(self._release(self.shaper)))
        try:
            await self._receive()
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)

    async def _release(self, shaper: LinkShaper[Callable[[], None]]) -> None:
        """Send what the shaper releases, when it releases it."""
        while True:
            for send in shaper.due(self.clock()):
                try:
                    send()
                except OSError as err:  # a datagram the network refused: the link is lossy
                    log.debug("shaped send failed: %s", err)
            due = shaper.next_due()
            self._released.clear()
            wait = RECEIVE_POLL if due is None else max(0.0, due - self.clock())
            # asyncio.timeout, not wait_for: Python 3.11's wait_for returns a wake-up that
            # came with a cancel and drops the cancel (a send just before shutdown)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(wait):
                    await self._released.wait()

    async def _receive(self) -> None:
        endpoint = self.endpoint
        if isinstance(endpoint, Inbox):
            # verified sources' datagrams are handled as they arrive (the endpoint's fast path)
            endpoint.on_verified = self._handle
        try:
            while True:
                item = await endpoint.recv_from(timeout=RECEIVE_POLL)
                if item is not None:
                    self._handle(*item)
        finally:
            if isinstance(endpoint, Inbox):
                endpoint.on_verified = None

    def _handle(self, data: bytes, source: object) -> None:
        """Feed one datagram to the session and act on what it yields."""
        for event in self.session.receive(data, self.clock(), source):
            if isinstance(event, (Accepted, SessionOpened)):
                self.endpoint.learn_peer(source)
                if self.session.role is not None:
                    self.peers[event.station] = source
                if isinstance(event, SessionOpened) and len(self.peers) > 1:
                    open_now = self.session.sessions
                    for gone in [s for s in self.peers if s not in open_now]:
                        del self.peers[gone]  # as many addresses as sessions, no more
            elif isinstance(event, Reply):
                for packet in event.packets:
                    self._to(packet, source)
            try:
                self.on_event(event)
            except Exception:  # one bad message must not end the link
                log.exception("handling %s failed", type(event).__name__)

    async def _transmit(self) -> None:
        while True:
            now = self.clock()
            for out in self.session.poll_to(now):
                self._deliver(out)
            await asyncio.sleep(max(0.0, self.session.next_due(self.clock()) - self.clock()))
