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
import logging
import math
import os
import re
import secrets

from freelook.errors import ConfigError
from freelook.link._errors import ReplayError

__all__ = [
    "KEY_ENV",
    "MIN_KEY_BITS",
    "SALT_SIZE",
    "TAG_SIZE",
    "ReplayWindow",
    "derive_key",
    "key_bits",
    "key_from_env",
    "link_key",
    "new_salt",
    "parse_salt",
    "split_salt",
    "strong_key",
    "tag",
]

TAG_SIZE = 16
KEY_ENV = "FREELOOK_LINK_KEY"
WINDOW = 64


#: the least entropy a user's key may have (bits), unless the user accepts a weaker one
MIN_KEY_BITS = 128
#: scrypt's cost for a passphrase: 16 MiB and tens of milliseconds a guess, on every guess
_SCRYPT = {"n": 1 << 14, "r": 8, "p": 1, "maxmem": 64 << 20, "dklen": 32}
#: the salt of a passphrase given without one (every such install shares it)
_SALT = b"freelook-link-key"
#: bytes of an install's own salt: 32 hex digits in a keys file or before a passphrase
SALT_SIZE = 16
_SALTED = re.compile(r"([0-9A-Fa-f]{32}):(.*)", re.DOTALL)
_SALT_TEXT = re.compile(r"[0-9A-Fa-f]{32}")
_log = logging.getLogger(__name__)


def new_salt() -> str:
    """A random salt for an install's passphrases: 32 hex digits."""
    return secrets.token_hex(SALT_SIZE)


def parse_salt(text: str, what: str = "salt") -> bytes:
    """The salt ``text`` spells (exactly 32 hex digits); :class:`ConfigError` otherwise."""
    if not _SALT_TEXT.fullmatch(text):
        raise ConfigError(
            f"{what} {text[:40]!r}: expected {2 * SALT_SIZE} hex digits (freelook keys salt)"
        )
    return bytes.fromhex(text)


def split_salt(secret: str) -> tuple[bytes | None, str]:
    """``SALT:passphrase`` (32 hex digits, a colon, the passphrase) → (salt, passphrase);
    any other key → (None, the key); either without the whitespace around it."""
    text = secret.strip()
    found = _SALTED.fullmatch(text)
    if found is None:
        return None, text
    return bytes.fromhex(found.group(1)), found.group(2).strip()


def derive_key(secret: str, salt: bytes | None = None) -> bytes:
    """32-byte key: 64 hex digits are used as they are (a random key, as ``freelook keys new``
    writes); any other text is a passphrase, stretched with scrypt so that every offline guess
    at it costs memory and tens of milliseconds. The scrypt salt is the install's: the one
    written before the passphrase (``SALT:passphrase``), else ``salt`` (a keys file's), else
    the one salt of unsalted passphrases (one dictionary covers them all)."""
    own, text = split_salt(secret)
    if not text.strip():
        raise ConfigError("link key is empty")
    if own is None and _hex_key(text):
        return bytes.fromhex(text)
    chosen = own if own is not None else salt
    if chosen is None:
        chosen = _SALT
    elif len(chosen) != SALT_SIZE:
        raise ConfigError(f"salt of {len(chosen)} bytes: expected {SALT_SIZE}")
    return hashlib.scrypt(text.encode(), salt=chosen, **_SCRYPT)


#: the most a key can carry: it becomes (or is) 32 bytes
_KEY_BITS_CAP = 256.0


def _alphabet_bits(text: str) -> float:
    """log2 of the alphabet ``text``'s character classes span (lower and upper case, digits,
    other printable ASCII, anything else): what one unguessable character of it is worth."""
    alphabet = (
        26 * any("a" <= c <= "z" for c in text)
        + 26 * any("A" <= c <= "Z" for c in text)
        + 10 * any("0" <= c <= "9" for c in text)
        + 33 * any(c.isascii() and not c.isalnum() for c in text)
        + 1000 * any(not c.isascii() for c in text)
    )
    return math.log2(max(alphabet, 2))


def key_bits(secret: str) -> float:
    """An estimate of a key's entropy in bits, at most 256. zxcvbn (Dropbox's estimator)
    splits the key into what a cracker would try: words, names, keyboard walks, dates,
    repeats ("password" four times, 64 zeros) and sequences ("0123…") count as the guesses
    they take; the stretches between them count as random characters of the key's alphabet
    (zxcvbn itself assumes ten guesses a character there, which would refuse a random
    32-character token). A 64-hex-digit key from ``freelook keys new`` rates 256."""
    from zxcvbn import zxcvbn  # imported here: its dictionaries only when a key is checked

    text = split_salt(secret)[1]  # the salt is written beside the key: no secret
    if not text:
        return 0.0
    per_char = _alphabet_bits(text)
    bits = 0.0
    for match in zxcvbn(text, max_length=len(text))["sequence"]:
        if match["pattern"] == "bruteforce":
            bits += len(match["token"]) * per_char
        else:
            bits += math.log2(max(float(match["guesses"]), 1.0))
    return min(bits, _KEY_BITS_CAP)


def strong_key(
    secret: str, *, allow_weak: bool = False, what: str = "link key", salt: bytes | None = None
) -> bytes:
    """:func:`derive_key` for a key a user gave (``salt``: its keys file's); one of under
    :data:`MIN_KEY_BITS` bits is refused (:class:`ConfigError`) unless ``allow_weak``."""
    bits = key_bits(secret)
    if bits < MIN_KEY_BITS and not allow_weak:
        raise ConfigError(
            f"{what} has at most {bits:.0f} bits of entropy, {MIN_KEY_BITS} needed: make one "
            "with `freelook keys new` (or accept a weak key with --weak-key)"
        )
    own, text = split_salt(secret)
    if own is None and salt is None and not _hex_key(text):
        _log.warning(
            "%s is a passphrase without a salt: one precomputed dictionary covers every "
            "install so keyed; give it as SALT:passphrase (freelook keys salt)",
            what,
        )
    return derive_key(secret, salt)


def _hex_key(text: str) -> bool:
    try:
        return len(text) == 64 and len(bytes.fromhex(text)) == 32
    except ValueError:
        return False


def key_from_env(
    environ: dict[str, str] | None = None, *, allow_weak: bool = False
) -> bytes | None:
    """The key from ``FREELOOK_LINK_KEY`` (checked as :func:`strong_key`), or None when it is
    not set."""
    env = os.environ if environ is None else environ
    value = env.get(KEY_ENV)
    return None if value is None else strong_key(value, allow_weak=allow_weak, what=KEY_ENV)


def link_key(given: str | None, *, allow_weak: bool = False) -> bytes | None:
    """The key a user gave (``--key``), else ``FREELOOK_LINK_KEY``, checked as
    :func:`strong_key`; None when neither is given."""
    if given:
        return strong_key(given, allow_weak=allow_weak, what="--key")
    return key_from_env(allow_weak=allow_weak)


#: a BLAKE2s state set up with each key, copied for every tag: keying it costs more than
#: hashing a command's packet (0.58 us a tag from scratch, 0.24 from a copy); the link's keys
#: are few (its own, a session's each), and past the bound the oldest is forgotten
_KEYED: dict[bytes, hashlib.blake2s] = {}
_MAX_KEYED = 64


def tag(key: bytes, data: bytes | memoryview) -> bytes:
    """Keyed BLAKE2s tag of ``data``, truncated to 16 bytes."""
    keyed = _KEYED.get(key)
    if keyed is None:
        keyed = hashlib.blake2s(key=key, digest_size=TAG_SIZE)
        if len(_KEYED) >= _MAX_KEYED:
            del _KEYED[next(iter(_KEYED))]
        _KEYED[key] = keyed
    state = keyed.copy()
    state.update(data)
    return state.digest()


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
