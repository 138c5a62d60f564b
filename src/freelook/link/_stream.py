"""Finding packets in a byte stream (serial radios), for either profile. Sans-I/O.

Search the sync bytes, check the declared length before waiting for it, verify the checksum or
tag, and on any failure skip one byte and search again, so garbage or a false sync never costs
the next valid packet. The buffer is bounded by the profile's maximum packet size.
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
    """A decoded packet, a refused packet, or bytes that were not part of any packet."""

    kind: str  # "packet", "rejected" or "garbage"
    data: bytes
    decoded: Decoded | None = None
    reason: str = ""
    error: ProtocolError | None = None  # why a packet was refused


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
        self.max_buffer = 2 * codec.max_length
        self.stats = StreamStats()
        self._base = 0  # how many bytes of the stream came before the buffer's first
        #: where, counted from the stream's start, a later packet was looked for and was not
        #: one: each place is tried once, however often new bytes come (a stream dense with
        #: false syncs costs linear time, not a search of the whole buffer per read)
        self._not_packets: set[int] = set()

    def _drop(self, count: int) -> None:
        """Forget the buffer's first ``count`` bytes."""
        del self._buffer[:count]
        self._base += count
        if len(self._not_packets) > self.max_buffer:  # places behind the buffer: forget them
            self._not_packets = {p for p in self._not_packets if p >= self._base}

    def _garbage(self, events: list[DecodeEvent], count: int) -> None:
        if count <= 0:
            return
        chunk = bytes(self._buffer[:count])
        self._drop(count)
        self.stats.garbage_bytes += count
        if events and events[-1].kind == "garbage":
            events[-1] = DecodeEvent("garbage", events[-1].data + chunk)
        else:
            events.append(DecodeEvent("garbage", chunk))

    def _reject(self, events: list[DecodeEvent], length: int, err: ProtocolError) -> None:
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
            DecodeEvent("rejected", bytes(self._buffer[:length]), reason=str(err), error=err)
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
            if length < codec.min_length:
                self._not_packets.add(self._base + start)
                continue
            if len(buf) - start < length:
                continue  # not all here yet: tried again when more comes
            try:
                decoded = codec.decode(bytes(buf[start : start + length]))
            except Exception:  # not a packet (or a replay): keep looking
                self._not_packets.add(self._base + start)
                continue
            self._garbage(events, start)
            self.stats.packets += 1
            events.append(DecodeEvent("packet", bytes(buf[:length]), decoded))
            self._drop(length)
            return True

    def feed(self, data: bytes | bytearray | memoryview) -> list[DecodeEvent]:
        """Consume ``data``; never raises on content."""
        events: list[DecodeEvent] = []
        self._buffer += data
        codec = self.codec
        buf = self._buffer
        while True:
            if len(buf) > self.max_buffer:
                self._garbage(events, len(buf) - self.max_buffer)
            found = buf.find(codec.sync, codec.sync_offset)
            if found < 0:
                keep = codec.sync_offset + len(codec.sync) - 1
                self._garbage(events, len(buf) - keep)
                break
            self._garbage(events, found - codec.sync_offset)
            if len(buf) < self._header:
                break
            try:
                length = codec.frame_length(buf, 0)
            except FramingError:
                self._garbage(events, 1)
                continue
            if length < codec.min_length:
                self._garbage(events, 1)
                continue
            if len(buf) < length:
                # waiting for a long packet: if a complete valid packet already sits further
                # on, the bytes up to it were a false sync (a lull must not hide that packet)
                if self._skip_to_later_packet(events):
                    continue
                break
            try:
                decoded = codec.decode(bytes(buf[:length]))
            except ReplayError as err:
                self._reject(events, length, err)  # intact but replayed: drop it whole
                self._drop(length)
                continue
            except ProtocolError as err:
                # corrupted, forged or a false sync: skip one byte and search again
                self._reject(events, length, err)
                self._garbage(events, 1)
                continue
            except Exception as err:
                self._reject(events, length, ProtocolError(f"decoder failed: {err!r}"))
                self._garbage(events, 1)
                continue
            self.stats.packets += 1
            events.append(DecodeEvent("packet", bytes(buf[:length]), decoded))
            self._drop(length)
        return events
