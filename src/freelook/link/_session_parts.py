"""The parts a :class:`~freelook.link.LinkSession` is built from: the session ends of each
role (``_handshake.py``) and what each station asked of its own stream (robot end)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from freelook.errors import ConfigError
from freelook.link._handshake import (
    HANDSHAKE_TIMEOUT,
    NonceSource,
    OperatorSessions,
    RefusalBudget,
    RobotSessions,
    nonce_source,
)
from freelook.link._keys import KeyRing
from freelook.link._native import NativeCodec
from freelook.link._thesis import ThesisCodec

__all__ = ["StationStream", "session_ends"]


@dataclass(slots=True)
class StationStream:
    """What one station asked of its own stream (robot end): on or off, and its spacing
    (None: the session's); when its next transmission is due."""

    transmitting: bool = True
    spacing: float | None = None
    next_due: float | None = None


def session_ends(
    role: Literal["robot", "operator"],
    codec: ThesisCodec | NativeCodec,
    keys: KeyRing | None,
    nonce: bytes | NonceSource | None,
    max_age: float,
    budget: RefusalBudget | None,
    max_stations: int,
) -> tuple[RobotSessions | None, OperatorSessions | None]:
    """The sessions of the robot end (one per station of ``keys``, or of the codec's key for
    any station) or of the operator end; a clear error unless the codec is native with a key."""
    if not isinstance(codec, NativeCodec) or codec.key is None:
        raise ConfigError("link sessions need the native profile with a key")
    source = nonce_source(nonce)
    spent = budget or RefusalBudget()
    if role == "robot":
        ring = keys if keys is not None else KeyRing.single(codec.key)
        robot = RobotSessions(
            codec,
            ring,
            nonce=source,
            max_age=max_age,
            budget=spent,
            handshake_timeout=max(max_age, HANDSHAKE_TIMEOUT),
            max_stations=max_stations,
        )
        return robot, None
    operator = OperatorSessions(
        codec,
        nonce=source,
        max_age=max_age,
        budget=spent,
        handshake_timeout=max(max_age, HANDSHAKE_TIMEOUT),
    )
    return None, operator
