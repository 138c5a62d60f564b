"""One end of the link conversation, sans-I/O (in the manner of h11's ``Connection``).

A :class:`LinkSession` takes what a transport delivered with :meth:`LinkSession.receive` and
hands back events (a packet accepted, a packet refused and why); :meth:`LinkSession.send`
returns the bytes for a message; :meth:`LinkSession.poll` returns what is due at the session's
transmission spacing (telemetry on the robot, the newest command or a heartbeat and the control
lease on the operator station). The caller owns the socket or serial port and the clock: every
method takes ``now`` in the caller's clock, so a lock-step runtime and a real-time one drive the
same session. Statistics, refusal classification, the transmission controls of the thesis
(start/stop, spacing) and the recording hook all live here, once, for both ends.

Wire stamps are the caller's ``now`` plus ``wire_offset`` (a real-time driver passes the
wall-clock offset, so stamps compare across processes; lock-step runs pass 0).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

from freelook.errors import ProtocolError
from freelook.link._decoded import Decoded
from freelook.link._errors import rejection_reason
from freelook.link._messages import (
    Message,
    SetTransmission,
    SetTransmissionSpacing,
    VideoFrame,
)
from freelook.link._native import NativeCodec
from freelook.link._stats import LinkStatistics
from freelook.link._stream import StreamDecoder
from freelook.link._thesis import ThesisCodec

__all__ = [
    "SPACING_LIMITS",
    "Accepted",
    "LinkEvent",
    "LinkSession",
    "PacketRecord",
    "Refused",
]

SPACING_LIMITS = (0.005, 2.0)  # s: the transmission spacing a peer may ask for


@dataclass(frozen=True, slots=True)
class Accepted:
    """A packet that decoded, verified and was not a replay."""

    decoded: Decoded
    data: bytes
    now: float

    @property
    def message(self) -> Message:
        return self.decoded.message


@dataclass(frozen=True, slots=True)
class Refused:
    """A packet dropped: ``reason`` is crc, auth, replay or malformed."""

    reason: str
    error: ProtocolError
    data: bytes
    now: float


LinkEvent = Accepted | Refused


@dataclass(frozen=True, slots=True)
class PacketRecord:
    """One received packet as a recording keeps it."""

    data: bytes
    decoded: Decoded | None
    accepted: bool
    kind: str  # the message type, or why it was refused
    send_time: float  # the sender's stamp in this end's clock (receive time when refused)
    receive_time: float


class PacketHook(Protocol):
    def __call__(self, record: PacketRecord) -> None: ...


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
    ) -> None:
        """``periodic(now)`` gives the messages due at each transmission; ``obey_transmission
        _control`` lets the peer start, stop and space this end's transmissions (the robot)."""
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
        self._stream = StreamDecoder(codec) if framing == "stream" else None
        self._next_due: float | None = None
        # only the native profile stamps with a clock both ends share; the thesis's is a tick
        self._absolute_stamps = isinstance(codec, NativeCodec)

    # -- receiving ---------------------------------------------------------------------------

    def receive(self, data: bytes, now: float) -> list[LinkEvent]:
        """Everything ``data`` (a datagram, or any chunk of a byte stream) held."""
        if self._stream is None:
            try:
                decoded = self.codec.decode(data)
            except ProtocolError as err:
                return [self._refused(err, data, now)]
            return [self._accepted(decoded, data, now)]
        events: list[LinkEvent] = []
        for event in self._stream.feed(data):
            if event.decoded is not None:
                events.append(self._accepted(event.decoded, event.data, now))
            elif event.error is not None:
                events.append(self._refused(event.error, event.data, now))
        return events

    def _accepted(self, decoded: Decoded, data: bytes, now: float) -> Accepted:
        sent = decoded.stamp - self.wire_offset if self._absolute_stamps else None
        self.stats.on_received(decoded.stream, decoded.sequence, sent, now, decoded.sender)
        message = decoded.message
        if self.obey_transmission_control:
            if isinstance(message, SetTransmission):
                self.transmitting = message.enabled
            elif isinstance(message, SetTransmissionSpacing):
                low, high = SPACING_LIMITS
                self.spacing = min(high, max(low, message.spacing))
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
        return Accepted(decoded, data, now)

    def _refused(self, err: ProtocolError, data: bytes, now: float) -> Refused:
        reason = rejection_reason(err)
        self.stats.on_rejected(reason, now)
        self._record(PacketRecord(data, None, False, reason, now, now))
        return Refused(reason, err, data, now)

    def _record(self, record: PacketRecord) -> None:
        if self.on_packet is not None:
            self.on_packet(record)

    # -- sending -----------------------------------------------------------------------------

    def send(self, message: Message, now: float) -> list[bytes]:
        """The packets carrying ``message`` (several for a video frame; none when this profile
        cannot carry it, as the thesis profile cannot carry Free Look commands)."""
        stamp = now + self.wire_offset
        try:
            if isinstance(message, VideoFrame):
                if not isinstance(self.codec, NativeCodec):
                    return []
                packets = self.codec.encode_video(message, stamp)
            else:
                packets = [self.codec.encode(message, stamp)]
        except ProtocolError:
            return []
        for _ in packets:
            self.stats.on_sent(now)
        self.sent += len(packets)
        return packets

    def poll(self, now: float) -> list[bytes]:
        """The periodic transmission, when one is due (at most one per call)."""
        if self._next_due is None:
            self._next_due = now
        if now < self._next_due:
            return []
        # a spacing after this one; a spacing after now when this end fell behind (no burst)
        self._next_due += self.spacing
        if self._next_due <= now:
            self._next_due = now + self.spacing
        if not self.transmitting:
            return []
        packets: list[bytes] = []
        for message in self.periodic(now):
            packets.extend(self.send(message, now))
        return packets

    def next_due(self, now: float) -> float:
        """When :meth:`poll` next has something to do (for a driver's sleep)."""
        return now if self._next_due is None else self._next_due
