"""The Zenoh transport: robots and stations on one distributed bus (eclipse-zenoh).

Key expressions, per robot ``R`` and per station end ``T`` (a tag each station end draws:
its bus user name when the bus authenticates, then random hex digits, so every station has
channels of its own and the robot answers only where a verified packet came from):

    freelook/R/control/T      station → robot: every packet a station sends
    freelook/R/telemetry/T    robot → station: telemetry, grants, map, session replies
    freelook/R/video/T        robot → station: video fragments
    freelook/R/info           queryable: who the robot is (discovery, JSON)
    freelook/R/alive          liveliness token: the robot is up

The transport only moves bytes: the link session over it (authentication, replay windows,
arbitration) is the same as over UDP or a serial radio. A tag is to Zenoh what a source
address is to UDP: the robot end answers a tag only after the session verified a packet from
it (:meth:`ZenohEndpoint.learn_peer`), reads verified tags first, and keeps strangers in a
small queue of their own. Zenoh delivers on its own threads; samples hop onto the asyncio
loop before anything else sees them.

A :class:`ZenohBus` is one Zenoh session (peer mode on chosen endpoints, or a client of a
router); any number of robot and station endpoints share it. With a :class:`ZenohAuth` it
logs in with a user name and password made from its keys and, where it accepts connections,
enforces the access control lists of :mod:`freelook.link._zenoh_acl`.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import logging
import re
import secrets
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from freelook.errors import ConfigError
from freelook.link._inbox import Inbox
from freelook.link._native import MAX_PACKET, Stream
from freelook.link._zenoh_acl import ZenohAuth, ZenohTls, bus_auth

# zenoh is imported where it is used, so programs that never open a bus do not load it
if TYPE_CHECKING:
    import zenoh

    from freelook.link._keys import KeyRing
    from freelook.link._transport import LinkRate
    from freelook.link._transport_table import TransportUrl
    from freelook.link._udp_socket import Address

__all__ = [
    "ROOT",
    "RobotInfo",
    "ZenohBus",
    "ZenohEndpoint",
    "check_robot_name",
    "zenoh_config",
]

log = logging.getLogger(__name__)
ROOT = "freelook"
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}")
_TAG = re.compile(r"(?:station-[0-9a-f]{16}-)?[0-9a-f]{16}")  # [bus user-] random hex
_SYNC = b"\xfe\x4c"
MAX_INFO = 4096  # bytes: the longest robot description discovery reads
CHANNEL = 1024  # samples a subscription's ring keeps for its reader (the oldest go first)
BATCH = 256  # samples a reader hands the event loop at once, at most


def check_robot_name(name: str) -> str:
    """``name`` if it can be one chunk of a key expression (no ``/``, ``*``, ``$``, ``?``)."""
    if not _NAME.fullmatch(name):
        raise ConfigError(
            f"robot name {name!r}: expected 1-64 letters, digits, '_', '-' or '.' "
            "(it is a chunk of Zenoh key expressions)"
        )
    return name


def zenoh_config(
    mode: Literal["peer", "client", "router"] = "peer",
    listen: Sequence[str] = (),
    connect: Sequence[str] = (),
    multicast_scouting: bool = False,
) -> zenoh.Config:
    """A Zenoh configuration that listens and connects only where it is told.

    ``listen`` and ``connect`` are Zenoh endpoints (``tcp/127.0.0.1:7447``). Multicast
    scouting is off unless asked for, so nothing is announced to or heard from other
    interfaces: peers find each other through the endpoints given (and gossip over them).
    """
    import zenoh

    config = zenoh.Config()
    config.insert_json5("mode", json.dumps(mode))
    config.insert_json5("scouting/multicast/enabled", json.dumps(multicast_scouting))
    config.insert_json5("listen/endpoints", json.dumps(list(listen)))
    config.insert_json5("connect/endpoints", json.dumps(list(connect)))
    return config


@dataclass(frozen=True, slots=True)
class RobotInfo:
    """What a robot says of itself on the bus (unauthenticated: a name to find it by)."""

    name: str
    model: str = ""
    wire: str = "native"

    def to_json(self) -> bytes:
        return json.dumps({"name": self.name, "model": self.model, "wire": self.wire}).encode()

    @classmethod
    def from_json(cls, data: bytes) -> RobotInfo | None:
        """The description in ``data``, or None when it is not one (too long, malformed)."""
        if len(data) > MAX_INFO:
            return None
        try:
            raw = json.loads(data)
        except (ValueError, RecursionError):
            return None
        if not isinstance(raw, dict):
            return None
        name, model, wire = raw.get("name"), raw.get("model", ""), raw.get("wire", "native")
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            return None
        if not isinstance(model, str) or not isinstance(wire, str):
            return None
        return cls(name, model[:64], wire[:16])


class ZenohBus:
    """One Zenoh session that robot and station endpoints share.

    Zenoh's receiving threads never wait for Python. The bus subscribes once per robot end
    (``freelook/ROBOT/control/*``: a robot hears only its own stations, even through a router)
    and once per channel for all its station ends (their tags share the bus's prefix:
    ``freelook/*/telemetry/PREFIX$*``); each subscription fills a ring inside Zenoh
    (:data:`CHANNEL` samples, the oldest dropped when full) and one reader thread, blocked on
    it without the interpreter lock, hands what arrived to the event loop in batches, where
    each sample goes to its endpoint. However many stations a process holds, two threads wait
    for the interpreter for them: a busy loop costs some latency, never Zenoh's flow.
    """

    def __init__(self, config: zenoh.Config, *, auth: ZenohAuth | None = None) -> None:
        import zenoh

        self.auth = auth or ZenohAuth()
        try:
            with self.auth.applied(config) as ready:
                self.session = zenoh.open(ready)
        except zenoh.ZError as err:
            raise ConfigError(f"cannot open the Zenoh session: {err}") from None
        self._closed = False
        # station tags on this bus: [its user name-] prefix + 4 hex digits
        user = self.auth.user.name if self.auth.user is not None else ""
        own = user + "-" if user.startswith("station-") else ""
        self.prefix = own + secrets.token_hex(6)
        self._tags = itertools.count(1)
        self._robots: dict[str, ZenohEndpoint] = {}
        self._stations: dict[str, ZenohEndpoint] = {}  # tag → its station end
        self._subscriptions: dict[str, tuple[Any, threading.Thread]] = {}
        self._loop: asyncio.AbstractEventLoop | None = None
        self.unrouted = 0  # samples for no endpoint here (an old tag, a robot elsewhere)

    def _join(self, endpoint: ZenohEndpoint) -> str:
        """Route ``endpoint``'s samples to it; returns its tag (a station end's; "" for a
        robot end)."""
        loop = asyncio.get_running_loop()
        if self._loop is None:
            self._loop = loop
        elif self._loop is not loop:
            raise RuntimeError("a Zenoh bus serves the endpoints of one event loop")
        if endpoint.role == "robot":
            if endpoint.robot in self._robots:
                raise ConfigError(f"robot {endpoint.robot!r} is already on this bus")
            self._robots[endpoint.robot] = endpoint
            self._subscribe(f"{ROOT}/{endpoint.robot}/control/*")
            return ""
        number = next(self._tags)
        if number > 0xFFFF:
            raise ConfigError("a Zenoh bus holds at most 65535 station ends")
        tag = f"{self.prefix}{number:04x}"
        self._stations[tag] = endpoint
        for channel in ("telemetry", "video"):
            self._subscribe(f"{ROOT}/*/{channel}/{self.prefix}$*")
        return tag

    def _leave(self, endpoint: ZenohEndpoint) -> None:
        if self._robots.get(endpoint.robot) is endpoint:
            del self._robots[endpoint.robot]
            self._unsubscribe(f"{ROOT}/{endpoint.robot}/control/*")
        if self._stations.get(endpoint.tag) is endpoint:
            del self._stations[endpoint.tag]

    def _subscribe(self, key: str) -> None:
        import zenoh

        if key in self._subscriptions:
            return
        subscriber = self.session.declare_subscriber(key, zenoh.handlers.RingChannel(CHANNEL))
        reader = threading.Thread(
            target=self._read, args=(subscriber,), name=f"zenoh {key}", daemon=True
        )
        self._subscriptions[key] = (subscriber, reader)
        reader.start()

    def _unsubscribe(self, key: str) -> None:
        import zenoh

        found = self._subscriptions.pop(key, None)
        if found is not None:
            with contextlib.suppress(zenoh.ZError):
                found[0].undeclare()  # its reader sees the channel close and ends

    def _read(self, subscriber: Any) -> None:
        """Wait for samples (the interpreter lock released) and hand them over in batches,
        until the subscription ends."""
        import zenoh

        handler = subscriber.handler
        while True:
            try:
                batch = [handler.recv()]
                while len(batch) < BATCH:
                    more = handler.try_recv()
                    if more is None:
                        break
                    batch.append(more)
            except zenoh.ZError:
                return  # undeclared: the channel closed
            items = [(str(s.key_expr), s.payload.to_bytes()) for s in batch]
            loop = self._loop
            if loop is None:
                return
            try:
                loop.call_soon_threadsafe(self._dispatch, items)
            except RuntimeError:  # the loop closed during shutdown
                return

    def _dispatch(self, items: list[tuple[str, bytes]]) -> None:
        """Each sample to its endpoint (on the event loop)."""
        for key, data in items:
            parts = key.split("/")
            if len(parts) != 4:
                self.unrouted += 1
                continue
            _, robot, channel, tag = parts
            endpoint: ZenohEndpoint | None
            if channel == "control":
                endpoint, source = self._robots.get(robot), tag
            else:
                endpoint, source = self._stations.get(tag), robot
                if endpoint is not None and endpoint.robot != robot:
                    endpoint = None  # another robot on this station's tag: not its peer
            if endpoint is None:
                self.unrouted += 1
                continue
            endpoint._accept(data, source)

    @classmethod
    def peer(
        cls,
        listen: Sequence[str] = (),
        connect: Sequence[str] = (),
        *,
        auth: ZenohAuth | None = None,
    ) -> ZenohBus:
        auth = auth or ZenohAuth()
        listen, connect = [auth.endpoint(e) for e in listen], [auth.endpoint(e) for e in connect]
        return cls(zenoh_config("peer", listen, connect), auth=auth)

    @classmethod
    def client(cls, router: Sequence[str], *, auth: ZenohAuth | None = None) -> ZenohBus:
        auth = auth or ZenohAuth()
        return cls(zenoh_config("client", connect=[auth.endpoint(e) for e in router]), auth=auth)

    @classmethod
    def for_url(
        cls,
        url: TransportUrl,
        *,
        listen: bool,
        keys: KeyRing | None = None,
        key: bytes | None = None,
        tls: ZenohTls | None = None,
    ) -> ZenohBus:
        """The bus a ``zenoh://`` URL names: in peer mode, listening at its address (a robot)
        or connecting to it (a station); in client mode, a router's client either way.
        Authenticated when keys are given (:func:`bus_auth`); open otherwise."""
        auth = bus_auth(url, listen=listen, keys=keys, key=key, tls=tls)
        if url.mode == "client":
            return cls.client(url.zenoh_endpoints, auth=auth)
        if listen:
            return cls.peer(listen=[url.zenoh_endpoint], auth=auth)
        return cls.peer(connect=[url.zenoh_endpoint], auth=auth)

    def robot(self, info: RobotInfo) -> ZenohEndpoint:
        """The robot end for ``info.name``: hears every station's control channel."""
        return ZenohEndpoint(self, check_robot_name(info.name), "robot", info)

    def station(self, robot: str) -> ZenohEndpoint:
        """A station end talking to ``robot`` on channels of its own."""
        return ZenohEndpoint(self, check_robot_name(robot), "station")

    def discover(self, timeout: float = 1.0) -> list[RobotInfo]:
        """The robots that answer on ``freelook/*/info`` within ``timeout`` seconds, by name
        (blocking: call it from a worker thread in an event loop). Answers that are not a
        description, or that name a robot other than the key they came on, are skipped."""
        found: dict[str, RobotInfo] = {}
        for reply in self.session.get(f"{ROOT}/*/info", timeout=timeout):
            sample = reply.ok
            if sample is None:
                continue
            info = RobotInfo.from_json(sample.payload.to_bytes())
            if info is not None and str(sample.key_expr) == f"{ROOT}/{info.name}/info":
                found[info.name] = info
        return [found[name] for name in sorted(found)]

    def alive(self, timeout: float = 1.0) -> list[str]:
        """Names of the robots whose liveliness tokens are up (blocking)."""
        names = set()
        for reply in self.session.liveliness().get(f"{ROOT}/*/alive", timeout=timeout):
            sample = reply.ok
            if sample is not None:
                parts = str(sample.key_expr).split("/")
                if len(parts) == 3 and _NAME.fullmatch(parts[1]):
                    names.add(parts[1])
        return sorted(names)

    def close(self) -> None:
        import zenoh

        if self._closed:
            return
        self._closed = True
        for subscriber, _ in self._subscriptions.values():
            with contextlib.suppress(zenoh.ZError):
                subscriber.undeclare()
        for _, reader in self._subscriptions.values():
            reader.join(timeout=1.0)
        self._subscriptions.clear()
        self.session.close()  # type: ignore[no-untyped-call]


def _is_video(data: bytes) -> bool:
    return len(data) > 5 and data[:2] == _SYNC and data[5] == Stream.VIDEO


class ZenohEndpoint(Inbox[str]):
    """A link endpoint on a :class:`ZenohBus` (the robot end or a station end).

    The robot end's sources are station tags; it answers the tag a packet came from once
    the link verified it. A station end has one fixed peer, the robot (its source is the
    robot's name). Queues: verified tags first (newest wins when full), strangers in a small
    queue that drops its oldest; payloads longer than a packet and samples on malformed keys
    are dropped and counted before they reach the loop's queues.
    """

    def __init__(
        self,
        bus: ZenohBus,
        robot: str,
        role: Literal["robot", "station"],
        info: RobotInfo | None = None,
        max_queue: int = 1024,
        max_strangers: int = 64,
    ) -> None:
        self.bus = bus
        self.robot = robot
        self.role = role
        super().__init__(max_queue, max_strangers)
        self._loop = asyncio.get_running_loop()
        self.verified: dict[str, None] = {}  # insertion-ordered: the oldest first
        self.peer: str | None = None
        self.malformed = 0  # oversized payloads, keys that are not ours
        self.owns_bus = False  # the bus was opened for this end alone: it closes with it
        self.local_address: Address | None = None  # the bus's sockets, not its own
        self.link_rate: LinkRate | None = None  # the bus paces itself, unless told a rate
        self._publishers: dict[str, Any] = {}
        self._closed = False
        session = bus.session
        base = f"{ROOT}/{robot}"
        self._declared: list[Any] = []
        self.tag = bus._join(self)
        if role == "robot":
            if info is not None:
                payload = info.to_json()
                self._declared.append(
                    session.declare_queryable(
                        f"{base}/info", lambda q: q.reply(f"{base}/info", payload)
                    )
                )
            self._declared.append(session.liveliness().declare_token(f"{base}/alive"))
        else:
            self.peer = robot
            self.verified[robot] = None
            self._out = self._publisher(f"{base}/control/{self.tag}")

    @property
    def fixed_peer(self) -> bool:
        """A station end talks to its robot only; a robot end answers tags."""
        return self.role == "station"

    def _publisher(self, key: str) -> Any:
        import zenoh

        publisher = self._publishers.get(key)
        if publisher is None:
            publisher = self.bus.session.declare_publisher(
                key, congestion_control=zenoh.CongestionControl.DROP, express=False
            )
            self._publishers[key] = publisher
        return publisher

    # -- on the event loop -------------------------------------------------------------------

    def _accept(self, data: bytes, source: str) -> None:
        """A sample the bus routed here: bounded and checked, then handled or queued."""
        if len(data) > MAX_PACKET or (self.role == "robot" and not _TAG.fullmatch(source)):
            self.malformed += 1
            return
        self._deliver(data, source)

    def _deliver(self, data: bytes, source: str) -> None:
        if not self._closed:
            self._queue(data, source, source in self.verified)

    def send(self, data: bytes, addr: object = None) -> None:
        """To the robot (a station end), or to station tag ``addr`` (default: the tag last
        verified) on its telemetry or video channel (a robot end). A tag not yet verified
        gets only what the session answers a handshake with, through no kept publisher."""
        import zenoh

        if self._closed:
            return
        if self.role == "station":
            self._out.put(data)
            return
        tag = addr if isinstance(addr, str) else self.peer
        if tag is None or not _TAG.fullmatch(tag):
            return
        channel = "video" if _is_video(data) else "telemetry"
        key = f"{ROOT}/{self.robot}/{channel}/{tag}"
        if tag in self.verified:
            self._publisher(key).put(data)
        else:
            self.bus.session.put(key, data, congestion_control=zenoh.CongestionControl.DROP)

    def send_to(self, data: bytes, source: object) -> None:
        if self.fixed_peer:
            self.send(data)
        elif isinstance(source, str):
            self.send(data, source)

    def learn_peer(self, source: object) -> None:
        """``source`` sent a packet the link verified: answer it, and read it first."""
        if self.role == "robot" and isinstance(source, str) and _TAG.fullmatch(source):
            if source not in self.verified and len(self.verified) >= 4096:
                self._forget_oldest()
            self.verified[source] = None
            self.peer = source

    def _forget_oldest(self) -> None:
        import zenoh

        victim = next(iter(self.verified))
        del self.verified[victim]
        for key in [k for k in self._publishers if k.endswith(f"/{victim}")]:
            with contextlib.suppress(zenoh.ZError):
                self._publishers.pop(key).undeclare()

    def close(self) -> None:
        import zenoh

        if self._closed:
            return
        self._closed = True
        self.bus._leave(self)
        for entity in (*self._declared, *self._publishers.values()):
            with contextlib.suppress(zenoh.ZError):
                entity.undeclare()
        self._declared.clear()
        self._publishers.clear()
        if self.owns_bus:
            self.bus.close()
