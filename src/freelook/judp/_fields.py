"""JAUS field encodings shared by every message: scaled integers, presence vectors, bounded
reads. An n-bit unsigned integer ``k`` stands for ``lower + k · (upper − lower) / (2ⁿ − 1)``;
encoding rounds to the nearest step and clamps to the range."""

from __future__ import annotations

import math
import struct
from dataclasses import dataclass
from enum import IntEnum
from typing import TypeVar

from freelook.judp._framing import JudpError

__all__ = [
    "ANGLE",
    "ANGLE_RMS",
    "EFFORT",
    "POSITION",
    "POSITION_RMS",
    "RATE",
    "RATE_RMS",
    "RESISTIVE",
    "TIMESTAMP",
    "VELOCITY",
    "VELOCITY_RMS",
    "Reader",
    "Scaled",
    "enum_value",
    "read_optional",
    "write_optional",
]


@dataclass(frozen=True, slots=True)
class Scaled:
    """A JAUS scaled integer: ``fmt`` (struct code), the real range it spans."""

    fmt: str
    lower: float
    upper: float

    @property
    def size(self) -> int:
        return struct.calcsize("<" + self.fmt)

    @property
    def steps(self) -> int:
        return (1 << (8 * self.size)) - 1

    def encode(self, value: float) -> int:
        if not math.isfinite(value):
            raise JudpError(f"cannot scale a non-finite value {value}")
        clamped = min(self.upper, max(self.lower, value))
        return round((clamped - self.lower) / (self.upper - self.lower) * self.steps)

    def decode(self, k: int) -> float:
        return self.lower + k * (self.upper - self.lower) / self.steps


_PI = math.pi
#: AS6009 field types (as in the JAUS Tool Set's mobility message set)
POSITION = Scaled("I", -100_000.0, 100_000.0)  # m
POSITION_RMS = Scaled("I", 0.0, 100.0)  # m
ANGLE = Scaled("H", -_PI, _PI)  # rad
ANGLE_RMS = Scaled("H", 0.0, _PI)  # rad
VELOCITY = Scaled("I", -327.68, 327.67)  # m/s
VELOCITY_RMS = Scaled("I", 0.0, 100.0)  # m/s
RATE = Scaled("H", -32.768, 32.767)  # rad/s
RATE_RMS = Scaled("H", 0.0, _PI)  # rad/s
EFFORT = Scaled("H", -100.0, 100.0)  # percent of maximum, propulsive
RESISTIVE = Scaled("B", 0.0, 100.0)  # percent of maximum, resistive
TIMESTAMP = "I"  # bit field: ms 0–9, s 10–15, min 16–21, h 22–26, day 27–31


class Reader:
    """Bounded reads from a body; running short raises :class:`JudpError`."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.at = 0

    def take(self, fmt: str) -> int:
        size = struct.calcsize("<" + fmt)
        if self.at + size > len(self.body):
            raise JudpError(f"body of {len(self.body)} bytes ends inside a field at {self.at}")
        (value,) = struct.unpack_from("<" + fmt, self.body, self.at)
        self.at += size
        return int(value)

    def done(self) -> None:
        if self.at != len(self.body):
            raise JudpError(f"{len(self.body) - self.at} bytes after the last field")


def read_optional(
    reader: Reader, presence: int, fields: tuple[Scaled | str, ...]
) -> list[float | int | None]:
    if presence >> len(fields):
        raise JudpError(f"presence vector {presence:#x} names fields this message lacks")
    out: list[float | int | None] = []
    for bit, field in enumerate(fields):
        if not presence >> bit & 1:
            out.append(None)
        elif isinstance(field, Scaled):
            out.append(field.decode(reader.take(field.fmt)))
        else:
            out.append(reader.take(field))
    return out


def write_optional(
    values: tuple[float | int | None, ...], fields: tuple[Scaled | str, ...], pv_fmt: str
) -> bytes:
    presence = sum(1 << i for i, v in enumerate(values) if v is not None)
    out = bytearray(struct.pack("<" + pv_fmt, presence))
    for value, field in zip(values, fields, strict=True):
        if value is None:
            continue
        if isinstance(field, Scaled):
            out += struct.pack("<" + field.fmt, field.encode(float(value)))
        else:
            out += struct.pack("<" + field, int(value))
    return bytes(out)


_E = TypeVar("_E", bound=IntEnum)


def enum_value(kind: type[_E], value: int) -> _E:
    try:
        return kind(value)
    except ValueError:
        raise JudpError(f"{kind.__name__} {value} is not defined") from None
