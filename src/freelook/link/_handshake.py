"""Sessions of the native profile: the handshake, per-session keys, replay and freshness.

The operator opens a session with a challenge–response over its station key::

    operator → robot   SessionOpen(client nonce)                  tagged with the station key
    robot → operator   SessionChallenge(client nonce, server nonce)  tagged with the station key
    operator → robot   SessionConfirm()                           tagged with the session key

Both ends derive the session key ``BLAKE2s(key=station key, "freelook session v1" ‖ station
‖ client nonce ‖ server nonce)``; every later packet (flag bit 1) is tagged with it, so a packet
of an earlier session (or of a robot's earlier start, whose nonces differ) never verifies in a
new one. Inside a session each stream has its sequence window, and a packet older than
``max_age`` is stale: its age is measured against the smallest delay seen so far in the
session (the clocks of the two ends need not agree). The robot draws its nonces from a source
seeded at start (``os.urandom`` unless a test gives one).

A station's opens are stamped later and later (its wall clock); the robot takes an open only
if it is stamped later than the last one it took from that station, so a captured open
replayed, however fast, draws no challenge and never displaces the handshake under way (a
station whose clock steps back waits until it passes its last open again).

The robot keeps state for at most ``max_stations`` stations at once (sessions and pending
handshakes; a keys file listing more raises it to their number): with the one-key shorthand any
station id verifies, and a key holder opening sessions under thousands of ids would otherwise
grow the robot without bound. A verified open from a station beyond that takes the place of an
idle one (a handshake that timed out, else the session silent longest, silent for more than
``idle_after``; never a station the robot says to keep, the one holding control), or is refused
and counted (``refused_full``). A station forgotten (so, or because its session expired) loses
all its state, its newest open's stamp included; that stamp raises a floor instead, and an open
from a station with no stamp remembered must be stamped later than the floor, so a captured
open stays a replay once its station is forgotten (every open of a forgotten station is stamped
no later than its newest, and so than the floor). Stations of a keys file keep their stamps:
there are only as many as the file lists.

Checks run cheapest first: the source's budget of refused packets, the header, the station id
(a known station, an open session for flag-1 packets, only the handshake outside one), and only
then the tag. The budget spares the sources a packet verified from (the newest
:data:`MAX_VERIFIED_SOURCES`): a source address can be forged, and junk sent "from" the peer
must not make this end drop the peer's own packets; junk from there costs a tag at most. A
session end is a codec for the stream framer (it has the codec's framing attributes) whose
``decode`` applies all of this.
"""

from __future__ import annotations

import hashlib
import math
import os
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from freelook.link._auth import ReplayWindow
from freelook.link._decoded import Decoded
from freelook.link._errors import (
    AuthenticationError,
    RateLimitError,
    ReplayError,
    SessionError,
)
from freelook.link._keys import KeyRing, Permissions
from freelook.link._messages import Message, SessionChallenge, SessionConfirm, SessionOpen
from freelook.link._native import (
    FLAG_AUTH,
    FLAG_SESSION,
    TYPE_SESSION_CHALLENGE,
    TYPE_SESSION_OPEN,
    Header,
    Keying,
    NativeCodec,
)
from freelook.link._values import NONCE_SIZE

__all__ = [
    "HANDSHAKE_TIMEOUT",
    "NonceSource",
    "OperatorSessions",
    "RefusalBudget",
    "RobotSessions",
    "SessionState",
    "nonce_source",
    "session_key",
]

NonceSource = Callable[[int], bytes]
#: s: the longest a handshake may take at either end (at least the packets' max age)
HANDSHAKE_TIMEOUT = 10.0
#: first contact's opens are retried up to this many times ``reopen_after`` apart
MAX_REOPEN_BACKOFF = 8


def nonce_source(nonce: bytes | NonceSource | None) -> NonceSource:
    """``os.urandom``, a given callable, or (tests) nonces derived from a fixed seed."""
    if nonce is None:
        return os.urandom
    if callable(nonce):
        return nonce
    seed = bytes(nonce)
    counter = [0]

    def draw(size: int) -> bytes:
        counter[0] += 1
        return hashlib.blake2s(
            counter[0].to_bytes(8, "little"), key=seed[:32], digest_size=size
        ).digest()

    return draw


def session_key(
    station_key: bytes, station: int, client_nonce: bytes, server_nonce: bytes
) -> bytes:
    """The key both ends tag a session's packets with."""
    data = b"freelook session v1" + station.to_bytes(2, "little") + client_nonce + server_nonce
    return hashlib.blake2s(data, key=station_key[:32]).digest()


#: sources a session end remembers as verified (the robot keeps at most 16 stations, which may
#: move ports behind a NAT)
MAX_VERIFIED_SOURCES = 256


class RefusalBudget:
    """A token bucket per source of refused packets: a source that spent it is dropped before
    anything else is looked at, until it refills. Bounded: the oldest sources are forgotten."""

    def __init__(self, burst: float = 32.0, rate: float = 16.0, max_sources: int = 1024) -> None:
        self.burst = burst
        self.rate = rate
        self.max_sources = max_sources
        self._buckets: OrderedDict[object, tuple[float, float]] = OrderedDict()

    def _level(self, source: object, now: float) -> float:
        tokens, then = self._buckets.get(source, (self.burst, now))
        return min(self.burst, tokens + (now - then) * self.rate)

    def allows(self, source: object, now: float) -> bool:
        return source is None or source not in self._buckets or self._level(source, now) >= 1.0

    def charge(self, source: object, now: float) -> None:
        if source is None:
            return
        self._buckets[source] = (self._level(source, now) - 1.0, now)
        self._buckets.move_to_end(source)
        while len(self._buckets) > self.max_sources:
            self._buckets.popitem(last=False)


@dataclass(slots=True)
class SessionState:
    """One open session, as one end keeps it."""

    station: int
    key: bytes
    permissions: Permissions
    opened: float
    max_age: float
    offset: float  # smallest (receive time − sender stamp) seen: clock offset + least delay
    keying: Keying = field(init=False)
    replay: ReplayWindow = field(init=False)
    last_rx: float = 0.0

    def __post_init__(self) -> None:
        self.keying = Keying(self.key, FLAG_AUTH | FLAG_SESSION)
        self.replay = ReplayWindow(self.max_age)
        self.last_rx = self.opened

    def check(self, header: Header, now: float) -> None:
        """Refuse a replayed or stale packet of the open link session; otherwise record it."""
        stamp = header.stamp
        age = now - stamp - self.offset
        if age > self.max_age:
            raise ReplayError(
                f"stale: stamped {age:.3f} s before its peers would be (limit {self.max_age} s)"
            )
        self.replay.check(header.sender, header.stream, header.sequence, stamp)
        self.offset = min(self.offset, now - stamp)
        self.last_rx = now


@dataclass(slots=True)
class _Pending:
    client_nonce: bytes
    server_nonce: bytes
    key: bytes
    since: float
    offset: float


class _SessionEnd:
    """What both ends share: the codec's framing, the budget, events for the session."""

    name = "native"
    header_size = NativeCodec.header_size

    def __init__(self, codec: NativeCodec, max_age: float, budget: RefusalBudget) -> None:
        self.codec = codec
        self.wire_offset = 0.0  # added to ``now`` for the stamps this end sends
        self.sync = codec.sync
        self.sync_offset = codec.sync_offset
        self.min_length = codec.min_length
        self.max_length = codec.max_length
        self.max_age = max_age
        self.budget = budget
        # set by the session before each receive: the stream framer's decode takes bytes only
        self.now = 0.0
        self.source: object = None
        self.opened: list[SessionState] = []  # sessions a packet just opened (drained)
        self.handshake_tags = 0  # tags computed for handshake packets (cost accounting)
        #: the newest sources a packet verified from, oldest first: the budget never silences
        #: them (their address can be forged; junk "from" the peer must not cost its packets)
        self.verified_sources: OrderedDict[object, None] = OrderedDict()

    def frame_length(self, buffer: bytes | bytearray, start: int) -> int:
        return self.codec.frame_length(buffer, start)

    def decode(self, data: bytes | bytearray | memoryview) -> Decoded:
        packet = bytes(data)
        now, source = self.now, self.source
        if source not in self.verified_sources and not self.budget.allows(source, now):
            raise RateLimitError(f"source {source} spent its budget of refused packets")
        try:
            header = self.codec.parse(packet)
            if not header.flags & FLAG_AUTH:
                raise AuthenticationError("unauthenticated packet refused (sessions need a key)")
            message = self._decode(packet, header, now)
        except Exception:
            self.budget.charge(source, now)
            raise
        if source is not None:
            verified = self.verified_sources
            verified[source] = None
            verified.move_to_end(source)
            if len(verified) > MAX_VERIFIED_SOURCES:
                verified.popitem(last=False)
        return header.decoded(message, len(packet))

    def _decode(self, packet: bytes, header: Header, now: float) -> Message:
        raise NotImplementedError


class RobotSessions(_SessionEnd):
    """The robot's end: a key ring, one session (and one pending handshake) per station."""

    def __init__(
        self,
        codec: NativeCodec,
        keys: KeyRing,
        *,
        nonce: NonceSource,
        max_age: float,
        budget: RefusalBudget,
        handshake_timeout: float,
        max_stations: int = 16,
        idle_after: float = 5.0,
    ) -> None:
        super().__init__(codec, max_age, budget)
        self.keys = keys
        self.draw = nonce
        self.start_nonce = nonce(NONCE_SIZE)  # this start's nonce: every session derives from it
        self.handshake_timeout = handshake_timeout
        self.sessions: dict[int, SessionState] = {}
        self._pending: dict[int, _Pending] = {}
        self._open_stamps: dict[int, int] = {}  # station → the newest open's stamp, µs
        #: the newest stamp of a forgotten station's opens (µs; -1: none forgotten)
        self._open_floor = -1
        self.max_stations = max(max_stations, sum(1 for _ in keys))
        self.idle_after = idle_after
        #: whether a station must not be forgotten for another (the robot: the control holder)
        self.keep: Callable[[int], bool] = lambda station: False
        self.forgotten: list[int] = []  # stations whose state was dropped (drained)
        self.refused_full = 0  # verified opens refused: every place held by a busy station

    def _decode(self, packet: bytes, header: Header, now: float) -> Message:
        station = self.keys.lookup(header.sender)
        if station is None:
            raise SessionError(f"no key for station {header.sender}")
        if not header.flags & FLAG_SESSION:
            if header.code != TYPE_SESSION_OPEN:
                raise SessionError(
                    f"{header.message_type.__name__} from station {header.sender} outside a "
                    "session (open one first)"
                )
            self.handshake_tags += 1
            self.codec.verify(packet, header, station.key)
            # as WireGuard's initiation timestamp: a station's opens are stamped later and
            # later, so a captured one replayed never displaces the handshake under way
            newest = self._open_stamps.get(header.sender, self._open_floor)
            if header.stamp_us <= newest:
                raise ReplayError(
                    f"SessionOpen from station {header.sender} stamped no later than one "
                    "taken before (a replay)"
                )
            self._make_room(header.sender, now)
            self._open_stamps[header.sender] = header.stamp_us
            return self.codec.payload(packet, header)
        session = self.sessions.get(header.sender)
        pending = self._pending.get(header.sender)
        if pending is not None and now - pending.since > self.handshake_timeout:
            del self._pending[header.sender]
            pending = None
        if session is None and pending is None:
            raise SessionError(f"no open session for station {header.sender}")
        try:
            if session is None:
                raise AuthenticationError("no current session")
            self.codec.verify(packet, header, session.key)
        except AuthenticationError:
            if pending is None:
                raise
            self.codec.verify(packet, header, pending.key)  # the first packet of a new session
            session = SessionState(
                header.sender, pending.key, station.permissions, now, self.max_age, pending.offset
            )
            message = self.codec.payload(packet, header)
            session.check(header, now)
            del self._pending[header.sender]
            self.sessions[header.sender] = session
            self.opened.append(session)
            return message
        message = self.codec.payload(packet, header)
        session.check(header, now)
        return message

    def challenge(self, station: int, opening: SessionOpen, stamp: float, now: float) -> bytes:
        """The answer to a verified ``SessionOpen`` stamped ``stamp`` (a pending session until
        the operator's first packet tagged with the session key)."""
        keys = self.keys.lookup(station)
        assert keys is not None  # the open verified with this station's key
        server_nonce = hashlib.blake2s(
            self.draw(NONCE_SIZE), key=self.start_nonce, digest_size=NONCE_SIZE
        ).digest()
        key = session_key(keys.key, station, opening.nonce, server_nonce)
        self._pending[station] = _Pending(opening.nonce, server_nonce, key, now, now - stamp)
        reply = SessionChallenge(opening.nonce, server_nonce)
        keying = Keying(keys.key, FLAG_AUTH, self.codec.keying.sequences)
        return self.codec.encode(reply, now + self.wire_offset, keying)

    def expire(self, now: float, timeout: float) -> list[int]:
        """Close the sessions silent for longer than ``timeout`` and the handshakes that timed
        out; the stations forgotten (their state all dropped)."""
        silent = [s for s, state in self.sessions.items() if now - state.last_rx > timeout]
        for station in silent:
            del self.sessions[station]
        timed_out = [
            s
            for s, pending in self._pending.items()
            if now - pending.since > self.handshake_timeout
        ]
        for station in timed_out:
            del self._pending[station]
        # a station reopening keeps its place (and its open's stamp) while its handshake runs
        gone = sorted((set(silent) | set(timed_out)) - self.stations())
        for station in gone:
            self.forget(station)
        return gone

    def stations(self) -> set[int]:
        """The stations the robot keeps state for (a session or a handshake under way)."""
        return self.sessions.keys() | self._pending.keys()

    def forget(self, station: int) -> None:
        """Drop everything kept for ``station``; its newest open's stamp raises the floor
        (a listed station keeps it: the keys file bounds them)."""
        self.sessions.pop(station, None)
        self._pending.pop(station, None)
        if not self.keys.lists(station):
            stamp = self._open_stamps.pop(station, -1)
            self._open_floor = max(self._open_floor, stamp)
        self.forgotten.append(station)

    def _make_room(self, station: int, now: float) -> None:
        """Room for ``station``'s state: an idle station forgotten when every place is held;
        :class:`SessionError` (counted in ``refused_full``) when none is idle."""
        held = self.stations()
        if station in held or len(held) < self.max_stations:
            return
        idle = [
            (pending.since - self.handshake_timeout, s)
            for s, pending in self._pending.items()
            if s not in self.sessions and now - pending.since > self.handshake_timeout
        ] + [
            (state.last_rx, s)
            for s, state in self.sessions.items()
            if now - state.last_rx > self.idle_after and s not in self._pending
        ]
        for _, candidate in sorted(idle):
            if not self.keep(candidate):
                self.forget(candidate)
                return
        self.refused_full += 1
        raise SessionError(
            f"{len(held)} stations hold sessions (at most {self.max_stations}), none idle: "
            f"station {station} refused"
        )


class OperatorSessions(_SessionEnd):
    """The operator's end: its station key, one session with the robot, one handshake."""

    def __init__(
        self,
        codec: NativeCodec,
        *,
        nonce: NonceSource,
        max_age: float,
        budget: RefusalBudget,
        handshake_timeout: float,
    ) -> None:
        super().__init__(codec, max_age, budget)
        assert codec.key is not None
        self.station_key = codec.key
        self.draw = nonce
        self.handshake_timeout = handshake_timeout
        self.session: SessionState | None = None
        self._pending: tuple[bytes, float] | None = None  # client nonce, when sent
        self.last_open: float | None = None
        #: when the first session request the robot has not answered went out, and how many
        #: went out since (None, 0: the robot answered the last one)
        self.unanswered_since: float | None = None
        self.unanswered = 0
        #: the newest handshake's round trip (open sent to challenge in), and when it ended: the
        #: robot's first packet of the session comes that long after
        self.handshake_trip = 0.0
        self._opened_at = -math.inf

    def _decode(self, packet: bytes, header: Header, now: float) -> Message:
        if header.flags & FLAG_SESSION:
            session = self.session
            if session is None:
                raise SessionError("a session packet, and no session is open")
            self.codec.verify(packet, header, session.key)
            message = self.codec.payload(packet, header)
            session.check(header, now)
            self._answered()
            return message
        if header.code != TYPE_SESSION_CHALLENGE:
            raise SessionError(f"{header.message_type.__name__} outside a session")
        if self._pending is None:
            raise SessionError("a session challenge, and no handshake is pending")
        self.handshake_tags += 1
        self.codec.verify(packet, header, self.station_key)
        message = self.codec.payload(packet, header)
        assert isinstance(message, SessionChallenge)
        client_nonce, since = self._pending
        if message.client_nonce != client_nonce:
            raise SessionError("a challenge to another handshake (an old or replayed one)")
        if now - since > self.handshake_timeout:
            raise SessionError(f"challenge after {now - since:.3f} s, too late")
        self._pending = None
        self.handshake_trip, self._opened_at = now - since, now
        key = session_key(self.station_key, self.codec.sender, client_nonce, message.server_nonce)
        self.session = SessionState(
            header.sender, key, Permissions(), now, self.max_age, now - header.stamp
        )
        self.opened.append(self.session)
        self._answered()
        return message

    def _answered(self) -> None:
        self.unanswered_since = None
        self.unanswered = 0

    def open(self, now: float) -> bytes:
        """A ``SessionOpen`` with a fresh nonce (the newest one is the handshake pending)."""
        client_nonce = self.draw(NONCE_SIZE)
        self._pending = (client_nonce, now)
        self.last_open = now
        if self.unanswered_since is None:
            self.unanswered_since = now
        self.unanswered += 1
        return self.codec.encode(SessionOpen(client_nonce), now + self.wire_offset)

    def confirm(self, now: float) -> bytes:
        assert self.session is not None
        return self.codec.encode(SessionConfirm(), now + self.wire_offset, self.session.keying)

    def wants_open(self, now: float, reopen_after: float) -> bool:
        """No session, or a silent one, and no open sent within the retry spacing.

        A session just opened is silent only ``reopen_after`` beyond the handshake's round trip
        (the robot's first packet of it comes a round trip after the challenge). A retry sent
        before a challenge is back replaces the handshake it answers, so: on first contact
        each retry waits twice the one before, up to :data:`MAX_REOPEN_BACKOFF` times
        ``reopen_after`` (an 8 s round trip gets through); after a session, ``reopen_after``,
        then twice it, never under 1.5 times the last handshake's round trip."""
        session = self.session
        if session is None:
            silent = True
        else:
            quiet = reopen_after
            if session.last_rx <= self._opened_at:  # nothing yet since the challenge
                quiet += self.handshake_trip
            silent = now - session.last_rx > quiet
        if self._opened_at == -math.inf:  # first contact: its round trip unknown
            spacing = reopen_after * min(MAX_REOPEN_BACKOFF, 2 ** max(0, self.unanswered - 1))
        else:
            spacing = reopen_after * (2 if self.unanswered > 1 else 1)
            spacing = max(spacing, 1.5 * self.handshake_trip)
        return silent and (self.last_open is None or now - self.last_open >= spacing)
