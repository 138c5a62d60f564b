"""The delay rule's speed cap in telemetry on the native profile: round trips beside the task
and the arm blocks, the old bytes without it, and a hostile peer's cap refused."""

from __future__ import annotations

import hashlib
import math
import struct

import pytest

from freelook.errors import ProtocolError
from freelook.link import ArmTelemetry, AutonomyTelemetry, NativeCodec, Telemetry, derive_key

KEY = derive_key("speed cap test passphrase")


def _telemetry(
    cap: tuple[float, float] | None,
    autonomy: AutonomyTelemetry | None = None,
    arm: ArmTelemetry | None = None,
) -> Telemetry:
    return Telemetry(
        3.5, (1.0, 2.0, 0.5), (1.0, 2.0, 0.5), 0.25, 0.0, 0.25, 0.0, 0.0, 0.0,
        arm=arm, autonomy=autonomy, speed_cap=cap,
    )  # fmt: skip


@pytest.mark.parametrize("with_task", [False, True])
@pytest.mark.parametrize("with_arm", [False, True])
def test_telemetry_carries_the_cap(with_task: bool, with_arm: bool) -> None:
    arm = ArmTelemetry((0.5, -0.25), (0.0, 0.125), 0.125, True, 1) if with_arm else None
    task = AutonomyTelemetry() if with_task else None
    telemetry = _telemetry((0.421875, 0.8125), task, arm)  # exact in f32
    sender, receiver = NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)
    assert receiver.decode(sender.encode(telemetry, 1.0)).message == telemetry


def test_telemetry_without_a_cap_is_the_same_bytes_as_before() -> None:
    plain = NativeCodec(KEY, sender=1).encode(_telemetry(None), 1.0)
    capped = NativeCodec(KEY, sender=1).encode(_telemetry((0.5, 0.5)), 1.0)
    assert len(capped) - len(plain) == 8  # cap f32, round trip f32
    assert NativeCodec(KEY, sender=2).decode(plain).message.speed_cap is None


def _retag(body: bytes) -> bytes:
    return body + hashlib.blake2s(body, key=KEY, digest_size=16).digest()


@pytest.mark.parametrize(
    "cap", [(math.nan, 0.5), (0.5, math.inf), (-0.1, 0.5), (0.5, -1.0), (math.inf, 0.1)]
)
def test_a_cap_that_cannot_be_one_is_refused(cap: tuple[float, float]) -> None:
    packet = NativeCodec(KEY, sender=1).encode(_telemetry((0.5, 0.5)), 1.0)
    body = packet[:-16]
    lying = _retag(body[:-8] + struct.pack("<ff", *cap))
    with pytest.raises(ProtocolError, match="speed cap"):
        NativeCodec(KEY, sender=2).decode(lying)


def test_a_truncated_cap_is_refused() -> None:
    packet = NativeCodec(KEY, sender=1).encode(_telemetry((0.5, 0.5)), 1.0)
    body = packet[:-16]
    length = struct.unpack_from("<H", body, 20)[0]
    short = body[:20] + struct.pack("<H", length - 4) + body[22:-4]
    with pytest.raises(ProtocolError, match="speed cap"):
        NativeCodec(KEY, sender=2).decode(_retag(short))
