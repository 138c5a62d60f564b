"""Finding packets in a byte stream (serial radios, a capture of one), for either profile.
Sans-I/O.

The stream is read packet by packet from its start: search the sync bytes, check the declared
length before waiting for it, verify the checksum or tag, and on any failure skip one byte and
search again, so garbage or a false sync never costs the next valid packet. Bytes are taken
from a feed :data:`CHUNK` at a time, whatever its size, and what stays buffered between feeds
is always less than one packet of the profile's maximum size (a header waiting for the rest of
its packet): a whole capture fed at once is decoded as if it had come in a radio's reads.
:meth:`StreamDecoder.finish` says the stream ended, so what is left over is counted too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from freelook.errors import ProtocolError
from freelook.link._decoded import Decoded
from freelook.link._errors import (
    AuthenticationError,
    ChecksumError,
    FramingError,
    ReplayError,
)

__all__ = ["Codec", "DecodeEvent", "StreamDecoder", "StreamStats"]

#: bytes of a feed scanned at a time (what a feed adds to the buffer before it is searched)
CHUNK = 64 * 1024


class Codec(Protocol):
    name: str
    sync: bytes
    sync_offset: int
    min_length: int
    max_length: int

    def frame_length(self, buffer: bytes | bytearray, start: int) -> int: ...

    def decode(self, data: bytes | bytearray | memoryview) -> Decoded: ...


@dataclass(frozen=True, slots=True)
class DecodeEvent:
    """A decoded packet, a refused packet, or bytes that were not part of any packet.

    ``offset``: where in the stream (bytes from its first) the event's bytes start. A refused
    packet's bytes are searched again from its second byte on (a false sync may hide a
    packet), so they come again as garbage or packets; only a replay, intact, is dropped
    whole. Packets, garbage and replays tile the stream. ``reason``: why a packet was refused,
    or, for garbage left at the end of the stream, that it was a packet cut off."""

    kind: str  # "packet", "rejected" or "garbage"
    data: bytes
    decoded: Decoded | None = None
    reason: str = ""
    error: ProtocolError | None = None  # why a packet was refused
    offset: int = 0


@dataclass
class StreamStats:
    packets: int = 0
    garbage_bytes: int = 0
    crc_failures: int = 0
    auth_failures: int = 0
    replays: int = 0
    malformed: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)


class StreamDecoder:
    """Feed bytes as they arrive; get back events in order."""

    def __init__(self, codec: Codec) -> None:
        self.codec = codec
        self._buffer = bytearray()
        self._header = max(codec.sync_offset + len(codec.sync), getattr(codec, "header_size", 0))
        #: the most a feed leaves buffered (less than one packet of the largest size)
        self.max_buffer = codec.max_length
        self.stats = StreamStats()
        self._base = 0  # how many bytes of the stream came before the buffer's first
        #: where, counted from the stream's start, a later packet was looked for and was not
        #: one: each place is tried once, however often new bytes come (a stream dense with
        #: false syncs costs linear time, not a search of the whole buffer per read)
        self._not_packets: set[int] = set()
        #: garbage not yet handed out as an event: consecutive garbage is one event, and
        #: gathering it here costs linear time however many pieces it comes in
        self._pending = bytearray()
        self._pending_at = 0

    def _drop(self, count: int) -> None:
        """Forget the buffer's first ``count`` bytes."""
        del self._buffer[:count]
        self._base += count
        if len(self._not_packets) > 2 * self.max_buffer:  # places behind the buffer: forget
            self._not_packets = {p for p in self._not_packets if p >= self._base}

    def _garbage(self, count: int) -> None:
        if count <= 0:
            return
        if not self._pending:
            self._pending_at = self._base
        self._pending += self._buffer[:count]
        self._drop(count)
        self.stats.garbage_bytes += count

    def _flush(self, events: list[DecodeEvent], reason: str = "") -> None:
        """The garbage gathered so far as one event."""
        if self._pending:
            events.append(
                DecodeEvent("garbage", bytes(self._pending), reason=reason, offset=self._pending_at)
            )
            self._pending.clear()

    def _packet(self, events: list[DecodeEvent], length: int, decoded: Decoded) -> None:
        self._flush(events)
        self.stats.packets += 1
        events.append(
            DecodeEvent("packet", bytes(self._buffer[:length]), decoded, offset=self._base)
        )
        self._drop(length)

    def _reject(self, events: list[DecodeEvent], length: int, err: ProtocolError) -> None:
        self._flush(events)
        name = type(err).__name__
        self.stats.by_reason[name] = self.stats.by_reason.get(name, 0) + 1
        if isinstance(err, ChecksumError):
            self.stats.crc_failures += 1
        elif isinstance(err, AuthenticationError):
            self.stats.auth_failures += 1
        elif isinstance(err, ReplayError):
            self.stats.replays += 1
        else:
            self.stats.malformed += 1
        events.append(
            DecodeEvent(
                "rejected",
                bytes(self._buffer[:length]),
                reason=str(err),
                error=err,
                offset=self._base,
            )
        )

    def _skip_to_later_packet(self, events: list[DecodeEvent]) -> bool:
        codec = self.codec
        buf = self._buffer
        search = codec.sync_offset + 1
        while True:
            found = buf.find(codec.sync, search)
            if found < 0:
                return False
            start = found - codec.sync_offset
            search = found + 1
            if len(buf) - start < self._header:
                return False
            if self._base + start in self._not_packets:
                continue
            try:
                length = codec.frame_length(buf, start)
            except FramingError:
                self._not_packets.add(self._base + start)
                continue
            if not codec.min_length <= length <= codec.max_length:
                self._not_packets.add(self._base + start)
                continue
            if len(buf) - start < length:
                continue  # not all here yet: tried again when more comes
            try:
                decoded = codec.decode(bytes(buf[start : start + length]))
            except Exception:  # not a packet (or a replay): keep looking
                self._not_packets.add(self._base + start)
                continue
            self._garbage(start)
            self._packet(events, length, decoded)
            return True

    def feed(self, data: bytes | bytearray | memoryview) -> list[DecodeEvent]:
        """Consume ``data`` (any amount: a radio's read or a whole capture); never raises on
        content."""
        events: list[DecodeEvent] = []
        view = memoryview(data).cast("B")
        for start in range(0, len(view), CHUNK):
            self._buffer += view[start : start + CHUNK]
            self._scan(events, final=False)
        self._flush(events)
        return events

    def finish(self) -> list[DecodeEvent]:
        """The stream ended: what is left in the buffer (a packet cut off, or bytes that only
        began one) is garbage, searched once more for a packet; the decoder is then empty and
        can take a new stream's bytes."""
        events: list[DecodeEvent] = []
        cut = self._cut_off()
        self._scan(events, final=True)
        self._flush(events, cut)
        return events

    def _cut_off(self) -> str:
        """What the buffer's bytes are, said of the garbage they become at the stream's end."""
        buf = self._buffer
        if not buf:
            return ""
        codec = self.codec
        start = buf.find(codec.sync)
        if start != codec.sync_offset:
            return ""
        if len(buf) < self._header:
            return f"a header cut off after {len(buf)} bytes at the end of the stream"
        try:
            length = codec.frame_length(buf, 0)
        except FramingError:
            return ""
        return f"a packet of {length} bytes cut off after {len(buf)} at the end of the stream"

    def _scan(self, events: list[DecodeEvent], *, final: bool) -> None:
        """Decode what the buffer holds; ``final``: nothing more will come."""
        codec = self.codec
        buf = self._buffer
        while buf:
            found = buf.find(codec.sync, codec.sync_offset)
            if found < 0:
                keep = 0 if final else codec.sync_offset + len(codec.sync) - 1
                self._garbage(len(buf) - keep)
                return
            self._garbage(found - codec.sync_offset)
            if len(buf) < self._header:
                if not final:
                    return
                self._garbage(1)  # a header that never came whole
                continue
            try:
                length = codec.frame_length(buf, 0)
            except FramingError:
                self._garbage(1)
                continue
            if not codec.min_length <= length <= codec.max_length:
                self._garbage(1)
                continue
            if len(buf) < length:
                # waiting for a long packet: if a complete valid packet already sits further
                # on, the bytes up to it were a false sync (a lull must not hide that packet)
                if self._skip_to_later_packet(events):
                    continue
                if not final:
                    return
                self._garbage(1)  # the rest never came: a false sync, or a packet cut off
                continue
            try:
                decoded = codec.decode(bytes(buf[:length]))
            except ReplayError as err:
                self._reject(events, length, err)  # intact but replayed: drop it whole
                self._drop(length)
                continue
            except ProtocolError as err:
                # corrupted, forged or a false sync: skip one byte and search again
                self._reject(events, length, err)
                self._garbage(1)
                continue
            except Exception as err:
                self._reject(events, length, ProtocolError(f"decoder failed: {err!r}"))
                self._garbage(1)
                continue
            self._packet(events, length, decoded)
