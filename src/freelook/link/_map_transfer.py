"""Telling the operator the robot's map (sans-I/O): an announcement, requests and chunks.

The robot announces its map by digest (:class:`MapInfo`, at session start and now and then);
an operator that has the same map (a built-in world of that name, or the map it was given)
keeps its own, any other asks for the encoding in chunks (:class:`MapRequest`,
:class:`MapChunk`) until it holds every one, checks the digest and decodes it. Everything
from the other end is hostile: the encoding is bounded in bytes, cells and values before any
allocation (a map of at most 2048 × 2048 cells: the worst decodes in a few tens of
milliseconds), and the robot answers each station's requests from that station's own budget
(a station cannot turn the robot into an amplifier).

The encoding (little-endian): ``b"FLMP"``, u16 version 1, u32 width, u32 height (cells),
f64 resolution (m), f64 origin x, f64 origin y (m, the corner of cell (0, 0)), then the cells
row by row from the origin (row index grows with y), one byte each (0 free, 100 occupied,
255 unknown: the values of a ROS ``OccupancyGrid``), zlib-compressed.
"""

from __future__ import annotations

import hashlib
import math
import struct
import zlib
from collections.abc import Callable

import numpy as np

from freelook.link._errors import MalformedError, ValueRangeError
from freelook.link._messages import MapChunk, MapInfo, MapRequest
from freelook.link._values import MAP_CHUNK, MAX_MAP_BYTES, MAX_MAP_REQUEST
from freelook.maps import World

__all__ = [
    "MAX_MAP_CELLS",
    "MapAnnouncer",
    "MapReceiver",
    "decode_map",
    "encode_map",
    "map_digest",
]

MAX_MAP_CELLS = 2048 * 2048  # bounds the work of a decode (inflate and check every cell)
MAX_MAP_SIDE = 8192  # cells along either axis
FREE, OCCUPIED, UNKNOWN = 0, 100, 255
_HEAD = struct.Struct("<4sHIIddd")
_MAGIC = b"FLMP"
_VERSION = 1


def encode_map(world: World) -> bytes:
    """The map's encoding: walls and objects occupied, unknown cells unknown."""
    cells = np.where(world.obstacles(), OCCUPIED, FREE).astype(np.uint8)
    if world.unknown is not None:
        cells[world.unknown & ~world.obstacles()] = UNKNOWN
    rows, cols = world.shape
    head = _HEAD.pack(_MAGIC, _VERSION, cols, rows, world.resolution, *world.origin)
    return head + zlib.compress(np.ascontiguousarray(cells).tobytes(), 6)


def map_digest(blob: bytes) -> bytes:
    """SHA-256 of an encoded map: what names it on the link."""
    return hashlib.sha256(blob).digest()


def decode_map(blob: bytes, name: str = "robot map") -> World:
    """The world an encoding describes; anything out of bounds raises :class:`MalformedError`
    or :class:`ValueRangeError` before memory is given to it (no zip bomb gets through)."""
    if len(blob) > MAX_MAP_BYTES:
        raise MalformedError(f"encoded map of {len(blob)} bytes exceeds {MAX_MAP_BYTES}")
    if len(blob) < _HEAD.size:
        raise MalformedError(f"encoded map of {len(blob)} bytes is shorter than its head")
    magic, version, cols, rows, resolution, ox, oy = _HEAD.unpack_from(blob)
    if magic != _MAGIC or version != _VERSION:
        raise MalformedError(f"not a map encoding (magic {magic!r}, version {version})")
    if not (0 < cols <= MAX_MAP_SIDE and 0 < rows <= MAX_MAP_SIDE and cols * rows <= MAX_MAP_CELLS):
        raise ValueRangeError(
            f"map of {cols} × {rows} cells outside 1…{MAX_MAP_SIDE} a side "
            f"and {MAX_MAP_CELLS} in all"
        )
    if not 1e-3 <= resolution <= 100.0:  # NaN fails too
        raise ValueRangeError(f"map resolution {resolution!r} m outside 0.001…100")
    for value in (ox, oy):
        if not (math.isfinite(value) and abs(value) <= 1e6):
            raise ValueRangeError(f"map origin {value!r} m is not finite within ±1e6")
    cells = cols * rows
    inflater = zlib.decompressobj()
    try:
        raw = inflater.decompress(blob[_HEAD.size :], cells)
        leftover = inflater.unconsumed_tail or inflater.decompress(b"", 1)
    except zlib.error as err:
        raise MalformedError(f"map cells do not inflate: {err}") from None
    if len(raw) != cells or leftover or not inflater.eof or inflater.unused_data:
        raise MalformedError(f"map cells are not {cols} × {rows} bytes")
    grid = np.frombuffer(raw, dtype=np.uint8).reshape(rows, cols)
    occupied, unknown = grid == OCCUPIED, grid == UNKNOWN
    if not ((grid == FREE) | occupied | unknown).all():
        raise MalformedError("map cells hold values other than 0, 100 and 255")
    return World(
        name=name,
        occupancy=occupied,
        resolution=float(resolution),
        origin=(float(ox), float(oy)),
        unknown=unknown if unknown.any() else None,
    )


class _Bucket:
    """A token bucket: ``burst`` tokens, refilled at ``rate`` per second."""

    __slots__ = ("burst", "last", "rate", "tokens")

    def __init__(self, rate: float, burst: float) -> None:
        self.rate, self.burst, self.tokens = rate, burst, burst
        self.last: float | None = None

    def take(self, wanted: int, now: float) -> int:
        """How many of ``wanted`` tokens there are now (taken)."""
        if self.last is not None:
            self.tokens = min(self.burst, self.tokens + max(0.0, now - self.last) * self.rate)
        self.last = now
        granted = min(wanted, int(self.tokens))
        self.tokens -= granted
        return granted


class MapAnnouncer:
    """The robot's end: its map's announcement and the chunks a request asks for.

    Every station, observers included, has its own budgets: ``requests`` map requests a
    second (a burst of twice that) and ``rate`` chunks a second (a burst of ``burst``). A
    request beyond the first is dropped and counted; one beyond the second is answered in
    part, and the operator asks again for what it still lacks. A station cannot turn the
    robot into an amplifier, nor starve another station of the map: what the robot sends a
    station is bounded by that station's own budget.
    """

    MAX_STATIONS = 256  # budgets kept; the least recently seen is forgotten beyond

    def __init__(
        self,
        world: World,
        *,
        name: str = "",
        rate: float = 64.0,
        burst: float = 128.0,
        requests: float = 10.0,
    ) -> None:
        self.blob = encode_map(world)
        if len(self.blob) > MAX_MAP_BYTES:
            raise ValueRangeError(f"encoded map of {len(self.blob)} bytes exceeds {MAX_MAP_BYTES}")
        self.digest = map_digest(self.blob)
        self.info = MapInfo(self.digest, len(self.blob), name)
        self.count = math.ceil(len(self.blob) / MAP_CHUNK)
        self.rate = rate
        self.burst = burst
        self.request_rate = requests
        self._budgets: dict[int, tuple[_Bucket, _Bucket]] = {}  # station: (requests, chunks)
        self.chunks_sent = 0
        self.chunks_refused = 0  # asked for beyond a station's budget
        self.requests_refused = 0  # requests beyond a station's request rate

    def _budget(self, station: int) -> tuple[_Bucket, _Bucket]:
        budget = self._budgets.pop(station, None)
        if budget is None:
            if len(self._budgets) >= self.MAX_STATIONS:
                del self._budgets[next(iter(self._budgets))]
            budget = (
                _Bucket(self.request_rate, 2 * self.request_rate),
                _Bucket(self.rate, self.burst),
            )
        self._budgets[station] = budget  # most recently seen last
        return budget

    def answer(self, request: MapRequest, now: float, station: int = 0) -> list[MapChunk]:
        """The chunks ``request`` from ``station`` asks for, as far as its budgets allow
        (none for another map)."""
        if request.digest != self.digest or request.first >= self.count:
            return []
        requests, chunks = self._budget(station)
        if not requests.take(1, now):
            self.requests_refused += 1
            return []
        last = min(self.count, request.first + min(request.count, MAX_MAP_REQUEST))
        wanted = last - request.first
        granted = chunks.take(wanted, now)
        self.chunks_refused += wanted - granted
        self.chunks_sent += granted
        return [
            MapChunk(
                self.digest,
                i,
                self.count,
                self.blob[i * MAP_CHUNK : (i + 1) * MAP_CHUNK],
            )
            for i in range(request.first, request.first + granted)
        ]


class MapReceiver:
    """The operator's end: which map the robot has, and getting it when this end lacks it.

    ``known(name)`` gives a built-in world by name (None when there is none); ``local`` is
    the map this end was given. Either is used when its encoding has the announced digest.
    Memory is bounded by the announced size (at most 4 MiB); a chunk that does not fit the
    announcement is dropped and counted.
    """

    def __init__(
        self,
        local: World | None = None,
        known: Callable[[str], World | None] | None = None,
        *,
        retry: float = 0.5,
    ) -> None:
        self.local = local
        self.known = known
        self.retry = retry
        self.world: World | None = None  # the robot's map, once this end has it
        self.digest: bytes | None = None  # of the map held or being fetched
        self.source = ""  # "built-in", "local" or "robot"
        self.dropped = 0  # chunks that fit no announcement
        self._size = 0
        self._count = 0
        self._parts: dict[int, bytes] = {}
        self._name = ""
        self._asked: float | None = None

    @property
    def pending(self) -> bool:
        """Whether a map is announced and not yet held."""
        return self.digest is not None and self.world is None

    def on_info(self, info: MapInfo) -> World | None:
        """An announcement; returns the map when this end already has it (and did not)."""
        if info.digest == self.digest:
            return None
        self.digest, self.world, self._parts = info.digest, None, {}
        self._size, self._count = info.size, math.ceil(info.size / MAP_CHUNK)
        self._name, self._asked = info.name, None
        candidates: list[tuple[str, World | None]] = [("local", self.local)]
        if info.name and self.known is not None:
            candidates.insert(0, ("built-in", self.known(info.name)))
        for source, world in candidates:
            if world is not None and map_digest(encode_map(world)) == info.digest:
                self.world, self.source = world, source
                return world
        return None

    def requests(self, now: float) -> list[MapRequest]:
        """What to ask for now: the first run of missing chunks (every ``retry`` seconds)."""
        if not self.pending or (self._asked is not None and now - self._asked < self.retry):
            return []
        assert self.digest is not None
        self._asked = now
        first = next(i for i in range(self._count) if i not in self._parts)
        count = 1
        while (
            count < MAX_MAP_REQUEST
            and first + count < self._count
            and first + count not in self._parts
        ):
            count += 1
        return [MapRequest(self.digest, first, count)]

    def on_chunk(self, chunk: MapChunk) -> World | None:
        """One chunk; returns the map when it completes one whose digest holds."""
        if not self.pending or chunk.digest != self.digest or chunk.count != self._count:
            self.dropped += 1
            return None
        expected = (
            MAP_CHUNK if chunk.index < self._count - 1 else self._size - MAP_CHUNK * chunk.index
        )
        if len(chunk.data) != expected:
            self.dropped += 1
            return None
        self._parts[chunk.index] = chunk.data
        if len(self._parts) < self._count:
            return None
        blob = b"".join(self._parts[i] for i in range(self._count))
        self._parts = {}
        if map_digest(blob) != self.digest:
            self.digest = None  # the next announcement starts over
            self.dropped += self._count
            return None
        try:
            world = decode_map(blob, self._name or "robot map")
        except (MalformedError, ValueRangeError):
            self.digest = None
            self.dropped += self._count
            return None
        self.world, self.source = world, "robot"
        return world
