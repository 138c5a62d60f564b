"""The real-time driver of a :class:`LinkSession`: one asyncio loop over any transport.

It receives (never blocking longer than a short poll, so Ctrl-C stays responsive), feeds the
session, tells the transport to answer a source only after the session verified a packet from
it, hands every event to the program, and sends what the session has due at its spacing. The
robot server and the operator station both run their link through it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from freelook.link._messages import Message
from freelook.link._session import Accepted, LinkEvent, LinkSession
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
    ) -> None:
        self.session = session
        self.endpoint = endpoint
        self.clock = clock
        self.on_event = on_event

    @staticmethod
    def wall_offset(clock: Callable[[], float]) -> float:
        """What to add to ``clock()`` for wall-clock wire stamps (comparable across hosts)."""
        return time.time() - clock()

    def send(self, message: Message) -> None:
        """Send one message now (replies, commands the operator just gave)."""
        for packet in self.session.send(message, self.clock()):
            self.endpoint.send(packet)

    async def run(self) -> None:
        transmit = asyncio.create_task(self._transmit())
        try:
            await self._receive()
        finally:
            transmit.cancel()
            await asyncio.gather(transmit, return_exceptions=True)

    async def _receive(self) -> None:
        while True:
            item = await self.endpoint.recv_from(timeout=RECEIVE_POLL)
            if item is None:
                continue
            data, source = item
            for event in self.session.receive(data, self.clock()):
                if isinstance(event, Accepted):
                    self.endpoint.learn_peer(source)
                try:
                    self.on_event(event)
                except Exception:  # one bad message must not end the link
                    log.exception("handling %s failed", type(event).__name__)

    async def _transmit(self) -> None:
        while True:
            now = self.clock()
            for packet in self.session.poll(now):
                self.endpoint.send(packet)
            await asyncio.sleep(max(0.0, self.session.next_due(self.clock()) - self.clock()))
