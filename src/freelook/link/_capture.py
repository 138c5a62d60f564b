"""Reading a capture of the native profile with a station's key (``freelook link decode``).

A capture of a radio holds both ends' packets. Those tagged with the station key (the
handshake's ``SessionOpen`` and ``SessionChallenge``, and the one-key profile's packets)
verify with it directly. Packets of a session (flag bit 1) are tagged with the session's key,
which the station key alone does not give: both ends derive it from the station key, the
station's id and the two nonces of the handshake (``_handshake.py``). So :class:`CaptureCodec`
keeps the handshakes it reads and derives each session's key from them:

- a ``SessionOpen`` gives the client nonce and the station (its sender);
- the ``SessionChallenge`` answering it gives the server nonce: with both, the session's key;
- a challenge whose open the capture does not hold (a capture of the robot's side only) lacks
  the station: it is the sender of the session's first packet from the operator, or one of
  the senders seen, or, failing those, found by trying every station id on a packet from the
  robot that answered (65,535 derivations, a third of a second; at most
  :data:`MAX_SEARCHES` packets per handshake).

A session whose handshake is not in the capture (a capture begun mid-session) cannot be read:
its packets are refused, saying so. A packet seen twice is refused as a replay: a session's by
its sequence window, as either end would; one tagged with the station key when its bytes were
seen before (a sender's sequence numbers start again at each of its starts, which a capture
may span). Sans-I/O: bytes in, :class:`Decoded` out.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field

from freelook.link._auth import TAG_SIZE, ReplayWindow, tag, tags_equal
from freelook.link._decoded import Decoded
from freelook.link._errors import AuthenticationError, ReplayError, SessionError
from freelook.link._handshake import session_key
from freelook.link._messages import SessionChallenge, SessionOpen
from freelook.link._native import FLAG_AUTH, FLAG_SESSION, Header, NativeCodec

__all__ = ["CaptureCodec", "CaptureSession"]

#: handshakes and sessions a capture decoder keeps, and tags of packets tagged with the
#: station key (the oldest are forgotten)
MAX_HANDSHAKES = 1024
MAX_TAGS = 65536
#: the station ids a session's key is tried with when the capture does not say the station,
#: and how many of the robot's packets one handshake is tried on with all of them
_STATIONS = range(1, 0x10000)
MAX_SEARCHES = 4


@dataclass(slots=True)
class CaptureSession:
    """One handshake read from a capture: its nonces, the robot that answered, and once the
    station is known, the session's key."""

    client_nonce: bytes
    server_nonce: bytes
    robot: int  # the challenge's sender
    station: int | None = None  # the open's sender, when known
    key: bytes | None = None
    searches: int = 0  # times every station id was tried for it
    replay: ReplayWindow = field(default_factory=ReplayWindow)


class CaptureCodec:
    """Decodes a native capture's packets, both directions, with the station ``key``: the
    packets tagged with it, and those of every session whose handshake the capture holds.
    Without a key, only unauthenticated packets (CRC-32) decode. A codec for
    :class:`~freelook.link.StreamDecoder` (it has the native codec's framing)."""

    name = "native"
    sync = NativeCodec.sync
    sync_offset = NativeCodec.sync_offset
    min_length = NativeCodec.min_length
    max_length = NativeCodec.max_length
    header_size = NativeCodec.header_size
    frame_length = staticmethod(NativeCodec.frame_length)

    def __init__(self, key: bytes | None, *, max_age: float = 2.0) -> None:
        self.key = key
        self.max_age = max_age
        self._tags: dict[bytes, None] = {}  # the station-key packets' tags seen, in order
        self._opens: dict[bytes, int] = {}  # client nonce → station, from SessionOpens
        self.sessions: deque[CaptureSession] = deque(maxlen=MAX_HANDSHAKES)
        self._senders: dict[int, None] = {}  # every sender seen, in order (station candidates)

    @property
    def keys_derived(self) -> int:
        """How many sessions' keys the capture's handshakes gave."""
        return sum(1 for s in self.sessions if s.key is not None)

    @staticmethod
    def checked(packet: bytes) -> str:
        """What verified a packet this codec decoded: a session's key, the station key, or
        (unauthenticated) a CRC-32."""
        flags = packet[3]
        if flags & FLAG_SESSION:
            return "session tag ok"
        return "tag ok" if flags & FLAG_AUTH else "CRC-32 ok, not authenticated"

    def decode(self, data: bytes | bytearray | memoryview) -> Decoded:
        """Verify and decode one packet; raises a ProtocolError subclass when it is refused."""
        packet = bytes(data)
        header = NativeCodec.parse(packet)
        if header.flags & FLAG_SESSION and self.key is not None:
            session = self._session(packet, header)
            message = NativeCodec.payload(packet, header)
            session.replay.check(header.sender, header.stream, header.sequence, header.stamp)
        else:
            if header.flags & FLAG_AUTH and self.key is None:
                raise AuthenticationError(
                    "an authenticated packet: give the key it was made with (--key)"
                )
            NativeCodec.verify(packet, header, self.key)
            message = NativeCodec.payload(packet, header)
            if self.key is not None:
                self._once(packet[-TAG_SIZE:], header)
            if isinstance(message, SessionOpen):
                self._opens[message.nonce] = header.sender
                if len(self._opens) > MAX_HANDSHAKES:
                    del self._opens[next(iter(self._opens))]
            elif isinstance(message, SessionChallenge):
                self._challenge(message, header.sender)
        self._senders[header.sender] = None
        if len(self._senders) > MAX_HANDSHAKES:
            del self._senders[next(iter(self._senders))]
        return header.decoded(message, len(packet))

    def _once(self, packet_tag: bytes, header: Header) -> None:
        """Refuse a packet tagged with the station key that was seen before, byte for byte
        (its sequence numbers start again with each start of its sender, which a capture
        spans: a robot's restart is no replay)."""
        if packet_tag in self._tags:
            raise ReplayError(
                f"{header.message_type.__name__} from station {header.sender}, seq "
                f"{header.sequence}: seen before in the capture"
            )
        self._tags[packet_tag] = None
        if len(self._tags) > MAX_TAGS:
            del self._tags[next(iter(self._tags))]

    def _challenge(self, challenge: SessionChallenge, robot: int) -> None:
        assert self.key is not None
        session = CaptureSession(
            challenge.client_nonce,
            challenge.server_nonce,
            robot,
            replay=ReplayWindow(self.max_age),
        )
        station = self._opens.get(challenge.client_nonce)
        if station is not None:
            self._know(session, station)
        self.sessions.appendleft(session)

    def _know(self, session: CaptureSession, station: int) -> None:
        assert self.key is not None
        session.station = station
        session.key = session_key(self.key, station, session.client_nonce, session.server_nonce)

    def _session(self, packet: bytes, header: Header) -> CaptureSession:
        """The session whose key verifies ``packet`` (moved to the front: the next packet is
        most likely of the same one)."""
        body, tail = packet[:-TAG_SIZE], packet[-TAG_SIZE:]
        found = self._verified(body, tail)
        if found is None:
            found = self._station_found(header, body, tail)
        if found is None:
            raise SessionError(
                f"a session packet from station {header.sender} that no handshake in the "
                "capture gives the key of (a capture begun mid-session, or another key)"
            )
        self.sessions.remove(found)
        self.sessions.appendleft(found)
        return found

    def _verified(self, body: bytes, tail: bytes) -> CaptureSession | None:
        for session in self.sessions:
            if session.key is not None and tags_equal(tag(session.key, body), tail):
                return session
        return None

    def _station_found(self, header: Header, body: bytes, tail: bytes) -> CaptureSession | None:
        """A handshake without its open, completed by the station the packet verifies with:
        its sender (a packet from the operator), a sender seen, or for a packet from the
        robot that answered the handshake, any station id (a bounded number of times per
        handshake: a packet of another session costs a search and finds nothing)."""
        assert self.key is not None
        unknown = [s for s in self.sessions if s.key is None]
        candidates = dict.fromkeys([header.sender, *self._senders])
        for session in unknown:
            for station in candidates:
                if self._verifies(session, station, body, tail):
                    return session
        for session in unknown:
            if session.robot != header.sender or session.searches >= MAX_SEARCHES:
                continue
            session.searches += 1
            for station in _STATIONS:
                if self._verifies(session, station, body, tail):
                    return session
        return None

    def _verifies(self, session: CaptureSession, station: int, body: bytes, tail: bytes) -> bool:
        """Whether the packet is tagged with ``session``'s key for ``station`` (if so, the
        session is known from now on)."""
        assert self.key is not None
        key = session_key(self.key, station, session.client_nonce, session.server_nonce)
        if not tags_equal(tag(key, body), tail):
            return False
        session.station, session.key = station, key
        return True
