"""Packet authentication: a keyed BLAKE2s tag and a replay window per sender and stream.

In the spirit of MAVLink 2 signing: every packet carries a 16-byte tag over header and
payload, a sequence number per (sender, stream) and the sender's time stamp. The receiver
keeps, per (sender, stream), the highest sequence seen and a 64-packet bitmap, and per sender
the newest time stamp: a duplicate, a sequence older than the window, or a packet stamped more
than ``max_age`` before the newest one from that sender is a replay. A sender that restarts
(its sequence goes back to 0) is recognised by a time stamp newer than anything seen.
"""

from __future__ import annotations

import hashlib
import hmac
import os

from freelook.errors import ConfigError
from freelook.link._errors import ReplayError

__all__ = ["KEY_ENV", "TAG_SIZE", "ReplayWindow", "derive_key", "key_from_env", "tag"]

TAG_SIZE = 16
KEY_ENV = "FREELOOK_LINK_KEY"
WINDOW = 64


def derive_key(secret: str) -> bytes:
    """32-byte key: 64 hex digits are used as they are, any other text is hashed (SHA-256)."""
    text = secret.strip()
    if not text:
        raise ConfigError("link key is empty")
    if len(text) == 64:
        try:
            return bytes.fromhex(text)
        except ValueError:
            pass
    return hashlib.sha256(("freelook-link-key:" + text).encode()).digest()


def key_from_env(environ: dict[str, str] | None = None) -> bytes | None:
    """The key from ``FREELOOK_LINK_KEY``, or None when it is not set."""
    env = os.environ if environ is None else environ
    value = env.get(KEY_ENV)
    return None if value is None else derive_key(value)


def tag(key: bytes, data: bytes | memoryview) -> bytes:
    """Keyed BLAKE2s tag of ``data``, truncated to 16 bytes."""
    return hashlib.blake2s(data, key=key, digest_size=TAG_SIZE).digest()


def tags_equal(a: bytes, b: bytes) -> bool:
    return hmac.compare_digest(a, b)


class ReplayWindow:
    """Accepts each (sender, stream, sequence) once, within a window, with fresh stamps."""

    def __init__(self, max_age: float = 2.0) -> None:
        self.max_age = max_age
        self._highest: dict[tuple[int, int], int] = {}
        self._seen: dict[tuple[int, int], int] = {}  # bitmap: bit k = highest − k seen
        self._newest_stamp: dict[int, float] = {}

    def check(self, sender: int, stream: int, sequence: int, stamp: float) -> None:
        """Raise :class:`ReplayError` if this packet must be refused; otherwise record it."""
        newest = self._newest_stamp.get(sender)
        if newest is not None and stamp < newest - self.max_age:
            raise ReplayError(
                f"stamp {stamp:.3f} s is {newest - stamp:.3f} s older than the newest from "
                f"station {sender} (limit {self.max_age} s)"
            )
        key = (sender, stream)
        highest = self._highest.get(key)
        restarted = (
            newest is not None
            and stamp > newest + 1.0
            and highest is not None
            and sequence < highest - WINDOW
        )
        if highest is None or restarted:
            self._highest[key] = sequence
            self._seen[key] = 1
        elif sequence > highest:
            shift = sequence - highest
            self._seen[key] = (
                ((self._seen[key] << shift) | 1) & ((1 << WINDOW) - 1) if shift < WINDOW else 1
            )
            self._highest[key] = sequence
        else:
            offset = highest - sequence
            if offset >= WINDOW:
                raise ReplayError(
                    f"sequence {sequence} is older than the window (highest {highest})"
                )
            if self._seen[key] >> offset & 1:
                raise ReplayError(f"sequence {sequence} from station {sender} already seen")
            self._seen[key] |= 1 << offset
        if newest is None or stamp > newest:
            self._newest_stamp[sender] = stamp
