"""ModeRefusal (native type 32): the robot says which mode it did not enter and why; round
trips, and what a hostile or broken packet of it is refused for."""

from __future__ import annotations

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from freelook.link import (
    MAX_REASON_BYTES,
    MalformedError,
    Mode,
    ModeRefusal,
    NativeCodec,
    ThesisCodec,
    UnknownTypeError,
    ValueRangeError,
    derive_key,
)

KEY = derive_key("mode refusal tests")
printable = st.text(
    st.characters(blacklist_categories=("Cc", "Cs")), max_size=MAX_REASON_BYTES // 4
)


def codecs() -> tuple[NativeCodec, NativeCodec]:
    return NativeCodec(KEY, sender=100), NativeCodec(KEY, sender=1)


@given(st.integers(0, 65535), st.sampled_from(Mode), printable, st.booleans())
def test_a_refusal_round_trips(station: int, mode: Mode, reason: str, standing: bool) -> None:
    robot, operator = codecs()
    refusal = ModeRefusal(station, mode, reason, standing)
    assert operator.decode(robot.encode(refusal, 1.0)).message == refusal


def test_the_reason_is_bounded_and_printable() -> None:
    robot, _ = codecs()
    robot.encode(ModeRefusal(1, Mode.FREE_LOOK, "x" * MAX_REASON_BYTES), 1.0)
    with pytest.raises(ValueRangeError, match="reason of 121 bytes, at most 120"):
        robot.encode(ModeRefusal(1, Mode.FREE_LOOK, "x" * (MAX_REASON_BYTES + 1)), 1.0)
    with pytest.raises(ValueRangeError, match="control characters"):
        robot.encode(ModeRefusal(1, Mode.FREE_LOOK, "red \x1b[31m"), 1.0)


@pytest.mark.parametrize(
    ("payload", "why"),
    [
        (struct.pack("<HBBB", 1, 42, 0, 0), "unknown mode"),
        (struct.pack("<HBBB", 1, 3, 2, 0), "flags"),
        (struct.pack("<HBBB", 1, 3, 0, 5) + b"ab", "reason of 5 bytes"),
        (struct.pack("<HBBB", 1, 3, 0, 2) + b"\xff\xfe", "not UTF-8"),
        (struct.pack("<HB", 1, 3), "shorter than its head"),
    ],
)
def test_a_malformed_refusal_is_refused(payload: bytes, why: str) -> None:
    from freelook.link._native_payloads import TYPES

    decode = TYPES[32][3]
    with pytest.raises(MalformedError, match=why):
        decode(payload)


def test_the_thesis_profile_carries_no_refusal() -> None:
    with pytest.raises(UnknownTypeError):
        ThesisCodec().encode(ModeRefusal(1, Mode.FREE_LOOK, "no pan joint"), 1.0)
