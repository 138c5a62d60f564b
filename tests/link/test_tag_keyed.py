"""The link's tag from a keyed state set up once per key is the keyed BLAKE2s of the data."""

from __future__ import annotations

import hashlib
import random

from freelook.link._auth import _MAX_KEYED, tag


def _fresh(key: bytes, data: bytes) -> bytes:
    return hashlib.blake2s(data, key=key, digest_size=16).digest()


def test_the_tag_is_the_keyed_blake2s_for_every_key_and_length() -> None:
    rng = random.Random(7)
    keys = [rng.randbytes(rng.randint(16, 32)) for _ in range(3 * _MAX_KEYED)]  # evicted too
    for round_ in range(2):  # the second round: keys set up, forgotten and set up again
        for key in keys:
            data = rng.randbytes(rng.randint(0, 1200))
            assert tag(key, data) == _fresh(key, data), round_
            assert tag(key, memoryview(data)) == _fresh(key, data)


def test_a_tag_leaves_the_keyed_state_as_it_was() -> None:
    key = bytes(range(32))
    first = tag(key, b"command one")
    tag(key, b"something else entirely")
    assert tag(key, b"command one") == first == _fresh(key, b"command one")
    assert tag(key, b"") == _fresh(key, b"")
