"""A radio between a station and a robot on loopback: a UDP relay that carries each way at a
fixed rate and loses a seeded share of the datagrams.

Each way is a link of ``rate`` bit/s: a datagram (with its IP and UDP headers) leaves once the
ones before it have, and one that would wait longer than ``queue`` s is dropped, as a radio's
full buffer drops it. Before that, each datagram is lost with probability ``loss`` (a seeded
draw), which the test may change while the relay runs. The relay runs on a thread of its own
with its own event loop, so a test driving a browser synchronously does not hold it up.
"""

from __future__ import annotations

import asyncio
import random
import threading
from dataclasses import dataclass

__all__ = ["ShapedRelay"]

#: bytes of IPv4 and UDP header each datagram costs on the link
HEADERS = 28


@dataclass
class Way:
    """One direction of the link: its rate, its queue and what happened to its datagrams."""

    rate: float  # bit/s
    queue: float  # s a datagram may wait before it is dropped
    free_at: float = 0.0  # when the link has sent what it holds
    passed: int = 0
    lost: int = 0
    overflowed: int = 0
    sent_bytes: int = 0

    def departure(self, now: float, size: int) -> float | None:
        """When a datagram of ``size`` bytes arriving ``now`` has been sent; None: dropped."""
        start = max(now, self.free_at)
        if start - now > self.queue:
            self.overflowed += 1
            return None
        self.free_at = start + 8 * (size + HEADERS) / self.rate
        self.passed += 1
        self.sent_bytes += size
        return self.free_at


class _Protocol(asyncio.DatagramProtocol):
    def __init__(self, relay: ShapedRelay) -> None:
        self.relay = relay

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        self.relay.received(data, addr)


class ShapedRelay:
    """Relays between the robot at ``robot`` and whichever station sends to :attr:`address`."""

    def __init__(
        self,
        robot: tuple[str, int],
        rate: float,
        loss: float,
        seed: int,
        queue: float = 0.25,
    ) -> None:
        self.robot = robot
        self.loss = loss
        self.station: tuple[str, int] | None = None
        self.down = Way(rate, queue)  # robot → station
        self.up = Way(rate, queue)  # station → robot
        self._random = random.Random(seed)
        self._loop = asyncio.new_event_loop()
        self._transport: asyncio.DatagramTransport | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.address: tuple[str, int] = ("127.0.0.1", 0)

    def start(self) -> ShapedRelay:
        self._thread.start()
        opened = asyncio.run_coroutine_threadsafe(
            self._loop.create_datagram_endpoint(
                lambda: _Protocol(self), local_addr=("127.0.0.1", 0)
            ),
            self._loop,
        )
        transport, _ = opened.result(timeout=10)
        self._transport = transport
        self.address = transport.get_extra_info("sockname")[:2]
        return self

    def set_loss(self, loss: float) -> None:
        """From now on, lose ``loss`` of the datagrams each way."""
        self._loop.call_soon_threadsafe(setattr, self, "loss", loss)

    def received(self, data: bytes, addr: tuple[str, int]) -> None:
        if addr == self.robot:
            if self.station is None:
                return
            way, target = self.down, self.station
        else:
            self.station = addr
            way, target = self.up, self.robot
        if self._random.random() < self.loss:
            way.lost += 1
            return
        now = self._loop.time()
        departure = way.departure(now, len(data))
        if departure is None:
            return
        transport = self._transport
        assert transport is not None
        self._loop.call_at(departure, transport.sendto, data, target)

    def close(self) -> None:
        """Close the relay's socket on its loop, then stop the loop (a transport closes its
        socket a loop turn after ``close``: stopping first left it for the garbage collector,
        whose warning failed whichever test came next)."""

        async def shut() -> None:
            if self._transport is not None:
                self._transport.close()
            await asyncio.sleep(0)  # the transport's connection_lost closes the socket

        asyncio.run_coroutine_threadsafe(shut(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)
        self._loop.close()
