"""A decoded packet: the message plus what the link layer knows about it."""

from __future__ import annotations

from dataclasses import dataclass

from freelook.link._messages import Message

__all__ = ["Decoded"]


@dataclass(frozen=True, slots=True)
class Decoded:
    message: Message
    stamp: float  # the sender's time stamp, s
    size: int  # bytes on the wire
    sender: int = 0  # station id (native profile)
    stream: int = 0
    sequence: int | None = None  # None for the thesis profile, which has no sequence numbers
    #: when a command must no longer act, on the receiver's wire clock (s); None: no expiry
    expires: float | None = None
