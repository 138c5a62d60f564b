"""Hostile inputs drawn from a seed: random bytes and valid inputs mutated (bits flipped,
cut short, lengthened, bytes overwritten, spliced). The fuzz tests and the attack campaign
draw from the same generator, so what the tests prove and what the campaign tries are one
family of inputs."""

from __future__ import annotations

import random
from collections.abc import Sequence

__all__ = ["Mutator", "flip_bits"]


def flip_bits(data: bytes, draw: random.Random, most: int = 4) -> bytes:
    """``data`` with 1 to ``most`` distinct bits flipped (so it really differs)."""
    out = bytearray(data)
    for bit in draw.sample(range(8 * len(out)), min(len(out) * 8, draw.randint(1, most))):
        out[bit // 8] ^= 1 << (bit % 8)
    return bytes(out)


class Mutator:
    """Seeded hostile variants of a pool of valid inputs (packets, files, frames)."""

    KINDS = ("random", "flip", "truncate", "extend", "overwrite", "splice", "replay")

    def __init__(self, valid: Sequence[bytes], seed: int, max_size: int = 1400) -> None:
        if not valid:
            raise ValueError("a mutator needs at least one valid input")
        self.valid = list(valid)
        self.draw = random.Random(seed)
        self.max_size = max_size

    def random_bytes(self) -> bytes:
        return self.draw.randbytes(self.draw.randint(1, self.max_size))

    def one(self, kind: str | None = None) -> tuple[str, bytes]:
        """One hostile input and the kind of mutation that made it."""
        draw = self.draw
        kind = kind or draw.choice(self.KINDS)
        base = draw.choice(self.valid)
        if kind == "random" or not base:
            return "random", self.random_bytes()
        if kind == "flip":
            return kind, flip_bits(base, draw)
        if kind == "truncate":
            return kind, base[: draw.randrange(len(base))]
        if kind == "extend":
            return kind, base + draw.randbytes(draw.randint(1, 64))
        if kind == "overwrite":
            out = bytearray(base)
            for _ in range(draw.randint(1, 8)):
                out[draw.randrange(len(out))] = draw.choice(
                    (0, 0xFF, 0x7F, 0x80, draw.randrange(256))
                )
            return kind, bytes(out)
        if kind == "splice":
            other = draw.choice(self.valid)
            cut = draw.randrange(len(base) + 1)
            return kind, base[:cut] + other[draw.randrange(len(other) + 1) :]
        return "replay", base

    def many(self, count: int, kinds: Sequence[str] | None = None) -> list[tuple[str, bytes]]:
        return [self.one(self.draw.choice(kinds) if kinds else None) for _ in range(count)]
