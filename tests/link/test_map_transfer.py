"""The robot's map over the link: announcement, requests, chunks, and hostile versions of each."""

from __future__ import annotations

import dataclasses
import hashlib
import struct
import zlib

import numpy as np
import pytest

from freelook.link import (
    MAP_CHUNK,
    MAX_MAP_CELLS,
    LinkSession,
    MalformedError,
    MapAnnouncer,
    MapChunk,
    MapInfo,
    MapReceiver,
    MapRequest,
    NativeCodec,
    Refused,
    ValueRangeError,
    decode_map,
    derive_key,
    encode_map,
    map_digest,
)
from freelook.maps import World, builtin_worlds, load_world

KEY = derive_key("map transfer test")
DIGEST = bytes(range(32))


def _world(seed: int = 0, rows: int = 120, cols: int = 200) -> World:
    rng = np.random.default_rng(seed)
    unknown = rng.random((rows, cols)) < 0.05
    return World(
        "test",
        rng.random((rows, cols)) < 0.2,  # noisy: the encoding needs several chunks
        0.05,
        (-1.5, 2.25),
        unknown=unknown,
    )


def _known(name: str) -> World | None:
    return load_world(name) if name in builtin_worlds() else None


def _transfer(announcer: MapAnnouncer, receiver: MapReceiver, lose: set[int]) -> World:
    """Run requests and answers until the receiver holds the map; chunks in ``lose`` are lost
    the first time they are sent."""
    assert receiver.on_info(announcer.info) is None
    now = 0.0
    for _ in range(200):
        now += 1.0
        for request in receiver.requests(now):
            for chunk in announcer.answer(request, now):
                if chunk.index in lose:
                    lose.discard(chunk.index)
                    continue
                world = receiver.on_chunk(chunk)
                if world is not None:
                    return world
    raise AssertionError("the map never arrived")


def test_a_map_round_trips_through_its_encoding() -> None:
    world = _world()
    back = decode_map(encode_map(world))
    assert np.array_equal(back.occupancy, world.obstacles() & ~np.zeros_like(world.occupancy))
    assert back.unknown is not None
    assert np.array_equal(back.unknown, world.unknown & ~world.obstacles())  # type: ignore[operator]
    assert (back.resolution, back.origin, back.shape) == (0.05, (-1.5, 2.25), (120, 200))


def test_the_map_arrives_in_chunks_despite_losses_and_its_digest_holds() -> None:
    world = _world(1)
    announcer = MapAnnouncer(world)
    assert announcer.count > 3
    receiver = MapReceiver()
    got = _transfer(announcer, receiver, lose={0, 2, announcer.count - 1})
    assert receiver.source == "robot"
    assert map_digest(encode_map(got)) == announcer.digest
    assert np.array_equal(got.occupancy, world.obstacles())


def test_a_built_in_world_or_the_same_local_map_is_not_transferred() -> None:
    lab = load_world("lab")
    receiver = MapReceiver(known=_known)
    assert receiver.on_info(MapAnnouncer(lab, name="lab").info) is not None
    assert receiver.source == "built-in"
    assert receiver.requests(1.0) == []
    local = MapReceiver(local=lab)
    assert local.on_info(MapAnnouncer(lab).info) is lab
    assert local.source == "local"
    # a name that lies about the map: the digest decides, and the map is fetched
    liar = MapReceiver(known=_known)
    assert liar.on_info(MapAnnouncer(_world(), name="lab").info) is None
    assert liar.pending
    assert liar.requests(1.0)


def test_the_robot_answers_from_a_budget_and_only_for_its_own_map() -> None:
    announcer = MapAnnouncer(_world(2, 600, 600), rate=10.0, burst=20.0)
    assert announcer.count > 40
    digest = announcer.digest
    assert announcer.answer(MapRequest(DIGEST, 0, 64), 0.0) == []
    first = announcer.answer(MapRequest(digest, 0, 64), 0.0)
    assert len(first) == 20
    assert announcer.answer(MapRequest(digest, 0, 64), 0.0) == []  # the budget is spent
    assert len(announcer.answer(MapRequest(digest, 0, 64), 1.0)) == 10
    assert announcer.chunks_refused > 0


def test_chunks_that_do_not_fit_the_announcement_are_dropped() -> None:
    announcer = MapAnnouncer(_world(3))
    receiver = MapReceiver()
    receiver.on_info(announcer.info)
    good = announcer.answer(MapRequest(announcer.digest, 0, 2), 0.0)[0]
    for bad in (
        dataclasses.replace(good, digest=DIGEST),
        dataclasses.replace(good, count=good.count + 1),
        dataclasses.replace(good, data=good.data[:-1]),
    ):
        assert receiver.on_chunk(bad) is None
    assert receiver.dropped == 3


def test_a_forged_map_whose_chunks_do_not_hash_to_the_digest_is_refused() -> None:
    real = MapAnnouncer(_world(4))
    receiver = MapReceiver()
    receiver.on_info(real.info)
    forged = bytearray(real.blob)
    forged[-1] ^= 0xFF
    count = real.count
    for i in range(count):
        data = bytes(forged[i * MAP_CHUNK : (i + 1) * MAP_CHUNK])
        assert receiver.on_chunk(MapChunk(real.digest, i, count, data)) is None
    assert receiver.world is None
    assert receiver.dropped == count


def _blob(
    cols: int, rows: int, cells: bytes, resolution: float = 0.05, origin: float = 0.0
) -> bytes:
    head = struct.pack("<4sHIIddd", b"FLMP", 1, cols, rows, resolution, origin, origin)
    return head + zlib.compress(cells)


@pytest.mark.parametrize(
    ("blob", "error", "match"),
    [
        (b"FLMP", MalformedError, "shorter than its head"),
        (b"XXXX" + _blob(2, 2, bytes(4))[4:], MalformedError, "not a map encoding"),
        (_blob(0, 2, b""), ValueRangeError, "cells outside"),
        (_blob(9000, 1, bytes(9000)), ValueRangeError, "cells outside"),
        (_blob(4096, 4097, b""), ValueRangeError, "cells outside"),
        (_blob(2, 2, bytes(4), resolution=float("nan")), ValueRangeError, "resolution"),
        (_blob(2, 2, bytes(4), resolution=0.0), ValueRangeError, "resolution"),
        (_blob(2, 2, bytes(4), origin=float("inf")), ValueRangeError, "origin"),
        (_blob(2, 2, bytes(4), origin=1e9), ValueRangeError, "origin"),
        (_blob(2, 2, bytes(3)), MalformedError, "not 2 × 2"),
        (_blob(2, 2, bytes(5)), MalformedError, "not 2 × 2"),
        (_blob(2, 2, bytes([0, 100, 7, 255])), MalformedError, "values"),
        (_blob(2, 2, bytes(4))[:-3], MalformedError, "not 2 × 2|inflate"),
        (_blob(2, 2, bytes(4)) + b"junk", MalformedError, "not 2 × 2"),
        (b"\0" * (4 * 1024 * 1024 + 1), MalformedError, "exceeds"),
    ],
)
def test_hostile_map_encodings_are_refused(blob: bytes, error: type[Exception], match: str) -> None:
    with pytest.raises(error, match=match):
        decode_map(blob)


def test_a_zip_bomb_is_refused_without_inflating_it() -> None:
    # 2 × 2 declared, a gigabyte of zeros compressed: inflation stops at four bytes
    bomb = zlib.compressobj()
    data = b"".join(bomb.compress(bytes(1 << 20)) for _ in range(64)) + bomb.flush()
    head = struct.pack("<4sHIIddd", b"FLMP", 1, 2, 2, 0.05, 0.0, 0.0)
    with pytest.raises(MalformedError, match="not 2 × 2"):
        decode_map(head + data)


# -- on the wire ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "message",
    [
        MapInfo(DIGEST, 12345, "lab"),
        MapInfo(DIGEST, 1),
        MapRequest(DIGEST, 3, 64),
        MapChunk(DIGEST, 0, 1, b"x"),
        MapChunk(DIGEST, 4095, 4096, bytes(MAP_CHUNK)),
    ],
)
def test_map_messages_round_trip(message: MapInfo | MapRequest | MapChunk) -> None:
    packet = NativeCodec(KEY, sender=100).encode(message, 5.0)
    assert len(packet) <= 1200
    assert NativeCodec(KEY, sender=2).decode(packet).message == message


@pytest.mark.parametrize(
    ("message", "match"),
    [
        (MapInfo(DIGEST[:16], 10), "digest of 16 bytes"),
        (MapInfo(DIGEST, 0), "size = 0 outside"),
        (MapInfo(DIGEST, 4 * 1024 * 1024 + 1), "size = .* outside"),
        (MapInfo(DIGEST, 10, "../etc/passwd"), "not a map name"),
        (MapInfo(DIGEST, 10, "<script>"), "not a map name"),
        (MapInfo(DIGEST, 10, "x" * 65), "not a map name"),
        (MapRequest(DIGEST, 0, 0), "count = 0 outside"),
        (MapRequest(DIGEST, 0, 65), "count = 65 outside"),
        (MapChunk(DIGEST, 1, 1, b"x"), "index = 1 outside"),
        (MapChunk(DIGEST, 0, 1, b""), "data of 0 bytes"),
        (MapChunk(DIGEST, 0, 1, bytes(MAP_CHUNK + 1)), "data of 1025 bytes"),
        (MapChunk(DIGEST, 0, 5000, b"x"), "count = 5000 outside"),
    ],
)
def test_out_of_range_map_messages_are_not_sent(message: object, match: str) -> None:
    with pytest.raises(ValueRangeError, match=match):
        NativeCodec(KEY, sender=100).encode(message, 5.0)  # type: ignore[arg-type]


def _forged(code: int, payload: bytes) -> bytes:
    """A correctly tagged packet of type ``code`` on the session stream with ``payload`` (an
    attacker with the key, or a buggy peer)."""
    head = struct.pack("<2sBBBBHIQH", b"\xfe\x4c", 1, 1, code, 3, 100, 7, 5_000_000, len(payload))
    body = head + payload
    return body + hashlib.blake2s(body, key=KEY, digest_size=16).digest()


@pytest.mark.parametrize(
    ("code", "payload", "reason"),
    [
        (25, DIGEST + struct.pack("<IB", 10, 3) + b"lab!", "malformed"),  # length disagrees
        (25, DIGEST + struct.pack("<IB", 10, 2) + "é".encode(), "malformed"),  # not ASCII
        (25, DIGEST + struct.pack("<IB", 10, 3) + b"a/b", "value"),  # not a name
        (25, DIGEST + struct.pack("<IB", 0xFFFFFFFF, 0), "value"),  # 4 GiB announced
        (25, DIGEST[:8], "malformed"),
        (26, DIGEST + struct.pack("<HH", 0, 1000), "value"),
        (26, DIGEST + struct.pack("<HHB", 0, 1, 0), "malformed"),
        (27, DIGEST + struct.pack("<HH", 9, 3) + b"x", "value"),  # index beyond count
        (27, DIGEST + struct.pack("<HH", 0, 1), "value"),  # no data
        (27, DIGEST + struct.pack("<HH", 0, 1) + bytes(2000), "value"),  # over a chunk
        (27, DIGEST[:20], "malformed"),
    ],
)
def test_hostile_map_packets_are_refused_with_their_reason(
    code: int, payload: bytes, reason: str
) -> None:
    session = LinkSession(NativeCodec(KEY, sender=2), spacing=0.05)
    (event,) = session.receive(_forged(code, payload), 5.0)
    assert isinstance(event, Refused)
    assert event.reason == reason


def test_a_station_flooding_map_requests_gets_no_more_than_its_own_budget() -> None:
    """An observer asking for the whole map 50 times a second for 5 s: the robot answers at
    most its request and chunk budgets, and another station still gets the map at once."""
    announcer = MapAnnouncer(_world(5, 1200, 1200))
    assert announcer.count >= 64  # each request can ask for 64 chunks
    sent = 0
    for k in range(250):
        now = k / 50
        sent += len(announcer.answer(MapRequest(announcer.digest, 0, 64), now, station=9))
    assert sent <= announcer.burst + announcer.rate * 5.0
    assert announcer.requests_refused >= 250 - (2 * announcer.request_rate + 10 * 5.0)
    # station 2 fetches the map the usual way, meanwhile
    receiver = MapReceiver()
    world = _transfer_from(announcer, receiver, station=2, start=5.0)
    assert map_digest(encode_map(world)) == announcer.digest


def test_the_robot_keeps_a_bounded_number_of_station_budgets() -> None:
    announcer = MapAnnouncer(_world(6))
    for station in range(10 * MapAnnouncer.MAX_STATIONS):
        announcer.answer(MapRequest(announcer.digest, 0, 1), 0.0, station=station)
    assert len(announcer._budgets) == MapAnnouncer.MAX_STATIONS


def test_the_largest_map_a_station_accepts_decodes_and_a_larger_one_is_refused_unread() -> None:
    side = int(MAX_MAP_CELLS**0.5)
    cells = np.random.default_rng(0).choice(np.array([0, 100, 255], np.uint8), (side, side))
    world = decode_map(_blob(side, side, cells.tobytes()))
    assert world.shape == (side, side)
    assert np.array_equal(world.occupancy, cells == 100)
    with pytest.raises(ValueRangeError, match="cells outside"):
        decode_map(_blob(side + 1, side, b"\x00"))  # refused before a byte is inflated


def _transfer_from(
    announcer: MapAnnouncer, receiver: MapReceiver, station: int, start: float
) -> World:
    assert receiver.on_info(announcer.info) is None
    now = start
    for _ in range(400):
        now += receiver.retry
        for request in receiver.requests(now):
            for chunk in announcer.answer(request, now, station):
                world = receiver.on_chunk(chunk)
                if world is not None:
                    return world
    raise AssertionError("the map never arrived")
