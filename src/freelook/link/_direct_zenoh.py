"""A relay endpoint that goes direct when it can: Zenoh through the relay, plus one UDP socket
for a hole punch (the I/O around :class:`~freelook.link._direct.DirectPath`).

The end asks the relay's STUN reflector (UDP, the relay's address and port) for its public
address, and tells its peer that candidate through the relay, every ``TELL`` s, with whether
it hears the peer's direct packets (``FLDP`` + JSON on the session's own keys: the relay's
access control lets only the peer's login put there; the robot reads it only from a station
tag its session verified). While a punch runs, each packet the link sends goes through the
relay and, as a probe, straight to the peer's candidates too; once the round trip works both
ways, packets go direct only, and back through the relay when the direct path goes quiet.

A datagram that comes direct is handed to the link as from ``Via(tag, address)``: the session
verifies it like any packet (key, replay window, budget of refusals), and only a verified one
tells the path that the peer is there (:meth:`DirectZenohEndpoint.learn_peer`). Datagrams from
anywhere but a candidate's host are dropped and counted.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from freelook.errors import ConfigError
from freelook.link._direct import DirectPath, DirectTiming, PathName
from freelook.link._stun import binding_request, parse_binding_response
from freelook.link._zenoh import RobotInfo, ZenohBus, ZenohEndpoint

if TYPE_CHECKING:
    from freelook.link._udp_socket import Address

__all__ = ["DirectZenohEndpoint", "Via", "open_direct"]

log = logging.getLogger(__name__)
MAGIC = b"FLDP"
TELL = 0.1  # s between two candidate messages to a peer (and its "I hear you" reports)
STUN_AGAIN = 1.0  # s between binding requests until one is answered (then every 20 s)
OPENER_TTL = 2  # hops a punch's first probes live: out of this end's NAT, not into the peer's
MAX_TELL = 512  # bytes: the longest candidate message read


@dataclass(frozen=True, slots=True)
class Via:
    """A datagram's source on the direct path: the peer's tag and where it came from."""

    tag: str
    address: Address

    def __str__(self) -> str:
        return f"{self.tag} direct from {self.address[0]}:{self.address[1]}"


class DirectZenohEndpoint(ZenohEndpoint):
    """A :class:`ZenohEndpoint` with a direct UDP path beside it (see the module)."""

    def __init__(
        self,
        bus: ZenohBus,
        robot: str,
        role: Literal["robot", "station"],
        reflector: Address,
        info: RobotInfo | None = None,
        relay_name: str = "",
        timing: DirectTiming | None = None,
        clock: Callable[[], float] | None = None,
    ) -> None:
        super().__init__(bus, robot, role, info)
        self.reflector = reflector
        self.relay_name = relay_name
        self.timing = timing or DirectTiming()
        self.clock = clock or self._loop.time  # the loop's monotonic clock
        self.paths: dict[str, DirectPath] = {}  # peer (tag; the robot's name) → its path
        self.public: Address | None = None  # this end's address as the reflector saw it
        self.sent_direct = 0
        self.received_direct = 0
        self.direct_strangers = 0  # datagrams from no candidate's host, dropped
        self._said: dict[str, PathName] = {}  # the path last logged, by peer
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self._sock.setblocking(False)
        self._sock.bind(("0.0.0.0", 0))
        self._transaction = os.urandom(12)
        self._loop.add_reader(self._sock.fileno(), self._readable)
        self._ticker = self._loop.create_task(self._tick())

    # -- what the cockpit shows --------------------------------------------------------------

    def path_name(self) -> PathName:
        """ "direct" when the peer (any, on a robot) is reached direct, else "relay"."""
        now = self.clock()
        return "direct" if any(p.path(now) == "direct" for p in self.paths.values()) else "relay"

    # -- the relay side ----------------------------------------------------------------------

    def _deliver(self, data: bytes, source: str) -> None:
        if data[:4] != MAGIC:
            super()._deliver(data, source)
            return
        if self.role == "robot" and source not in self.verified:
            return  # only a station whose session verified may tell its candidates
        if len(data) > MAX_TELL:
            return
        try:
            told = json.loads(data[4:])
            candidates = tuple(
                (str(host), int(port))
                for host, port in told["c"]
                if isinstance(host, str) and 0 < int(port) < 65536
            )
            hears = bool(told["h"])
        except (ValueError, TypeError, KeyError):
            self.malformed += 1
            return
        path = self.paths.setdefault(source, DirectPath(self.timing))
        now = self.clock()
        path.peer_candidates(candidates, now)
        path.peer_hears(hears, now)

    async def _tick(self) -> None:
        asked = -1e9
        while not self._closed:
            now = self.clock()
            if now - asked >= (STUN_AGAIN if self.public is None else 20.0):
                asked = now
                with contextlib.suppress(OSError):
                    self._sock.sendto(binding_request(self._transaction), self.reflector)
            if self.role == "robot":  # a station tag forgotten (a newer session): its path too
                for gone in [tag for tag in self.paths if tag not in self.verified]:
                    del self.paths[gone]
            peers = list(self.paths) if self.role == "robot" else [self.robot]
            for peer in peers:
                self._tell(peer, now)
                self._say_path(peer, now)
            await asyncio.sleep(TELL)

    def _say_path(self, peer: str, now: float) -> None:
        """Log when the path to ``peer`` changes (direct, where to; or the relay)."""
        path = self.paths.get(peer)
        if path is None:
            return
        via, before = path.path(now), self._said.get(peer)
        if before == via:
            return
        self._said[peer] = via
        if via == "direct" and path.chosen is not None:
            where = f"{path.chosen[0]}:{path.chosen[1]}"
            log.info("link to %s: direct to %s, the relay standing by", peer, where)
        elif before is not None:
            log.info("link to %s: back through the relay %s", peer, self.relay_name)

    def _tell(self, peer: str, now: float) -> None:
        path = self.paths.get(peer)
        candidates = [list(self.public)] if self.public is not None else []
        told = {"c": candidates, "h": path is not None and path.hears(now)}
        data = MAGIC + json.dumps(told, separators=(",", ":")).encode()
        ZenohEndpoint.send(self, data, peer)

    # -- the direct side ---------------------------------------------------------------------

    def _readable(self) -> None:
        for _ in range(64):
            try:
                data, addr = self._sock.recvfrom(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                continue  # an ICMP error for an earlier probe
            address = (str(addr[0]), int(addr[1]))
            if address == self.reflector:
                mapped = parse_binding_response(data, self._transaction)
                if mapped is not None:
                    self.public = mapped
                continue
            self._from_direct(data, address)

    def _from_direct(self, data: bytes, address: Address) -> None:
        """A datagram for the peer whose chosen address it came from, else for the first whose
        candidates are on its host (its NAT may have given the peer a new port), else nobody."""
        found = next((peer for peer, p in self.paths.items() if p.chosen == address), None)
        if found is None:
            found = next(
                (
                    peer
                    for peer, path in self.paths.items()
                    if address[0] in {host for host, _ in path.candidates}
                ),
                None,
            )
        if found is None:
            self.direct_strangers += 1
            return
        self.received_direct += 1
        verified = self.paths[found].chosen == address and found in self.verified
        if not self._closed:
            self._queue(data, Via(found, address), verified)  # type: ignore[arg-type]

    def learn_peer(self, source: object) -> None:
        if isinstance(source, Via):
            path = self.paths.get(source.tag)
            if path is not None:
                path.verified(source.address, self.clock())
            source = source.tag
        super().learn_peer(source)

    def send(self, data: bytes, addr: object = None) -> None:
        if self._closed:
            return
        peer = addr.tag if isinstance(addr, Via) else addr
        if self.role == "station":
            peer = self.robot
        elif not isinstance(peer, str):
            peer = self.peer
        path = self.paths.get(peer) if isinstance(peer, str) else None
        now = self.clock()
        if path is not None and path.chosen is not None and path.path(now) == "direct":
            self._sendto(data, path.chosen, None)
            return
        super().send(data, peer)
        if path is not None:
            for target, opener in path.probes(now):
                self._sendto(data, target, OPENER_TTL if opener else None)

    def send_to(self, data: bytes, source: object) -> None:
        self.send(data, source)

    def _sendto(self, data: bytes, target: Address, ttl: int | None) -> None:
        try:
            if ttl is not None:
                self._sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, ttl)
            self._sock.sendto(data, target)
            self.sent_direct += 1
        except OSError:
            pass  # a full buffer or a refused route: the relay still carries the link
        finally:
            if ttl is not None:
                self._sock.setsockopt(socket.IPPROTO_IP, socket.IP_TTL, 64)

    def close(self) -> None:
        if not self._closed:
            self._ticker.cancel()
            with contextlib.suppress(ValueError, OSError):
                self._loop.remove_reader(self._sock.fileno())
            self._sock.close()
        super().close()


async def open_direct(
    bus: ZenohBus,
    robot: str,
    role: Literal["robot", "station"],
    relay: tuple[str, int],
    info: RobotInfo | None = None,
) -> DirectZenohEndpoint:
    """The end on ``bus`` for ``robot``, its STUN reflector at the ``relay``'s address and port
    (HOST, PORT) on UDP (``freelook relay`` answers there)."""
    loop = asyncio.get_running_loop()
    try:
        found = await loop.getaddrinfo(*relay, family=socket.AF_INET, type=socket.SOCK_DGRAM)
    except OSError as err:
        raise ConfigError(f"{relay[0]}: cannot find the relay's address: {err}") from None
    reflector = (str(found[0][4][0]), int(found[0][4][1]))
    return DirectZenohEndpoint(
        bus, robot, role, reflector, info, relay_name=f"{relay[0]}:{relay[1]}"
    )
