"""The impaired channel and the link statistics: intact messages, measured loss, arbitration."""

from __future__ import annotations

import math

import pytest

from freelook.errors import ProtocolError
from freelook.link import (
    ControlArbiter,
    ImpairedChannel,
    Impairments,
    LinkStatistics,
    NativeCodec,
    ReplayError,
    VelocityCommand,
    derive_key,
)

KEY = derive_key("channel")


def test_every_accepted_message_is_intact_and_loss_is_measured() -> None:
    impairments = Impairments(
        loss=0.35,
        burst_p_enter=0.1,
        burst_p_exit=0.3,
        burst_loss=0.9,
        delay=0.02,
        jitter=0.2,
        reorder=0.05,
        duplicate=0.05,
        corrupt=0.05,
    )
    expected = impairments.expected_loss()
    assert 0.45 < expected < 0.55  # about 50 % loss
    channel = ImpairedChannel(impairments, seed=7)
    sender, receiver = NativeCodec(KEY, sender=1), NativeCodec(KEY, sender=2)
    stats = LinkStatistics()
    sent: dict[int, VelocityCommand] = {}
    n = 20_000
    accepted = 0
    rejected = 0
    for i in range(n):
        now = i * 0.01
        message = VelocityCommand(round(i * 0.001, 3), -round(i * 0.002, 3))
        sent[i] = message
        channel.send(sender.encode(message, now), now)
        stats.on_sent(now)
        for data in channel.receive(now):
            try:
                decoded = receiver.decode(data)
            except ReplayError:
                stats.on_rejected("replay", now)
                rejected += 1
                continue
            except ProtocolError:
                stats.on_rejected("auth", now)
                rejected += 1
                continue
            assert decoded.sequence is not None
            original = sent[decoded.sequence]
            assert decoded.message.v == pytest.approx(original.v, rel=1e-6)  # type: ignore[union-attr]
            assert decoded.message.omega == pytest.approx(original.omega, rel=1e-6)  # type: ignore[union-attr]
            stats.on_received(decoded.stream, decoded.sequence, decoded.stamp, now, decoded.sender)
            accepted += 1
    for data in channel.receive(1e9):
        try:
            decoded = receiver.decode(data)
        except ProtocolError:
            continue
        stats.on_received(decoded.stream, decoded.sequence, decoded.stamp, n * 0.01, decoded.sender)
    report = stats.report(n * 0.01)
    # corrupted packets are refused: they count as lost at the receiver as well
    corrupted_share = channel.counters.corrupted / n
    measured = report.drop_percent / 100
    assert measured == pytest.approx(expected + corrupted_share * (1 - expected), abs=0.03)
    assert report.reordered > 0
    assert report.auth_failures >= channel.counters.corrupted * 0.9
    assert report.latency_s == pytest.approx(0.02, abs=0.011)
    assert accepted > 8000


def test_bandwidth_cap_and_bounded_queue() -> None:
    channel = ImpairedChannel(Impairments(bandwidth_bps=250_000, queue_bytes=4000), seed=1)
    packet = bytes(100)
    delivered_times = []
    for i in range(2000):
        now = i * 0.001  # offered 800 kbit/s
        channel.send(packet, now)
        delivered_times += [now] * len(channel.receive(now))
    total_bits = 8 * 100 * len(delivered_times)
    assert total_bits / 2.0 <= 250_000 * 1.01
    assert channel.counters.queue_dropped > 0


def test_statistics_reordering_duplicates_and_failures() -> None:
    stats = LinkStatistics(failure_gap=1.0)
    for seq, t in [(0, 0.0), (1, 0.1), (4, 0.2), (2, 0.3), (4, 0.35), (5, 2.0)]:
        stats.on_received(0, seq, t - 0.01, t)
    report = stats.report(2.0)
    assert report.packets_received == 5
    assert report.packets_lost == 1  # seq 3
    assert report.reordered == 1  # seq 2 came late
    assert report.duplicates == 1
    assert report.latency_s == pytest.approx(0.01)
    row = stats.table_row()
    assert row.node_failures == 1  # the 1.65 s silence
    assert row.drop_percent == pytest.approx(100 / 6)
    assert math.isclose(row.operation_time, 2.0)


def test_arbitration() -> None:
    arbiter = ControlArbiter(timeout=2.0)
    assert arbiter.request(1, authority=5, now=0.0).granted
    assert arbiter.admit(1, 0.5)
    refused = arbiter.request(2, authority=5, now=0.6)
    assert not refused.granted
    assert refused.holder == 1
    assert not arbiter.admit(2, 0.7)
    assert arbiter.dropped[2] == 1
    assert arbiter.request(3, authority=9, now=1.0).granted  # higher authority takes over
    assert not arbiter.admit(1, 1.1)
    assert arbiter.holder(2.9) == 3
    assert arbiter.holder(3.1) is None  # lapsed without renewal
    assert arbiter.request(2, authority=1, now=3.2).granted
    assert arbiter.release(2, 3.3)
    assert arbiter.holder(3.3) is None
