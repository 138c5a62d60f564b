"""``freelook report``: one self-contained HTML page (plots inline) from one recorded run.

At the top, a few lines a user reads first: distance, duration, top speed, safety events by
kind, link drop per direction, and anything unusual (watchdog stops, e-stops, refused
packets, node failures). Then the thesis's figures (seed 004 §7), each only when the run has
its data: the path on the robot's map with the safety slowdowns and stops (Figs. 7.6, 7.8),
x/y/θ tracking against a reference (Fig. 7.7, only when a trajectory ran), commanded and
measured velocities (Fig. 7.9), rates and drops over time (Fig. 7.12), and Table 7.1 for both
link directions (sent, received, lost, drop %, node failures, operation time, rate).

Link figures come from the raw packets a direction's receiver recorded (sequence numbers and
receive stamps), independently of the statistics the live link published; a direction whose
receiver did not record (the robot's, in a station's recording) is tabled from the robot's own
counts in its telemetry and the station's count of what it sent.

Reading is the slow part of a long run: the many small messages (link packets, odometry,
commands) are parsed straight from their CDR bytes, everything else through the ROS 2 decoder,
and topics the report does not draw (scans, sonar, images) are never decoded.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import struct
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import zstandard
from mcap.records import Schema
from mcap.summary import Summary
from mcap_ros2.decoder import DecoderFactory

from freelook.maps import World
from freelook.record._reader import _READ_ERRORS, RecordingError, _damage, _summary

__all__ = [
    "DirectionFigures",
    "RunData",
    "SafetyEpisode",
    "build_report",
    "direction_figures",
    "link_table",
    "load_run",
    "path_limits",
    "safety_episodes",
    "summary_lines",
]

NODE_FAILURE_GAP = 1.0  # s without any packet in a direction counts as a node failure
EPISODE_GAP = 0.5  # s: safety reports of one kind closer than this are one event
RESTART_DROP = 64  # a sequence falling further than the replay window: the sender restarted
STOP_KINDS = frozenset({"watchdog", "estop", "bumper", "hardware"})
DIRECTIONS = ("operator_to_robot", "robot_to_operator")
_TOPICS = [
    "/localization",
    "/odom",
    "/cmd_vel",
    "/freelook/reference",
    "/freelook/safety",
    "/freelook/mode",
    "/freelook/link_stats/operator_to_robot",
    "/freelook/link_stats/robot_to_operator",
    "/link/operator_to_robot",
    "/link/robot_to_operator",
    "/map",
]
_FLAG_NAMES = ("zone", "approach", "watchdog", "estop", "bumper", "hardware")


@dataclass(frozen=True, slots=True)
class SafetyEpisode:
    """One safety event: reports of one kind with no gap over 0.5 s between them."""

    start: float  # s, log time
    end: float
    kind: str  # zone, approach, watchdog, estop, bumper, hardware (joined by "|")
    scale: float  # the smallest factor applied during it

    @property
    def stop(self) -> bool:
        """Whether the robot was stopped, not only slowed."""
        return self.scale <= 0.0 or bool(STOP_KINDS & set(self.kind.split("|")))


def _array(rows: list[tuple[float, ...]], width: int) -> npt.NDArray[np.float64]:
    out = np.array(rows, dtype=np.float64).reshape(-1, width)
    return out[np.argsort(out[:, 0], kind="stable")] if len(out) else out


@dataclass
class RunData:
    """The streams of one run, as numpy arrays sorted by log time (s, the recorder's clock)."""

    metadata: dict[str, str] = field(default_factory=dict)
    t0: float = 0.0
    pose: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 4)))  # t x y θ
    odom: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 6)))  # t x y θ v ω
    cmd: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 3)))  # t v ω
    reference: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros((0, 4)))
    safety: list[tuple[float, str, str, int, float]] = field(default_factory=list)
    modes: list[tuple[float, str, bool]] = field(default_factory=list)  # t, mode, e-stop
    #: per direction: rows of (receive time, send time, stream, sequence, accepted)
    packets: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict)
    #: per direction: rows of (log time, received, lost, crc + auth failures, sent) as the
    #: receiver reported them (the robot's, in telemetry) with the sender's count beside
    link_stats: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict)
    world: World | None = None  # the robot's map (/map), else the world the metadata names

    @property
    def duration(self) -> float:
        times = [a[-1, 0] for a in (self.pose, self.odom, self.cmd) if len(a)]
        return max(times) - self.t0 if times else 0.0


# -- reading --------------------------------------------------------------------------------

_U32 = struct.Struct("<I")
_PACKET = struct.Struct("<IIiIiIB")
_TWIST = struct.Struct("<6d")
_POSE = struct.Struct("<7d")
_COUNTS = struct.Struct("<6I")
_XYT = struct.Struct("<3d")


def _align(pos: int, size: int) -> int:
    """CDR alignment, counted from the body after the 4-byte encapsulation header."""
    return pos + (-(pos - 4)) % size


def _packet(data: bytes) -> tuple[float, float, int, int, bool]:
    """(receive, send, stream, sequence, accepted) of a freelook_msgs/Packet's CDR bytes."""
    pos = 12 + _U32.unpack_from(data, 8)[0]  # after direction (u8) and the wire string
    stream, seq, s_sec, s_ns, r_sec, r_ns, accepted = _PACKET.unpack_from(data, _align(pos, 4))
    return r_sec + r_ns * 1e-9, s_sec + s_ns * 1e-9, stream, seq, bool(accepted)


def _odometry(data: bytes) -> tuple[float, float, float, float, float]:
    """(x, y, θ, v, ω) of a nav_msgs/Odometry's CDR bytes."""
    pos = 16 + _U32.unpack_from(data, 12)[0]  # after the stamp and frame_id
    pos = _align(pos, 4)
    pos = _align(pos + 4 + _U32.unpack_from(data, pos)[0], 8)  # after child_frame_id
    x, y, _, _, _, qz, qw = _POSE.unpack_from(data, pos)
    v, _, _, _, _, omega = _TWIST.unpack_from(data, pos + 43 * 8)  # after the covariance
    return x, y, 2.0 * math.atan2(qz, qw), v, omega


_CHUNK_HEAD = struct.Struct("<QQQII")  # start, end, uncompressed size, crc, compression length
_RECORD = struct.Struct("<BQ")  # opcode, length
_MESSAGE = struct.Struct("<HIQ")  # channel, sequence, log time (publish time follows)
_MESSAGE_OP = 0x05
MAX_CHUNK_BYTES = 256 * 1024 * 1024  # a chunk inflated at most (the recorder writes 64 kB ones)


def _messages(
    path: Path, summary: Summary, topics: list[str]
) -> Iterator[tuple[str, Schema, int, bytes]]:
    """(topic, schema, log time in ns, CDR bytes) of every message on ``topics``, in file
    order: chunks without those topics are skipped unread, the others inflated whole and
    walked record by record (the general reader parses every record of every chunk)."""
    with open(path, "rb") as stream:
        wanted = {
            cid: (channel.topic, summary.schemas[channel.schema_id])
            for cid, channel in summary.channels.items()
            if channel.topic in topics and channel.schema_id in summary.schemas
        }
        inflate = zstandard.ZstdDecompressor()
        for index in sorted(summary.chunk_indexes, key=lambda c: c.chunk_start_offset):
            if not wanted.keys() & index.message_index_offsets.keys():
                continue
            stream.seek(index.chunk_start_offset + _RECORD.size)
            head = stream.read(_CHUNK_HEAD.size)
            _, _, size, _, name_length = _CHUNK_HEAD.unpack(head)
            if size > MAX_CHUNK_BYTES:
                raise RecordingError(
                    path, f"a chunk declares {size} bytes (at most {MAX_CHUNK_BYTES})"
                )
            compression = stream.read(name_length).decode()
            (length,) = struct.unpack("<Q", stream.read(8))
            raw = stream.read(length)
            if compression == "zstd":
                records = inflate.decompress(raw, max_output_size=size)
            elif compression == "":
                records = raw
            else:
                raise RecordingError(path, f"chunks compressed with {compression!r}")
            view = memoryview(records)
            pos, end = 0, len(records)
            while pos < end:
                opcode, length = _RECORD.unpack_from(records, pos)
                body = pos + _RECORD.size
                pos = body + length
                if opcode != _MESSAGE_OP:
                    continue
                channel, _, log_time = _MESSAGE.unpack_from(records, body)
                found = wanted.get(channel)
                if found is not None:
                    yield found[0], found[1], log_time, bytes(view[body + 22 : pos])


def _after_header(data: bytes) -> int:
    """Where the field after a std_msgs/Header starts (stamp, then the frame_id string)."""
    return _align(16 + _U32.unpack_from(data, 12)[0], 4)


def _string(data: bytes, pos: int) -> tuple[str, int]:
    """A CDR string at ``pos`` and where the next field starts (before alignment)."""
    n = _U32.unpack_from(data, pos)[0]
    return data[pos + 4 : pos + 3 + n].decode(), pos + 4 + n


def _mode(data: bytes) -> tuple[str, bool]:
    """(mode, e-stop) of a freelook_msgs/Mode."""
    mode, pos = _string(data, _after_header(data))
    return mode, bool(data[pos])


def _link_stats(data: bytes) -> tuple[int, int, int, int]:
    """(received, lost, CRC + authentication failures, sent) of a freelook_msgs/LinkStats
    (recordings from before the sent count have none: 0)."""
    _, pos = _string(data, _after_header(data))
    pos = _align(pos, 4)
    received, lost, _, _, crc, auth = _COUNTS.unpack_from(data, pos)
    pos += _COUNTS.size + 16  # and the four rates
    sent = _U32.unpack_from(data, pos)[0] if len(data) >= pos + 4 else 0
    return received, lost, crc + auth, sent


def _reference(data: bytes) -> tuple[float, float, float]:
    """(x, y, θ) of a freelook_msgs/Reference."""
    return _XYT.unpack_from(data, _align(_after_header(data), 8))


def _kind(kind: str) -> str:
    """A safety kind by name (early recordings wrote the flags' integer value)."""
    if kind.isdigit():
        value = int(kind)
        return "|".join(n for i, n in enumerate(_FLAG_NAMES) if value >> i & 1) or "none"
    return kind


def _grid(message: Any) -> World:
    info = message.info
    cols, rows = int(info.width), int(info.height)
    cells = np.frombuffer(bytes(np.asarray(message.data, dtype=np.int8)), dtype=np.int8)
    cells = cells[: rows * cols].reshape(rows, cols)
    unknown = cells < 0
    return World(
        "recorded map",
        cells >= 50,
        float(info.resolution),
        (float(info.origin.position.x), float(info.origin.position.y)),
        unknown=unknown if unknown.any() else None,
    )


def load_run(path: str | Path) -> RunData:
    """Read the streams a report needs from a recording; an empty, cut-off or damaged file
    raises :class:`RecordingError`."""
    path = Path(path)
    run = RunData()
    summary, run.metadata = _summary(path)  # a damaged file stops here, named
    rows: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    decoders: dict[int, Callable[[bytes], Any]] = {}
    factory = DecoderFactory()
    first = math.inf
    try:
        for topic, schema, log_time, data in _messages(path, summary, _TOPICS):
            t = log_time / 1e9
            first = min(first, t)
            if topic.startswith("/link/"):
                rows[topic].append(_packet(data))
            elif topic == "/odom":
                rows[topic].append((t, *_odometry(data)))
            elif topic == "/localization":
                rows[topic].append((t, *_odometry(data)[:3]))
            elif topic == "/cmd_vel":
                v, _, _, _, _, omega = _TWIST.unpack_from(data, 4)
                rows[topic].append((t, v, omega))
            elif topic == "/freelook/mode":
                run.modes.append((t, *_mode(data)))
            elif topic.startswith("/freelook/link_stats/"):
                rows[topic].append((t, *_link_stats(data)))
            elif topic == "/freelook/reference":
                rows[topic].append((t, *_reference(data)))
            else:
                decode = decoders.get(schema.id)
                if decode is None:
                    decode = factory.decoder_for("cdr", schema)
                    if decode is None:
                        raise RecordingError(path, f"no decoder for {schema.name}")
                    decoders[schema.id] = decode
                _take(run, topic, t, decode(data))
    except _READ_ERRORS as err:
        raise RecordingError(path, _damage(err)) from None
    run.t0 = first if math.isfinite(first) else 0.0
    run.pose = _array(rows["/localization"], 4)
    run.odom = _array(rows["/odom"], 6)
    run.cmd = _array(rows["/cmd_vel"], 3)
    run.reference = _array(rows["/freelook/reference"], 4)
    if len(run.pose) == 0 and len(run.odom):
        run.pose = run.odom[:, :4].copy()
    for direction in DIRECTIONS:
        packets = rows[f"/link/{direction}"]
        if packets:
            run.packets[direction] = _array(packets, 5)
        stats = rows[f"/freelook/link_stats/{direction}"]
        if stats:
            run.link_stats[direction] = _array(stats, 5)
    run.safety.sort()
    run.modes.sort()
    if run.world is None and run.metadata.get("world"):
        run.world = _named_world(run.metadata["world"])
    return run


def _take(run: RunData, topic: str, t: float, m: Any) -> None:
    """One decoded message of the rarer kinds."""
    if topic == "/freelook/safety":
        run.safety.append((t, _kind(m.kind), m.detail, int(m.zone), float(m.scale)))
    elif topic == "/map" and run.world is None:  # latched: the first is the map
        run.world = _grid(m)


def _named_world(name: str) -> World | None:
    """The world the metadata names (a recording from before maps were recorded)."""
    from freelook.maps import builtin_worlds, load_world

    return load_world(name) if name in builtin_worlds() else None


# -- figures --------------------------------------------------------------------------------


@dataclass(frozen=True)
class DirectionFigures:
    """Thesis Table 7.1 figures for one direction."""

    direction: str
    sent: int  # numbered by the sender (raw packets), or the sender's own count
    received: int
    lost: int
    drop_percent: float
    rejected: int  # refused by the receiver (CRC, authentication, replay, values)
    node_failures: int  # gaps over 1 s with nothing received
    operation_time: float  # s, first to last packet received
    mean_rate_hz: float
    source: str = "packets"  # "packets": from the raw packets; "robot": its telemetry counts


def direction_figures(packets: npt.NDArray[np.float64], direction: str) -> DirectionFigures:
    """Figures from a direction's raw packets: drop % from sequence gaps per stream (a
    sender that restarted its numbering starts a new run), node failures from receive gaps."""
    packets = np.asarray(packets, dtype=np.float64).reshape(-1, 5)
    accepted = packets[packets[:, 4] > 0]
    received = expected = 0
    for stream in np.unique(accepted[:, 2]):
        seqs = accepted[accepted[:, 2] == stream, 3].astype(np.int64)  # in receive order
        restarts = np.flatnonzero(np.diff(seqs) < -RESTART_DROP) + 1
        for run in np.split(seqs, restarts):
            unique = np.unique(run)
            received += len(unique)
            expected += int(unique[-1] - unique[0] + 1)
    lost = expected - received
    times = np.sort(packets[:, 0])
    duration = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    failures = int(np.count_nonzero(np.diff(times) > NODE_FAILURE_GAP))
    drop = 100.0 * lost / expected if expected else 0.0
    rate = (len(accepted) - 1) / duration if duration > 0 else 0.0
    rejected = len(packets) - len(accepted)
    return DirectionFigures(
        direction, expected, received, lost, drop, rejected, failures, duration, rate
    )


def reported_figures(stats: npt.NDArray[np.float64], direction: str) -> DirectionFigures:
    """Figures from the receiver's own counts over time (log time, received, lost, refused,
    sent): a node failure is over 1 s in which its received count did not grow."""
    t, received, lost, refused, sent = stats.T
    grew = np.flatnonzero(np.diff(received) > 0) + 1
    times = t[grew] if len(grew) else t[:1]
    duration = float(times[-1] - times[0]) if len(times) > 1 else 0.0
    failures = int(np.count_nonzero(np.diff(times) > NODE_FAILURE_GAP))
    n_received, n_lost = int(received.max()), int(lost.max())
    total = n_received + n_lost
    n_sent = int(sent.max()) or total
    rate = (received[grew[-1]] - received[grew[0]]) / duration if duration > 0 else 0.0
    return DirectionFigures(
        direction,
        n_sent,
        n_received,
        n_lost,
        100.0 * n_lost / total if total else 0.0,
        int(refused.max()),
        failures,
        duration,
        float(rate),
        "robot",
    )


def link_table(run: RunData) -> list[DirectionFigures]:
    """Table 7.1: both directions, from raw packets where the receiver recorded them."""
    rows = []
    for direction in DIRECTIONS:
        if direction in run.packets:
            rows.append(direction_figures(run.packets[direction], direction))
        elif direction in run.link_stats:
            rows.append(reported_figures(run.link_stats[direction], direction))
    return rows


def _commanded_before(run: RunData, t: float) -> bool:
    """Whether the robot was commanded to move in the second before ``t``."""
    if not len(run.cmd):
        return True
    window = run.cmd[(run.cmd[:, 0] >= t - 1.0) & (run.cmd[:, 0] < t)]
    return bool(np.any(np.abs(window[:, 1:]) > 1e-3))


def safety_episodes(run: RunData) -> list[SafetyEpisode]:
    """The run's safety events: reports of one kind merged while they keep coming. A
    watchdog report while nothing was commanded (no command yet, or the operator stopped and
    only heartbeats come) stopped nothing and is not an event."""
    open_: dict[str, list[float]] = {}
    episodes: list[SafetyEpisode] = []
    for t, kind, _, _, scale in run.safety:
        current = open_.get(kind)
        if current is not None and t - current[1] <= EPISODE_GAP:
            current[1], current[2] = t, min(current[2], scale)
            continue
        if current is not None:
            episodes.append(SafetyEpisode(current[0], current[1], kind, current[2]))
        open_[kind] = [t, t, scale]
    episodes.extend(SafetyEpisode(a, b, kind, s) for kind, (a, b, s) in open_.items())
    return sorted(
        (e for e in episodes if e.kind != "watchdog" or _commanded_before(run, e.start)),
        key=lambda e: e.start,
    )


def _distance(run: RunData) -> float:
    track = run.odom if len(run.odom) else run.pose
    if len(track) < 2:
        return 0.0
    return float(np.sum(np.hypot(np.diff(track[:, 1]), np.diff(track[:, 2]))))


def summary_lines(run: RunData, table: list[DirectionFigures] | None = None) -> list[str]:
    """What a user reads first: how far, how long, how fast, what safety did, how the link
    held up, and what was unusual."""
    table = link_table(run) if table is None else table
    lines = [f"Drove {_distance(run):.2f} m in {run.duration:.1f} s"]
    if len(run.odom):
        speeds = np.abs(run.odom[:, 4])
        moving = speeds[speeds > 0.01]
        mean = f", {np.mean(moving):.2f} m/s on average while moving" if len(moving) else ""
        lines[0] += f"; top speed {speeds.max():.2f} m/s{mean}."
    else:
        lines[0] += "."
    episodes = safety_episodes(run)
    if episodes:
        kinds: dict[str, list[SafetyEpisode]] = defaultdict(list)
        for e in episodes:
            kinds[e.kind].append(e)
        parts = [
            f"{kind} {len(es)} × ({sum(e.end - e.start for e in es):.1f} s)"
            for kind, es in sorted(kinds.items())
        ]
        lines.append("Safety events: " + ", ".join(parts) + ".")
    else:
        lines.append("Safety events: none.")
    if table:
        lines.append(
            "Link drop: "
            + ", ".join(
                f"{f.direction.replace('_to_', ' → ').replace('_', ' ')} {f.drop_percent:.2f} %"
                for f in table
            )
            + "."
        )
    unusual = []
    for e in episodes:
        if e.stop and e.kind != "zone":
            unusual.append(f"{e.kind} stop at {e.start - run.t0:.1f} s ({e.end - e.start:.1f} s)")
    for f in table:
        name = f.direction.replace("_to_", " → ").replace("_", " ")
        if f.rejected:
            unusual.append(f"{f.rejected} packets refused ({name})")
        if f.node_failures:
            unusual.append(f"{f.node_failures} node failures ({name})")
    engaged = [t for t, _, estop in run.modes if estop]
    if engaged:
        unusual.append(f"e-stop engaged at {engaged[0] - run.t0:.1f} s")
    lines.append("Unusual: " + ("; ".join(unusual[:12]) if unusual else "nothing") + ".")
    return lines


# -- plots ----------------------------------------------------------------------------------


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any, dpi: int = 100) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=dpi)
    _pyplot().close(fig)
    return buffer.getvalue()


def path_limits(
    xs: npt.NDArray[np.float64], ys: npt.NDArray[np.float64], *, least: float = 3.0
) -> tuple[float, float, float, float]:
    """(x0, x1, y0, y1) around the path and its surroundings: a margin of 15 % or 1 m, and
    at least ``least`` metres on each axis (a straight path does not collapse to a line)."""
    limits: list[float] = []
    for values in (xs, ys):
        low, high = float(np.min(values)), float(np.max(values))
        span = high - low
        margin = max(1.0, 0.15 * span)
        low, high = low - margin, high + margin
        if high - low < least:
            middle = (low + high) / 2
            low, high = middle - least / 2, middle + least / 2
        limits.extend((low, high))
    return limits[0], limits[1], limits[2], limits[3]


def _plot_path(run: RunData, episodes: list[SafetyEpisode]) -> bytes:
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(8, 6.5))
    xs, ys = run.pose[:, 1], run.pose[:, 2]
    if len(run.reference):
        xs = np.concatenate((xs, run.reference[:, 1]))
        ys = np.concatenate((ys, run.reference[:, 2]))
    x0, x1, y0, y1 = path_limits(xs, ys)
    world = run.world
    if world is not None:
        wx0, wx1, wy0, wy1 = world.extent
        shade = np.where(world.obstacles(), 0.15, 0.97)
        if world.unknown is not None:
            shade[world.unknown] = 0.75
        ax.imshow(
            shade,
            origin="lower",
            extent=(wx0, wx1, wy0, wy1),
            cmap="gray",
            vmin=0.0,
            vmax=1.0,
            interpolation="nearest",
            zorder=0,
            label="map",
        )
        ax.fill([], [], color="0.15", label="obstacle (robot's map)")
    if len(run.reference):
        ax.plot(run.reference[:, 1], run.reference[:, 2], "--", color="orange", label="reference")
    ax.plot(run.pose[:, 1], run.pose[:, 2], color="tab:blue", lw=1.6, label="robot (localized)")
    ax.plot(*run.pose[0, 1:3], "o", color="tab:green", ms=7, label="start")
    ax.plot(*run.pose[-1, 1:3], "s", color="tab:blue", ms=6, label="end")
    times = run.pose[:, 0]
    for stop, style, colour, label in (
        (False, "^", "gold", "safety slowdown"),
        (True, "X", "red", "safety stop"),
    ):
        picked = [e for e in episodes if e.stop == stop]
        if not picked:
            continue
        index = np.clip(np.searchsorted(times, [e.start for e in picked]), 0, len(times) - 1)
        ax.plot(
            run.pose[index, 1],
            run.pose[index, 2],
            style,
            color=colour,
            mec="black",
            mew=0.6,
            ms=9,
            ls="none",
            label=f"{label} ({len(picked)})",
            zorder=5,
        )
    ax.set_xlim(x0, x1)
    ax.set_ylim(y0, y1)
    ax.set_aspect("equal", adjustable="box")
    ax.set_xlabel("x [m]")
    ax.set_ylabel("y [m]")
    ax.legend(loc="best", fontsize=8, framealpha=0.9)
    title = "Path on the robot's map" if world is not None else "Path (no map recorded)"
    ax.set_title(title)
    fig.tight_layout()
    return _png(fig, 110)


def _plot_tracking(run: RunData) -> tuple[bytes, float]:
    plt = _pyplot()
    fig, axes = plt.subplots(3, 2, figsize=(10, 7), sharex=True)
    t = run.pose[:, 0] - run.t0
    tr = run.reference[:, 0] - run.t0
    for row, (idx, name) in enumerate(((1, "x [m]"), (2, "y [m]"), (3, "θ [deg]"))):
        scale = 180 / math.pi if idx == 3 else 1.0
        axes[row, 0].plot(t, run.pose[:, idx] * scale, label="robot")
        axes[row, 0].plot(tr, run.reference[:, idx] * scale, "--", label="reference")
        axes[row, 0].set_ylabel(name)
        err = run.reference[:, idx] - np.interp(tr, t, run.pose[:, idx])
        if idx == 3:
            err = (err + math.pi) % (2 * math.pi) - math.pi
        axes[row, 1].plot(tr, err * (scale if idx == 3 else 1000.0))
        axes[row, 1].set_ylabel("error [deg]" if idx == 3 else "error [mm]")
    ex = run.reference[:, 1] - np.interp(run.reference[:, 0], run.pose[:, 0], run.pose[:, 1])
    ey = run.reference[:, 2] - np.interp(run.reference[:, 0], run.pose[:, 0], run.pose[:, 2])
    axes[0, 0].legend(fontsize=8)
    axes[2, 0].set_xlabel("t [s]")
    axes[2, 1].set_xlabel("t [s]")
    fig.suptitle("Tracking against the reference")
    fig.tight_layout()
    return _png(fig), float(np.max(np.hypot(ex, ey)))


def _plot_velocities(run: RunData) -> bytes:
    plt = _pyplot()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    if len(run.cmd):
        t = run.cmd[:, 0] - run.t0
        a1.step(t, run.cmd[:, 1], where="post", label="commanded (after safety)")
        a2.step(t, np.degrees(run.cmd[:, 2]), where="post", label="commanded (after safety)")
    if len(run.odom):
        a1.plot(run.odom[:, 0] - run.t0, run.odom[:, 4], label="measured")
        a2.plot(run.odom[:, 0] - run.t0, np.degrees(run.odom[:, 5]), label="measured")
    a1.set_ylabel("v [m/s]")
    a2.set_ylabel("ω [deg/s]")
    a2.set_xlabel("t [s]")
    a1.legend(fontsize=8)
    fig.suptitle("Commanded and measured velocities")
    fig.tight_layout()
    return _png(fig)


def _rates(packets: npt.NDArray[np.float64], edges: npt.NDArray[np.float64], t0: float) -> Any:
    """Packets received and the drop % per one-second bin, from sequence gaps."""
    accepted = packets[packets[:, 4] > 0]
    counts, _ = np.histogram(accepted[:, 0] - t0, edges)
    lost = np.zeros(len(edges) - 1)
    for stream in np.unique(accepted[:, 2]):
        rows = accepted[accepted[:, 2] == stream]
        gaps = np.diff(rows[:, 3])
        # a gap's packets count as lost when the packet after it arrives
        missing = np.clip(np.where(gaps < -RESTART_DROP, 0, gaps - 1), 0, None)
        lost += np.histogram(rows[1:, 0] - t0, edges, weights=missing)[0]
    total = counts + lost
    return counts, np.divide(100.0 * lost, total, out=np.zeros(len(total)), where=total > 0)


def _plot_link(run: RunData) -> bytes:
    plt = _pyplot()
    fig, (a1, a2) = plt.subplots(2, 1, figsize=(9, 5), sharex=True)
    end = max(run.duration, 1.0)
    edges = np.arange(0.0, math.ceil(end) + 1.0, 1.0)
    for direction in DIRECTIONS:
        name = direction.replace("_to_", " → ").replace("_", " ")
        if direction in run.packets:
            counts, drop = _rates(run.packets[direction], edges, run.t0)
        elif direction in run.link_stats and len(run.link_stats[direction]) > 1:
            stats = run.link_stats[direction]
            t = stats[:, 0] - run.t0
            received = np.interp(edges, t, stats[:, 1])
            lost = np.interp(edges, t, stats[:, 2])
            counts, lost_per = np.diff(received), np.diff(lost)
            total = counts + lost_per
            drop = np.divide(100.0 * lost_per, total, out=np.zeros(len(total)), where=total > 0)
            name += " (robot's count)"
        else:
            continue
        a1.step(edges[:-1], counts, where="post", label=name)
        a2.step(edges[:-1], drop, where="post", label=name)
    a1.set_ylabel("packets / s")
    a2.set_ylabel("drop [%]")
    a2.set_xlabel("t [s]")
    a1.legend(fontsize=8)
    fig.suptitle("Rx rates and drops per direction")
    fig.tight_layout()
    return _png(fig)


# -- the page -------------------------------------------------------------------------------


def _img(png: bytes, alt: str) -> str:
    data = base64.b64encode(png).decode()
    return f'<img src="data:image/png;base64,{data}" alt="{html.escape(alt)}">'


def build_report(path: str | Path, out_dir: str | Path) -> Path:
    """Write ``index.html`` (one file: plots inline) and ``link_table.json`` for the run at
    ``path`` into ``out_dir``."""
    run = load_run(path)  # first: a damaged file leaves no empty report folder behind
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    table = link_table(run)
    (out / "link_table.json").write_text(
        json.dumps([asdict(f) for f in table], indent=2) + "\n", encoding="utf-8"
    )
    episodes = safety_episodes(run)
    sections = []
    if len(run.pose):
        shown = (
            f' data-map="{run.world.shape[1]}x{run.world.shape[0]} cells"'
            if run.world is not None
            else ""
        )
        sections.append(
            f'<h2>Path</h2><figure id="path"{shown}>'
            + _img(_plot_path(run, episodes), "path on the map")
            + "</figure>"
        )
    if len(run.reference) and len(run.pose) > 1:
        png, max_error = _plot_tracking(run)
        sections.append(
            f"<h2>Tracking</h2><p>Max position error against the reference: "
            f"<b>{max_error * 1000:.1f} mm</b></p>"
            f'<figure id="tracking">{_img(png, "x, y, θ tracking")}</figure>'
        )
    if len(run.cmd) or len(run.odom):
        sections.append(
            '<h2>Velocities</h2><figure id="velocities">'
            + _img(_plot_velocities(run), "commanded and measured velocities")
            + "</figure>"
        )
    if run.packets or run.link_stats:
        sections.append(
            '<h2>Link over time</h2><figure id="link">'
            + _img(_plot_link(run), "Rx rates and drops")
            + "</figure>"
        )
    rows = "".join(
        f'<tr data-direction="{f.direction}"><td>'
        f"{html.escape(f.direction.replace('_to_', ' → ').replace('_', ' '))}</td>"
        f"<td>{f.sent}</td><td>{f.received}</td><td>{f.lost}</td><td>{f.drop_percent:.2f}</td>"
        f"<td>{f.node_failures}</td><td>{f.operation_time:.1f}</td><td>{f.mean_rate_hz:.1f}</td>"
        f"<td>{f.rejected}</td><td>{'raw packets' if f.source == 'packets' else 'robot'}</td></tr>"
        for f in table
    )
    meta = "".join(
        f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>"
        for k, v in sorted(run.metadata.items())
    )
    summary = "".join(f"<li>{html.escape(line)}</li>" for line in summary_lines(run, table))
    page = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>freelook run report</title>
<style>body{{font:14px system-ui,sans-serif;max-width:1100px;margin:20px auto;color:#222}}
table{{border-collapse:collapse;margin:6px 0}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}
#summary{{background:#f4f6f8;border:1px solid #d8dee4;padding:8px 8px 8px 28px}}
figure{{margin:0}}img{{max-width:100%;border:1px solid #ddd;margin:6px 0}}</style>
</head><body>
<h1>Run report</h1>
<p>{html.escape(Path(path).name)}</p>
<ul id="summary">{summary}</ul>
<table>{meta}</table>
<h2>Link (thesis Table 7.1)</h2>
<table id="link-table"><tr><th>direction</th><th>sent</th><th>received</th><th>lost</th>
<th>drop %</th><th>node failures</th><th>operation time [s]</th><th>rate [Hz]</th>
<th>refused</th><th>from</th></tr>{rows}</table>
{"".join(sections)}
</body></html>
"""
    index = out / "index.html"
    index.write_text(page, encoding="utf-8")
    return index
