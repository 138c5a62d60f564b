"""What a :class:`~freelook.link.LinkSession` hands back: the events of a received packet
(accepted, refused, a session opened, a reply to send), the packets it wants sent, and the
record a recording keeps of each received packet."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from freelook.errors import ProtocolError
from freelook.link._decoded import Decoded
from freelook.link._keys import Permissions
from freelook.link._messages import Message

__all__ = [
    "Accepted",
    "LinkEvent",
    "Outgoing",
    "PacketHook",
    "PacketRecord",
    "Refused",
    "Reply",
    "SessionOpened",
    "SessionStatus",
]

#: Where the operator end's session stands: "open" (the robot answers), "opening" (a request
#: is out, not yet long), "unanswered" (requests have gone unanswered for ``unanswered_after``
#: s: a wrong key or station id, or no robot at that address).
SessionStatus = Literal["open", "opening", "unanswered"]


@dataclass(frozen=True, slots=True)
class Accepted:
    """A packet that decoded, verified and was not a replay.

    ``permissions``: what the sending station may do (robot end with sessions; None without
    sessions or on the operator end, where the robot sent it)."""

    decoded: Decoded
    data: bytes
    now: float
    permissions: Permissions | None = None

    @property
    def message(self) -> Message:
        return self.decoded.message

    @property
    def station(self) -> int:
        """The sender's station id (0 for the thesis profile, which has none)."""
        return self.decoded.sender


@dataclass(frozen=True, slots=True)
class Refused:
    """A packet dropped: ``reason`` is crc, auth, session, replay, rate, value or malformed;
    ``source``: where it came from, as the transport named it (None when it cannot say)."""

    reason: str
    error: ProtocolError
    data: bytes
    now: float
    source: object = None


@dataclass(frozen=True, slots=True)
class SessionOpened:
    """A session with ``station`` is open: the packet that opened it came from a source that
    holds the station's key (a driver answers that source from now on). ``trip``: at the
    operator's end, the handshake's round trip (the robot's first packet of the session comes
    that long after); 0 at the robot's."""

    station: int
    permissions: Permissions
    now: float
    trip: float = 0.0


@dataclass(frozen=True, slots=True)
class Reply:
    """Packets to send back to the source of the packet just received (handshake answers and
    what was held until the session opened)."""

    packets: tuple[bytes, ...]
    station: int
    now: float


LinkEvent = Accepted | Refused | SessionOpened | Reply


@dataclass(frozen=True, slots=True)
class Outgoing:
    """A packet to send, and the station it is for (None: the one peer there is)."""

    data: bytes
    station: int | None = None


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
