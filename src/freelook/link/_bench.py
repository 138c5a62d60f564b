"""Benchmarks of the link codecs and the UDP round trip."""

from __future__ import annotations

import asyncio
import contextlib
import socket
import statistics
import struct
import threading
import time
import zlib
from collections.abc import Callable

import numpy as np

from freelook.bench import Case, benchmark
from freelook.link._auth import derive_key
from freelook.link._bench_echo import compiled_echo
from freelook.link._map_transfer import MAX_MAP_CELLS, decode_map
from freelook.link._messages import Telemetry, TrajectoryStart, VelocityCommand
from freelook.link._native import NativeCodec
from freelook.link._stats_report import LinkStatsReport
from freelook.link._thesis import ThesisCodec
from freelook.runtime import loop_name, run_event_loop

_TELEMETRY = Telemetry(
    1.0,
    (1.0, 2.0, 0.5),
    (1.0, 2.0, 0.5),
    0.3,
    0.1,
    0.3,
    0.1,
    0.2,
    0.0,
    -1.5708,
    0.017453,
    30.0,
    tuple(1.0 + 0.01 * i for i in range(181)),
    tuple(2.0 for _ in range(16)),
    link=LinkStatsReport(),
)


def _naive_thesis_command() -> object:
    """Baseline: per-field packing and a bit-by-bit CRC, the way a first version is written."""
    body = bytearray([15, 0xFF, 0xFA, 0xA2, 4])
    body += struct.pack("<h", 250)
    body += struct.pack("<h", 10)
    body += struct.pack("<I", 1000)
    crc = 0xFFFF
    for byte in body:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
    packet = bytes(body) + struct.pack("<H", crc)
    return [struct.unpack_from("<h", packet, 5)[0], struct.unpack_from("<h", packet, 7)[0]]


@benchmark("link.thesis_command")
def thesis_command() -> Case:
    codec = ThesisCodec()
    message = VelocityCommand(0.25, 0.17)
    return Case(
        run=lambda: codec.decode(codec.encode(message, 1.0)),
        baseline=_naive_thesis_command,
        target_s=20e-6,
        unit="packet",
    )


@benchmark("link.thesis_position")
def thesis_position() -> Case:
    codec = ThesisCodec()
    return Case(
        run=lambda: codec.decode(codec.encode(_TELEMETRY, 1.0)), target_s=100e-6, unit="packet"
    )


def _native_pair() -> tuple[NativeCodec, NativeCodec]:
    key = derive_key("bench")
    sender, receiver = NativeCodec(key, sender=1), NativeCodec(key, sender=2)
    receiver.replay.max_age = 1e12
    return sender, receiver


@benchmark("link.native_command")
def native_command() -> Case:
    sender, receiver = _native_pair()
    message = VelocityCommand(0.25, 0.17)
    clock = [0.0]

    def run() -> object:
        clock[0] += 1e-3
        return receiver.decode(sender.encode(message, clock[0]))

    return Case(run=run, target_s=20e-6, unit="packet")


@benchmark("link.native_telemetry")
def native_telemetry() -> Case:
    sender, receiver = _native_pair()
    clock = [0.0]

    def run() -> object:
        clock[0] += 1e-3
        return receiver.decode(sender.encode(_TELEMETRY, clock[0]))

    return Case(run=run, target_s=100e-6, unit="packet")


def _raw_echo_server(sock: socket.socket, stop: threading.Event) -> None:
    sock.settimeout(0.1)
    while not stop.is_set():
        try:
            data, addr = sock.recvfrom(2048)
        except TimeoutError:
            continue
        sock.sendto(data, addr)


async def _udp_exchange(n: int) -> list[float]:
    """``n`` command round trips between two asyncio UDP endpoints on loopback, the robot's
    end answering each verified command; each round trip's time in seconds."""
    from freelook.link._transport import UdpEndpoint

    robot = await UdpEndpoint.open(("127.0.0.1", 0))
    operator = await UdpEndpoint.open(("127.0.0.1", 0), remote=robot.local_address)
    op_codec, robot_codec = _native_pair()
    robot_codec.sender = 100
    op_codec.replay.max_age = 1e12

    answered = [0]

    def answer(data: bytes, source: tuple[str, int]) -> None:
        decoded = robot_codec.decode(data)
        robot.learn_peer(source)  # verified: answer it (as the link driver does)
        robot.send(robot_codec.encode(decoded.message, time.monotonic()))
        answered[0] += 1

    # as the link driver runs it: the first packet (a stranger's until verified) through
    # the reader, every later one on the endpoint's fast path
    robot.on_verified = answer

    async def robot_side() -> None:
        while answered[0] < n:
            item = await robot.recv_from(0.05)
            if item is not None:
                answer(*item)

    task = asyncio.create_task(robot_side())
    message = VelocityCommand(0.25, 0.17)
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        operator.send(op_codec.encode(message, time.monotonic()))
        reply = await operator.recv(1.0)
        assert reply is not None
        op_codec.decode(reply)
        samples.append(time.perf_counter() - t0)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert answered[0] == n
    robot.close()
    operator.close()
    return samples


def _raw_echo(n: int) -> Callable[[], list[float]]:
    """``n`` round trips of a blocking socket to a raw echo server on loopback, per call.

    The echo server lives as long as the process (a daemon thread), so a call times round
    trips, not a thread's start and stop."""
    server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    server.bind(("127.0.0.1", 0))
    threading.Thread(target=_raw_echo_server, args=(server, threading.Event()), daemon=True).start()
    client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    client.settimeout(1.0)
    payload = bytes(54)
    address = server.getsockname()

    def round_trips() -> list[float]:
        raw = []
        for _ in range(n):
            t0 = time.perf_counter()
            client.sendto(payload, address)
            client.recvfrom(2048)
            raw.append(time.perf_counter() - t0)
        return raw

    return round_trips


def _round_trip_case(
    baseline_round_trips: Callable[[], list[float]],
    n: int,
    max_ratio: float | None,
    figures: dict[str, float] | None = None,
) -> Case:
    """``n`` asyncio round trips a call against ``baseline_round_trips`` (``n`` to an echo),
    call by call: the ratio judged is the median over adjacent pairs of calls' medians."""
    every: list[float] = []  # every candidate round trip (for the p99)
    medians: list[float] = []  # per call: median round trip
    raw_medians: list[float] = []

    def run() -> None:
        samples = run_event_loop(_udp_exchange(n))
        every.extend(samples)
        medians.append(statistics.median(samples))

    def baseline() -> None:
        raw_medians.append(statistics.median(baseline_round_trips()))

    def paired_ratio() -> float:
        """Median over adjacent calls of (round trip median / echo median)."""
        return statistics.median(a / b for a, b in zip(medians, raw_medians, strict=False))

    def extra() -> dict[str, float]:
        ordered = sorted(every)
        return {
            "p50_ms": statistics.median(medians) * 1e3,
            "p99_ms": ordered[int(0.99 * (len(ordered) - 1))] * 1e3,
            "raw_p50_ms": statistics.median(raw_medians) * 1e3,
            "p50_ratio": paired_ratio(),
            "pairs": float(min(len(medians), len(raw_medians))),
            "uvloop": float(loop_name() == "uvloop"),
            **(figures or {}),
        }

    return Case(
        run=run,
        ops_per_call=n,
        baseline=baseline,
        unit="round trip",
        extra=extra,
        max_baseline_ratio=max_ratio,
        interleave=True,
        ratio=paired_ratio,
    )


@benchmark("link.udp_round_trip")
def udp_round_trip() -> Case:
    """Command round trip over real loopback UDP with asyncio endpoints (encode, tag, send,
    receive, verify, decode, reply, verify) on the programs' event loop (uvloop: 1 when it is
    uvloop's), vs a raw blocking-socket echo; the target is at most 2 × the raw echo.

    The two sides take turns, call by call, and each call's figure is the median of its round
    trips, so the machine's load weighs on both alike and a round trip a scheduler tick delays
    does not count; the ratio judged is the median over adjacent pairs of calls."""
    n = 200
    return _round_trip_case(_raw_echo(n), n, 2.0)


@benchmark("link.udp_round_trip_compiled")
def udp_round_trip_compiled() -> Case:
    """The same round trip against a compiled echo in a process of its own (``socat``, else
    a C echo built with ``cc``), the same blocking Python socket asking it: the limit a
    userspace echo over loopback sets, with no Python on the far side. A row to read, with no
    target: its echo crosses processes, which the in-process raw echo does not. ``socat``: 1
    when the echo is socat's, 0 the C one's."""
    n = 200
    round_trips, echo = compiled_echo(n)
    return _round_trip_case(round_trips, n, None, {"socat": float(echo == "socat")})


@benchmark("link.reject_wrong_key")
def reject_wrong_key() -> Case:
    """A robot end with sessions refusing a wrong-key packet (cheap checks, no tag: the station
    has no session), vs today's one-key session refusing the same packet after its full
    decode (the tag is computed and compared), in the same run. Both count the refusal. The
    packet is a full datagram (a 95-point trajectory, 1.2 kB): what a flood would send, since
    the tag's cost grows with the length and the cheap checks' does not."""
    from freelook.link._keys import KeyRing
    from freelook.link._session import LinkSession

    robot_key = derive_key("bench robot")
    keys = KeyRing.from_mapping({"stations": {"1": {"key": robot_key.hex()}}})
    robot = LinkSession(
        NativeCodec(robot_key, sender=100), spacing=0.05, role="robot", keys=keys, nonce=b"bench"
    )
    attacker = NativeCodec(derive_key("wrong key"), sender=1)
    points = tuple(0.1 * i for i in range(95))
    packet = attacker.encode(TrajectoryStart(points, points, points), 1.0)
    legacy = LinkSession(NativeCodec(robot_key, sender=100), spacing=0.05)
    n = 1000

    def run() -> None:
        for _ in range(n):
            robot.receive(packet, 1.0)

    def baseline() -> None:
        for _ in range(n):
            legacy.receive(packet, 1.0)

    def extra() -> dict[str, float]:
        return {"refused_as_session": float(robot.stats.refused.get("session", 0))}

    return Case(
        run=run, ops_per_call=n, baseline=baseline, target_s=10e-6, unit="packet", extra=extra
    )


@benchmark("link.map_decode_worst")
def map_decode_worst() -> Case:
    """The costliest map a station accepts (every cell at random, the most cells): decoded
    within 50 ms. Baseline: inflating the same cells alone."""
    side = int(MAX_MAP_CELLS**0.5)
    cells = np.random.default_rng(0).choice(np.array([0, 100, 255], np.uint8), (side, side))
    packed = zlib.compress(cells.tobytes(), 6)
    blob = struct.pack("<4sHIIddd", b"FLMP", 1, side, side, 0.05, 0.0, 0.0) + packed
    return Case(
        run=lambda: decode_map(blob),
        baseline=lambda: zlib.decompress(packed),
        target_s=0.05,
        unit="map",
    )
