"""One end of the link conversation, sans-I/O (in the manner of h11's ``Connection``).

A :class:`LinkSession` takes what a transport delivered with :meth:`LinkSession.receive` and
hands back events (a packet accepted, a packet refused and why: :mod:`._events`);
:meth:`LinkSession.send` returns the bytes for a message; :meth:`LinkSession.poll` returns what
is due at the session's transmission spacing (telemetry on the robot, the newest command or a
heartbeat and the control lease on the operator station). The caller owns the socket or serial
port and the clock: every method takes ``now`` in the caller's clock, so a lock-step runtime and
a real-time one drive the same session. Statistics, refusal classification, the transmission
controls of the thesis (start/stop, spacing) and the recording hook all live here, once, for both
ends.

Wire stamps are the caller's ``now`` plus ``wire_offset`` (a real-time driver passes the
wall-clock offset, so stamps compare across processes; lock-step runs pass 0).

Sessions (native profile, opt-in with ``role``): the operator end opens a session with a
challenge–response over its station key before anything else is accepted (``_handshake.py``);
the robot end keeps one per station, with the station's permissions from its :class:`KeyRing`.
``receive`` then also returns :class:`SessionOpened` (a station authenticated: its packets
are accepted and telemetry goes to it) and :class:`Reply` (handshake packets to send back to
where the packet came from); :meth:`LinkSession.send_to` and :meth:`LinkSession.poll_to` say
which station each packet is for. Without ``role`` the session speaks the one-key profile of
earlier versions.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import Literal

from freelook.errors import ProtocolError
from freelook.link._clock_sync import EXPIRING_COMMANDS, ClockEstimator, EchoSchedule, RoundTrips
from freelook.link._decoded import Decoded
from freelook.link._errors import rejection_reason
from freelook.link._events import (
    Accepted,
    LinkEvent,
    Outgoing,
    PacketHook,
    PacketRecord,
    Refused,
    Reply,
    SessionOpened,
    SessionStatus,
)
from freelook.link._handshake import (
    NonceSource,
    OperatorSessions,
    RefusalBudget,
    RobotSessions,
    SessionState,
)
from freelook.link._keys import KeyRing, Permissions
from freelook.link._messages import (
    ClockEcho,
    Message,
    SessionChallenge,
    SessionConfirm,
    SessionOpen,
    SetTransmission,
    SetTransmissionSpacing,
    VideoFrame,
)
from freelook.link._native import Keying, NativeCodec
from freelook.link._session_parts import StationStream, session_ends
from freelook.link._stats import LinkStatistics
from freelook.link._stream import StreamDecoder
from freelook.link._thesis import ThesisCodec

__all__ = ["SPACING_LIMITS", "LinkSession"]

SPACING_LIMITS = (0.005, 2.0)  # s: the transmission spacing a peer may ask for


class LinkSession:
    """The link as one end sees it: decode, verify, count, record; encode and schedule."""

    def __init__(
        self,
        codec: ThesisCodec | NativeCodec,
        *,
        framing: Literal["datagram", "stream"] = "datagram",
        spacing: float,
        periodic: Callable[[float], Sequence[Message]] = lambda now: (),
        transmitting: bool = True,
        obey_transmission_control: bool = False,
        wire_offset: float = 0.0,
        on_packet: PacketHook | None = None,
        role: Literal["robot", "operator"] | None = None,
        keys: KeyRing | None = None,
        nonce: bytes | NonceSource | None = None,
        max_age: float = 2.0,
        reopen_after: float = 1.0,
        session_timeout: float = 30.0,
        budget: RefusalBudget | None = None,
        unanswered_after: float = 2.5,
        max_stations: int = 16,
        command_lifetime: float | None = 0.5,
    ) -> None:
        """``periodic(now)`` gives the messages due at each transmission; ``obey_transmission
        _control`` lets the peer start, stop and space this end's transmissions (the robot).

        Sessions (native profile with a key): ``role`` "robot" accepts stations from ``keys``
        (default: the codec's key for any station) and draws its nonces from ``nonce`` (an
        ``os.urandom``-like callable, or bytes to seed a deterministic source in tests);
        "operator" opens a session with the codec's key as its station, again after
        ``reopen_after`` s without a packet from the robot. ``max_age``: how stale a packet
        may be inside a session; ``session_timeout``: the robot forgets a station silent that
        long; ``budget``: refused packets each source may send (token bucket);
        ``unanswered_after``: how long the operator's session requests go unanswered before
        `session_status` says so; ``max_stations``: how many stations the robot end keeps
        state for at once (``_handshake.py``; :attr:`on_forget` hears of each one dropped);
        ``command_lifetime``: with sessions, how long past its expected arrival a motion
        command may act (the operator stamps each with its expiry on the robot's clock, from
        :attr:`clock`; None: commands do not expire)."""
        self.codec = codec
        self.framing = framing
        self.spacing = spacing
        self.periodic = periodic
        self.transmitting = transmitting
        self.obey_transmission_control = obey_transmission_control
        self.wire_offset = wire_offset
        self.on_packet = on_packet
        self.stats = LinkStatistics()
        self.sent = 0
        self.role = role
        self.reopen_after = reopen_after
        self.session_timeout = session_timeout
        self.unanswered_after = unanswered_after
        self.command_lifetime = command_lifetime
        #: operator end: the robot's clock and the link's delays, from the robot's echoes
        self.clock = ClockEstimator()
        self._echoes = EchoSchedule()  # with sessions each end echoes the other's packets
        #: robot end: the round trips it measures from the stations' echoes of its packets
        self.round_trips = RoundTrips()
        self._robot: RobotSessions | None = None
        self._operator: OperatorSessions | None = None
        self._held: deque[tuple[Message, float]] = deque(maxlen=16)
        #: robot end with sessions: each station's own stream (a station starts, stops and
        #: spaces only what it receives itself: an observer cannot blind the driver)
        self._streams: dict[int, StationStream] = {}
        if role is not None:
            self._robot, self._operator = session_ends(
                role, codec, keys, nonce, max_age, budget, max_stations
            )
        #: robot end: called with each station whose state the link dropped (its session
        #: expired, or it was idle and another took its place), for the program to drop its own
        self.on_forget: Callable[[int], None] | None = None
        self._ends = self._robot or self._operator
        if self._ends is not None:
            self._ends.wire_offset = wire_offset
        decoder = self._ends if self._ends is not None else codec
        self._decode = decoder.decode
        self._stream = StreamDecoder(decoder) if framing == "stream" else None
        self._next_due: float | None = None
        # only the native profile stamps with a clock both ends share; the thesis's is a tick
        self._absolute_stamps = isinstance(codec, NativeCodec)

    # -- receiving ---------------------------------------------------------------------------

    @property
    def sessions(self) -> dict[int, Permissions]:
        """Open sessions: station → permissions (the robot end; the operator's one session
        is keyed by the robot's id)."""
        if self._robot is not None:
            return {s: state.permissions for s, state in self._robot.sessions.items()}
        if self._operator is not None and self._operator.session is not None:
            session = self._operator.session
            return {session.station: session.permissions}
        return {}

    def session_status(self, now: float) -> SessionStatus | None:
        """Where the operator end's session stands (None: this end opens no sessions)."""
        operator = self._operator
        if operator is None:
            return None
        since = operator.unanswered_since
        if since is None:
            return "open" if operator.session is not None else "opening"
        return "unanswered" if now - since >= self.unanswered_after else "opening"

    @property
    def unanswered_requests(self) -> int:
        """Session requests the robot has not answered since it last answered one."""
        return 0 if self._operator is None else self._operator.unanswered

    def keep_station(self, keep: Callable[[int], bool]) -> None:
        """Robot end: ``keep(station)`` says a station must not be forgotten for another
        (the robot program: the one holding control)."""
        if self._robot is not None:
            self._robot.keep = keep

    @property
    def stations_refused(self) -> int:
        """Robot end: verified session requests refused while every place was held."""
        return 0 if self._robot is None else self._robot.refused_full

    def _drop_forgotten(self) -> None:
        robot = self._robot
        if robot is None or not robot.forgotten:
            return
        gone, robot.forgotten = robot.forgotten, []
        for station in gone:
            self.stats.forget(station)
            self._streams.pop(station, None)
            self._echoes.forget(station)
            if self.on_forget is not None:
                self.on_forget(station)

    @property
    def start_nonce(self) -> bytes | None:
        """The nonce the robot end drew at start (every session of this start derives from it)."""
        return None if self._robot is None else self._robot.start_nonce

    def receive(self, data: bytes, now: float, source: object = None) -> list[LinkEvent]:
        """Everything ``data`` (a datagram, or any chunk of a byte stream) held. ``source``:
        where it came from (an address), for the budget of refused packets per source."""
        if self._ends is not None:
            self._ends.now = now
            self._ends.source = source
        events: list[LinkEvent] = []
        if self._stream is None:
            try:
                decoded = self._decode(data)
            except ProtocolError as err:
                events.append(self._refused(err, data, now, source))
            else:
                self._handle(decoded, data, now, events)
        else:
            for event in self._stream.feed(data):
                if event.decoded is not None:
                    self._handle(event.decoded, event.data, now, events)
                elif event.error is not None:
                    events.append(self._refused(event.error, event.data, now, source))
        self._drop_forgotten()
        return events

    def _handle(self, decoded: Decoded, data: bytes, now: float, events: list[LinkEvent]) -> None:
        if self._ends is None:
            events.append(self._accepted(decoded, data, now))
            return
        message = decoded.message
        opened = self._ends.opened
        if isinstance(message, SessionOpen) and self._robot is not None:
            # counted (outside the session's sequence numbers) and recorded like any packet
            self.stats.on_received(decoded.stream, None, None, now, decoded.sender)
            self._record(PacketRecord(data, decoded, True, "SessionOpen", now, now))
            challenge = self._robot.challenge(decoded.sender, message, decoded.stamp, now)
            self.stats.on_sent(now)
            self.sent += 1
            events.append(Reply((challenge,), decoded.sender, now))
            return
        if isinstance(message, (SessionOpen, SessionChallenge, SessionConfirm)):
            self._count(decoded, data, now)
            for state in opened:
                events.append(self._opened(state, now))
            opened.clear()
            if isinstance(message, SessionChallenge) and self._operator is not None:
                events.append(Reply(self._confirm_and_flush(now), decoded.sender, now))
            return
        for state in opened:  # a session opened by its first data packet
            events.append(self._opened(state, now))
        opened.clear()
        permissions = None
        if self._robot is not None:
            current = self._robot.sessions.get(decoded.sender)
            permissions = None if current is None else current.permissions
        events.append(self._accepted(decoded, data, now, permissions))

    def _opened(self, state: SessionState, now: float) -> SessionOpened:
        self.stats.forget(state.station)  # its sequence numbers start again
        trip = self._operator.handshake_trip if self._operator is not None else 0.0
        return SessionOpened(state.station, state.permissions, now, trip)

    def _confirm_and_flush(self, now: float) -> tuple[bytes, ...]:
        assert self._operator is not None
        packets = [self._operator.confirm(now)]
        held = [(m, t) for m, t in self._held if now - t <= self._operator.max_age]
        self._held.clear()
        for message, _ in held:
            packets.extend(out.data for out in self.send_to(message, now))
        self.stats.on_sent(now)
        self.sent += 1
        return tuple(packets)

    def _count(self, decoded: Decoded, data: bytes, now: float) -> None:
        sent = decoded.stamp - self.wire_offset
        self.stats.on_received(decoded.stream, decoded.sequence, sent, now, decoded.sender)
        kind = type(decoded.message).__name__
        self._record(PacketRecord(data, decoded, True, kind, sent, now))

    def _accepted(
        self, decoded: Decoded, data: bytes, now: float, permissions: Permissions | None = None
    ) -> Accepted:
        sent = decoded.stamp - self.wire_offset if self._absolute_stamps else None
        self.stats.on_received(decoded.stream, decoded.sequence, sent, now, decoded.sender)
        message = decoded.message
        arrival = now + self.wire_offset
        if self._ends is not None:
            self._echoes.saw(decoded.sender, decoded.stamp, arrival)
        if isinstance(message, ClockEcho) and self._robot is not None:
            self.round_trips.echoed(decoded.sender, message, decoded.stamp, arrival, now)
        elif isinstance(message, ClockEcho) and self._operator is not None:
            self.clock.add(message.sent, message.received, decoded.stamp, arrival)
        if self.obey_transmission_control and isinstance(
            message, SetTransmission | SetTransmissionSpacing
        ):
            self._transmission_control(message, decoded.sender)
        self._record(
            PacketRecord(
                data,
                decoded,
                True,
                type(message).__name__,
                now if sent is None else sent,
                now,
            )
        )
        return Accepted(decoded, data, now, permissions)

    def _transmission_control(
        self, message: SetTransmission | SetTransmissionSpacing, sender: int
    ) -> None:
        """The peer starts, stops or spaces this end's transmissions: with sessions, only the
        sending station's own stream; without (one operator), the whole transmission."""
        low, high = SPACING_LIMITS
        if self._robot is not None:
            stream = self._streams.get(sender)
            if stream is None:
                if sender not in self._robot.sessions:
                    return
                stream = self._streams[sender] = StationStream()
            if isinstance(message, SetTransmission):
                stream.transmitting = message.enabled
            else:
                stream.spacing = min(high, max(low, message.spacing))
        elif isinstance(message, SetTransmission):
            self.transmitting = message.enabled
        else:
            self.spacing = min(high, max(low, message.spacing))

    def streaming(self, station: int) -> bool:
        """Whether ``station``'s own stream is on (robot end with sessions)."""
        stream = self._streams.get(station)
        return stream is None or stream.transmitting

    def _refused(
        self, err: ProtocolError, data: bytes, now: float, source: object = None
    ) -> Refused:
        reason = rejection_reason(err)
        self.stats.on_rejected(reason, now)
        self._record(PacketRecord(data, None, False, reason, now, now))
        return Refused(reason, err, data, now, source)

    def _record(self, record: PacketRecord) -> None:
        if self.on_packet is not None:
            self.on_packet(record)

    # -- sending -----------------------------------------------------------------------------

    def send(self, message: Message, now: float) -> list[bytes]:
        """The packets carrying ``message`` (several for a video frame; none when this profile
        cannot carry it, as the thesis profile cannot carry Free Look commands, or when a
        number in it is out of range). With sessions: one copy per open session (robot), or
        held until the session opens (operator); :meth:`send_to` says for which station."""
        return [out.data for out in self.send_to(message, now)]

    def _keyings(self) -> list[tuple[int | None, Keying | None]]:
        if self._robot is not None:
            return [(s, state.keying) for s, state in self._robot.sessions.items()]
        if self._operator is not None:
            session = self._operator.session
            return [] if session is None else [(session.station, session.keying)]
        return [(None, None)]

    def send_to(
        self, message: Message, now: float, stations: Sequence[int] | None = None
    ) -> list[Outgoing]:
        """The packets carrying ``message``, each with the station it is for (robot end:
        only ``stations`` when given; video only to stations whose stream is on)."""
        if self._operator is not None and self._operator.session is None:
            self._held.append((message, now))  # sent when the session opens
            return []
        stamp = now + self.wire_offset
        expires = self._expiry(message, stamp)
        if self._robot is not None:
            self.round_trips.sent(stamp)
        out: list[Outgoing] = []
        video = isinstance(message, VideoFrame)
        for station, keying in self._keyings():
            if station is not None and self._robot is not None:
                if stations is not None and station not in stations:
                    continue
                if video and not self.streaming(station):
                    continue
            try:
                if isinstance(message, VideoFrame):
                    if not isinstance(self.codec, NativeCodec):
                        return []
                    packets = self.codec.encode_video(message, stamp, keying)
                elif isinstance(self.codec, NativeCodec):
                    packets = [self.codec.encode(message, stamp, keying, expires=expires)]
                else:
                    packets = [self.codec.encode(message, stamp)]
            except ProtocolError:
                return []
            out.extend(Outgoing(packet, station) for packet in packets)
        for _ in out:
            self.stats.on_sent(now)
        self.sent += len(out)
        return out

    def _expiry(self, message: Message, stamp: float) -> float | None:
        """When a motion command must stop acting, on the robot's clock: its expected arrival
        (half the shortest round trip) plus the lifetime; None before the clock is known."""
        offset, trip = self.clock.offset, self.clock.min_round_trip
        if (
            self._operator is None
            or self.command_lifetime is None
            or offset is None
            or trip is None
            or type(message) not in EXPIRING_COMMANDS
        ):
            return None
        return stamp + offset + trip / 2 + self.command_lifetime

    def poll(self, now: float) -> list[bytes]:
        """The periodic transmission, when one is due (at most one per call)."""
        return [out.data for out in self.poll_to(now)]

    def poll_to(self, now: float) -> list[Outgoing]:
        """:meth:`poll`, each packet with the station it is for."""
        if self._robot is not None:
            return self._poll_stations(now)
        if self._next_due is None:
            self._next_due = now
        if now < self._next_due:
            return []
        # a spacing after this one; a spacing after now when this end fell behind (no burst)
        self._next_due += self.spacing
        if self._next_due <= now:
            self._next_due = now + self.spacing
        packets: list[Outgoing] = []
        if self._operator is not None and self._operator.wants_open(now, self.reopen_after):
            packets.append(Outgoing(self._operator.open(now)))
            self.stats.on_sent(now)
            self.sent += 1
        if not self.transmitting or not self._keyings():
            return packets
        for message in self.periodic(now):
            packets.extend(self.send_to(message, now))
        if self._operator is not None and self._operator.session is not None:
            echo = self._echoes.due(self._operator.session.station, now + self.wire_offset)
            if echo is not None:  # the robot's own measure of the round trip
                packets.extend(self.send_to(echo, now))
        return packets

    def _poll_stations(self, now: float) -> list[Outgoing]:
        """The robot end with sessions: each station's transmission at its own spacing."""
        assert self._robot is not None
        self._robot.expire(now, self.session_timeout)
        self._drop_forgotten()
        sessions = self._robot.sessions
        for gone in self._streams.keys() - sessions.keys():
            del self._streams[gone]  # a session that ended takes its stream's settings along
        due = []
        for station in sessions:
            stream = self._streams.setdefault(station, StationStream())
            spacing = stream.spacing or self.spacing
            if stream.next_due is None:
                stream.next_due = now
            if now < stream.next_due:
                continue
            # a spacing after this one; a spacing after now when it fell behind (no burst)
            stream.next_due += spacing
            if stream.next_due <= now:
                stream.next_due = now + spacing
            if stream.transmitting:
                due.append(station)
        if not due or not self.transmitting:
            return []
        packets: list[Outgoing] = []
        for message in self.periodic(now):
            packets.extend(self.send_to(message, now, due))
        for station in due:
            echo = self._echoes.due(station, now + self.wire_offset)
            if echo is not None:
                packets.extend(self.send_to(echo, now, [station]))
        return packets

    def next_due(self, now: float) -> float:
        """When :meth:`poll` next has something to do (for a driver's sleep)."""
        if self._robot is not None:
            dues = [s.next_due for s in self._streams.values() if s.next_due is not None]
            return min(dues, default=now + self.spacing)
        return now if self._next_due is None else self._next_due
