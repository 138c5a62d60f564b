"""The autonomous task's phase and progress in telemetry on the native profile: round trips,
the old bytes without it, and a hostile peer's block refused and counted."""

from __future__ import annotations

import dataclasses
import hashlib
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.link import (
    ArmTelemetry,
    AutonomyTelemetry,
    LinkSession,
    NativeCodec,
    Refused,
    Telemetry,
    ValueRangeError,
    derive_key,
)
from freelook.types import TaskPhase

KEY = derive_key("autonomy test passphrase")


def _telemetry(autonomy: AutonomyTelemetry | None, arm: ArmTelemetry | None = None) -> Telemetry:
    return Telemetry(
        3.5, (1.0, 2.0, 0.5), (1.0, 2.0, 0.5), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        arm=arm, autonomy=autonomy,
    )  # fmt: skip


@settings(max_examples=50, deadline=None)
@given(
    st.sampled_from(TaskPhase),
    st.floats(0, 1, width=32),
    st.booleans(),
    st.integers(0, 0xFFFF),
    st.booleans(),
)
def test_telemetry_carries_the_task(
    phase: TaskPhase, progress: float, paused: bool, recoveries: int, with_arm: bool
) -> None:
    arm = ArmTelemetry((0.5, -0.25), (0.0, 0.125), 0.125, True, 1) if with_arm else None
    telemetry = _telemetry(AutonomyTelemetry(phase, progress, paused, recoveries), arm)
    sender, receiver = NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)
    assert receiver.decode(sender.encode(telemetry, 1.0)).message == telemetry


def test_telemetry_without_a_task_is_the_same_bytes_as_before() -> None:
    plain = NativeCodec(KEY, sender=1).encode(_telemetry(None), 1.0)
    task = NativeCodec(KEY, sender=1).encode(_telemetry(AutonomyTelemetry()), 1.0)
    assert len(task) - len(plain) == 8  # phase, flags, recoveries u16, progress f32


@pytest.mark.parametrize("progress", [math.nan, math.inf, -0.1, 1.5])
def test_a_progress_outside_0_to_1_is_not_sent(progress: float) -> None:
    with pytest.raises(ValueRangeError, match="progress"):
        NativeCodec(KEY, sender=1).encode(_telemetry(AutonomyTelemetry(progress=progress)), 1.0)


def _retag(body: bytes) -> bytes:
    return body + hashlib.blake2s(body, key=KEY, digest_size=16).digest()


@pytest.mark.parametrize(
    ("offset", "value", "why"),
    [
        (-8, 99, "TaskPhase"),  # no such phase
        (-7, 0x80, "autonomy flags"),
        (-4, None, "progress"),  # NaN progress
    ],
)
def test_a_lying_task_block_is_refused_and_counted(
    offset: int, value: int | None, why: str
) -> None:
    packet = NativeCodec(KEY, sender=1).encode(
        _telemetry(AutonomyTelemetry(TaskPhase.GRASP, 0.5)), 1.0
    )
    body = bytearray(packet[:-16])
    if value is None:
        body[offset:] = b"\x00\x00\xc0\x7f"  # float32 NaN
    else:
        body[offset] = value
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(_retag(bytes(body)), 1.0)
    assert isinstance(event, Refused)
    assert event.reason == "malformed"
    assert why in str(event.error)
    assert session.stats.refused == {"malformed": 1}


def test_a_truncated_task_block_is_refused() -> None:
    packet = NativeCodec(KEY, sender=1).encode(_telemetry(AutonomyTelemetry()), 1.0)
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(_retag(packet[:-16][:-3]), 1.0)
    assert isinstance(event, Refused)


def test_a_task_block_is_replaced_not_shared() -> None:
    a = AutonomyTelemetry(TaskPhase.DROP, 0.9)
    assert dataclasses.replace(a, paused=True) != a
