"""freelook's native link profile: versioned, sequenced, authenticated (docs/protocol.md).

A packet is a fixed header (``_native_header.py``), a payload (``_native_payloads.py``, the type
table; ``_native_telemetry.py``) and a trailer: a 16-byte keyed BLAKE2s tag, or without a key a
CRC-32, which detects corruption but not forgery; that mode must be asked for explicitly. This
module puts them together and authenticates them.

Decoding runs in stages, cheapest first, so a flood costs little: :meth:`NativeCodec.parse`
(length, sync, version, flags, declared length, known type, stream: no cryptography),
:meth:`NativeCodec.verify` (the tag), :meth:`NativeCodec.payload` (the message, every number
checked against its field's range).
"""

from __future__ import annotations

import math
import struct
import zlib
from dataclasses import dataclass, field

from freelook.errors import ConfigError
from freelook.link._auth import TAG_SIZE, ReplayWindow, tag, tags_equal
from freelook.link._decoded import Decoded
from freelook.link._errors import (
    AuthenticationError,
    ChecksumError,
    MalformedError,
    SessionError,
    UnknownTypeError,
    ValueRangeError,
)
from freelook.link._messages import Message, VideoFrame
from freelook.link._native_header import (
    EXPIRY,
    FLAG_AUTH,
    FLAG_EXPIRES,
    FLAG_SESSION,
    HEADER,
    HEADER_SIZE,
    MAX_DATAGRAM,
    MAX_PACKET,
    SYNC,
    VERSION,
    Header,
    frame_length,
    read_header,
)
from freelook.link._native_payloads import (
    CODE,
    FRAGMENT,
    TYPE_SESSION_CHALLENGE,
    TYPE_SESSION_CONFIRM,
    TYPE_SESSION_OPEN,
    TYPE_VIDEO_FRAGMENT,
    TYPES,
    Stream,
    pack_frame_head,
)
from freelook.link._values import check_values

__all__ = [
    "FLAG_AUTH",
    "FLAG_EXPIRES",
    "FLAG_SESSION",
    "MAX_DATAGRAM",
    "MAX_PACKET",
    "TYPE_SESSION_CHALLENGE",
    "TYPE_SESSION_CONFIRM",
    "TYPE_SESSION_OPEN",
    "Header",
    "Keying",
    "NativeCodec",
    "Stream",
]

MAX_FRAME_BYTES = 4 * 1024 * 1024


@dataclass(slots=True)
class Keying:
    """How one sender tags its packets: the key, the flags, and its sequence per stream.

    A codec has one of its own (its key); a session end has one per session.
    """

    key: bytes | None
    flags: int
    sequences: dict[int, int] = field(default_factory=dict)


class NativeCodec:
    """Encoder/decoder of the native profile for one station.

    ``key`` authenticates every packet; without one, ``allow_unauthenticated=True`` must be
    given explicitly (a CRC-32 then only detects corruption). Sequence numbers are kept per
    stream for what this station sends; the replay window covers what it receives.
    """

    name = "native"
    sync = SYNC
    sync_offset = 0
    min_length = HEADER_SIZE + 4
    max_length = MAX_PACKET

    def __init__(
        self,
        key: bytes | None,
        *,
        sender: int = 1,
        allow_unauthenticated: bool = False,
        max_age: float = 2.0,
    ) -> None:
        if key is None and not allow_unauthenticated:
            raise ConfigError(
                "the native link needs a key (config or FREELOOK_LINK_KEY); pass "
                "allow_unauthenticated=True only to run without authentication on purpose"
            )
        if key is not None and len(key) < 16:
            raise ConfigError(f"link key of {len(key)} bytes is too short (at least 16)")
        if not 0 < sender <= 0xFFFF:
            raise ConfigError(f"station id {sender} outside 1…65535")
        self.key = key
        self.sender = sender
        self.replay = ReplayWindow(max_age)
        self.keying = Keying(key, FLAG_AUTH if key is not None else 0)

    def _packet(
        self,
        code: int,
        stream: int,
        payload: bytes,
        stamp: float,
        keying: Keying,
        expires: float | None = None,
    ) -> bytes:
        flags = keying.flags
        if expires is not None:
            self._stamp_ok(expires)
            payload += EXPIRY.pack(int(expires * 1e6))
            flags |= FLAG_EXPIRES
        if len(payload) > MAX_PACKET - HEADER_SIZE - TAG_SIZE:
            raise MalformedError(f"payload of {len(payload)} bytes exceeds the packet limit")
        seq = keying.sequences.get(stream, 0)
        keying.sequences[stream] = (seq + 1) & 0xFFFFFFFF
        stamp_us = max(0, min(0xFFFFFFFFFFFFFFFF, int(stamp * 1e6)))
        body = (
            HEADER.pack(
                SYNC, VERSION, flags, code, stream, self.sender, seq, stamp_us, len(payload)
            )
            + payload
        )
        if keying.key is not None:
            return body + tag(keying.key, body)
        return body + struct.pack("<I", zlib.crc32(body))

    @staticmethod
    def _stamp_ok(stamp: float) -> None:
        if not 0.0 <= stamp < 1.8e13:  # NaN fails too; u64 microseconds
            raise ValueRangeError(f"stamp {stamp!r} s is not a time the header can carry")

    def encode(
        self,
        message: Message,
        stamp: float,
        keying: Keying | None = None,
        *,
        expires: float | None = None,
    ) -> bytes:
        """One packet for ``message`` (video frames: use :meth:`encode_video`), tagged with
        ``keying`` (default: this codec's key). ``expires``: the time on the receiver's clock
        (s) after which a control-stream message must not act. A number out of its field's
        range (NaN, ±inf included) raises :class:`ValueRangeError`: nothing is sent."""
        if isinstance(message, VideoFrame):
            raise MalformedError("video frames are sent as fragments: use encode_video()")
        code = CODE.get(type(message))
        if code is None:
            raise UnknownTypeError(f"the native profile has no {type(message).__name__}")
        self._stamp_ok(stamp)
        check_values(message, encoding=True)
        _, stream, encoder, _ = TYPES[code]
        if expires is not None and stream != Stream.CONTROL:
            raise MalformedError(f"{type(message).__name__} cannot expire (not a command)")
        return self._packet(code, stream, encoder(message), stamp, keying or self.keying, expires)

    def encode_video(
        self, frame: VideoFrame, stamp: float, keying: Keying | None = None
    ) -> list[bytes]:
        """Datagrams of at most 1200 bytes that carry one frame."""
        self._stamp_ok(stamp)
        check_values(frame, encoding=True)
        blob = pack_frame_head(frame) + frame.data
        if len(blob) > MAX_FRAME_BYTES:
            raise MalformedError(f"frame of {len(blob)} bytes exceeds {MAX_FRAME_BYTES}")
        room = MAX_DATAGRAM - HEADER_SIZE - TAG_SIZE - FRAGMENT.size
        count = max(1, math.ceil(len(blob) / room))
        if count > 0xFFFF:
            raise MalformedError("frame needs too many fragments")
        frame_id = frame.frame_id & 0xFFFFFFFF
        return [
            self._packet(
                TYPE_VIDEO_FRAGMENT,
                Stream.VIDEO,
                FRAGMENT.pack(frame_id, i, count, frame.stream) + blob[i * room : (i + 1) * room],
                stamp,
                keying or self.keying,
            )
            for i in range(count)
        ]

    # the header's stages (``_native_header.py``), as the stream decoder and the sessions
    # reach them through the codec
    header_size = HEADER_SIZE
    frame_length = staticmethod(frame_length)
    parse = staticmethod(read_header)

    @staticmethod
    def verify(packet: bytes, header: Header, key: bytes | None) -> None:
        """Check the tag with ``key`` (or, without a key, the CRC-32 of a plain packet)."""
        authenticated = bool(header.flags & FLAG_AUTH)
        trailer = TAG_SIZE if authenticated else 4
        body, tail = packet[:-trailer], packet[-trailer:]
        if key is not None:
            if not authenticated:
                raise AuthenticationError("unauthenticated packet refused (a key is set)")
            if not tags_equal(tag(key, body), tail):
                raise AuthenticationError(
                    f"tag does not verify (station {header.sender}, seq {header.sequence})"
                )
        else:
            if authenticated:
                raise AuthenticationError("authenticated packet but no key to verify it")
            if struct.unpack("<I", tail)[0] != zlib.crc32(body):
                raise ChecksumError("CRC-32 does not match")

    @staticmethod
    def payload(packet: bytes, header: Header) -> Message:
        """The message a verified packet carries, every number checked against its range."""
        cls, _, _, decoder = TYPES[header.code]
        try:
            message = decoder(packet[HEADER_SIZE : HEADER_SIZE + header.length])
        except struct.error as err:
            raise MalformedError(f"{cls.__name__}: {err}") from None
        check_values(message)
        return message

    def decode(self, data: bytes | bytearray | memoryview) -> Decoded:
        """Verify and decode one packet; raises a ProtocolError subclass when it is refused.

        This is the one-key profile without sessions: packets tagged with a session key are
        refused (a :class:`LinkSession` with a ``role`` decodes those)."""
        packet = bytes(data)
        header = self.parse(packet)
        if header.flags & FLAG_SESSION:
            raise SessionError("a session packet, and this end has no sessions")
        self.verify(packet, header, self.key)
        message = self.payload(packet, header)
        stamp = header.stamp
        if self.key is not None:
            self.replay.check(header.sender, header.stream, header.sequence, stamp)
        return header.decoded(message, len(packet))
