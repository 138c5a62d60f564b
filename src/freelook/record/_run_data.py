"""The streams of one recorded run that a report reads, as numpy arrays (:class:`RunData`).

Reading is the slow part of a long run: the many small messages (link packets, odometry,
commands, modes, link statistics, the reference) give only the fields a report uses, read at
offsets worked out from the schema the recording carries (:class:`~._cdr.CdrFields`); the rare
ones (safety events, the map) go through the ROS 2 decoder; topics the report does not draw
(scans, sonar, images) are never read.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
from mcap.records import Schema
from mcap_ros2.decoder import DecoderFactory

from freelook.maps import World
from freelook.record._cdr import CdrFields
from freelook.record._chunks import messages_on
from freelook.record._reader import _READ_ERRORS, RecordingError, _damage, _summary

__all__ = ["DIRECTIONS", "TELEMETRY_KINDS", "RunData", "load_run"]

DIRECTIONS = ("operator_to_robot", "robot_to_operator")
_ODOMETRY = (
    "pose.pose.position.x",
    "pose.pose.position.y",
    "pose.pose.orientation.z",
    "pose.pose.orientation.w",
    "twist.twist.linear.x",
    "twist.twist.angular.z",
)
_PACKET = (
    "stream",
    "sequence",
    "send_stamp.sec",
    "send_stamp.nanosec",
    "receive_stamp.sec",
    "receive_stamp.nanosec",
    "accepted",
    "kind",
)
#: what a packet's kind is when it carries the robot's telemetry (native, thesis)
TELEMETRY_KINDS = frozenset({"Telemetry", "PositionReport"})
#: link statistics: received, lost, CRC and authentication failures, sent (recordings from
#: before the sent count have none: 0)
_LINK_STATS = ("packets_received", "packets_lost", "crc_failures", "auth_failures", "packets_sent")
#: topic → the fields read from its messages; the other topics are decoded whole
_FIELDS: dict[str, tuple[str, ...]] = {
    "/localization": _ODOMETRY,
    "/odom": _ODOMETRY,
    "/cmd_vel": ("linear.x", "angular.z"),
    "/freelook/reference": ("x", "y", "theta"),
    "/freelook/mode": ("mode", "estop"),
    **{f"/freelook/link_stats/{d}": _LINK_STATS for d in DIRECTIONS},
    **{f"/link/{d}": _PACKET for d in DIRECTIONS},
}
_TOPICS = [*_FIELDS, "/freelook/safety", "/map"]
_FLAG_NAMES = ("zone", "approach", "watchdog", "estop", "bumper", "hardware")


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
    #: per direction: rows of (receive time, send time, stream, sequence, accepted,
    #: telemetry): every packet the direction's receiver recorded, of any kind; the last
    #: column 1 for the robot's telemetry (one message each), 0 for the rest (a camera frame
    #: is many packets)
    packets: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict)
    #: per direction: rows of (log time, received, lost, crc + auth failures, sent) as the
    #: receiver reported them (the robot's, in telemetry) with the sender's count beside
    link_stats: dict[str, npt.NDArray[np.float64]] = field(default_factory=dict)
    world: World | None = None  # the robot's map (/map), else the world the metadata names

    @property
    def duration(self) -> float:
        times = [a[-1, 0] for a in (self.pose, self.odom, self.cmd) if len(a)]
        return max(times) - self.t0 if times else 0.0


def _row(topic: str, t: float, v: tuple[Any, ...]) -> tuple[float, ...]:
    """A row of ``topic``'s array from the fields :data:`_FIELDS` reads."""
    if topic.startswith("/link/"):
        stream, seq, s_sec, s_ns, r_sec, r_ns, accepted, kind = v
        telemetry = kind in TELEMETRY_KINDS
        return r_sec + r_ns * 1e-9, s_sec + s_ns * 1e-9, stream, seq, bool(accepted), telemetry
    if topic == "/odom":
        x, y, qz, qw, speed, omega = v
        return t, x, y, 2.0 * math.atan2(qz, qw), speed, omega
    if topic == "/localization":
        x, y, qz, qw, _, _ = v
        return t, x, y, 2.0 * math.atan2(qz, qw)
    if topic.startswith("/freelook/link_stats/"):
        received, lost, crc, auth, sent = v
        return t, received, lost, crc + auth, sent
    return (t, *v)  # /cmd_vel, /freelook/reference


class _Readers:
    """A field reader per (topic, schema), and a ROS 2 decoder per schema for the rest."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fields: dict[tuple[str, int], Callable[[bytes], tuple[Any, ...]]] = {}
        self.decoders: dict[int, Callable[[bytes], Any]] = {}
        self.factory = DecoderFactory()

    def read(self, topic: str, schema: Schema) -> Callable[[bytes], tuple[Any, ...]]:
        found = self.fields.get((topic, schema.id))
        if found is None:
            try:
                reader = CdrFields(schema.name, schema.data.decode(), _FIELDS[topic])
            except (ValueError, UnicodeDecodeError) as err:
                raise RecordingError(self.path, f"{topic}: {schema.name}: {err}") from None
            found = self.fields[topic, schema.id] = reader.read
        return found

    def decode(self, schema: Schema) -> Callable[[bytes], Any]:
        found = self.decoders.get(schema.id)
        if found is None:
            found = self.factory.decoder_for("cdr", schema)
            if found is None:
                raise RecordingError(self.path, f"no decoder for {schema.name}")
            self.decoders[schema.id] = found
        return found


def load_run(path: str | Path) -> RunData:
    """Read the streams a report needs from a recording; an empty, cut-off or damaged file
    raises :class:`RecordingError`."""
    path = Path(path)
    run = RunData()
    summary, run.metadata = _summary(path)  # a damaged file stops here, named
    rows: dict[str, list[tuple[float, ...]]] = defaultdict(list)
    readers = _Readers(path)
    first = math.inf
    try:
        for topic, schema, log_time, data in messages_on(path, summary, _TOPICS):
            t = log_time / 1e9
            first = min(first, t)
            if topic not in _FIELDS:
                _take(run, topic, t, readers.decode(schema)(data))
                continue
            values = readers.read(topic, schema)(data)
            if topic == "/freelook/mode":
                run.modes.append((t, values[0], bool(values[1])))
            else:
                rows[topic].append(_row(topic, t, values))
    except _READ_ERRORS as err:
        raise RecordingError(path, _damage(err)) from None
    run.t0 = first if math.isfinite(first) else 0.0
    _arrays(run, rows)
    run.safety.sort()
    run.modes.sort()
    if run.world is None and run.metadata.get("world"):
        run.world = _named_world(run.metadata["world"])
    return run


def _arrays(run: RunData, rows: dict[str, list[tuple[float, ...]]]) -> None:
    """The rows read, as the run's arrays sorted by time."""
    run.pose = _array(rows["/localization"], 4)
    run.odom = _array(rows["/odom"], 6)
    run.cmd = _array(rows["/cmd_vel"], 3)
    run.reference = _array(rows["/freelook/reference"], 4)
    if len(run.pose) == 0 and len(run.odom):
        run.pose = run.odom[:, :4].copy()
    for direction in DIRECTIONS:
        packets = rows[f"/link/{direction}"]
        if packets:
            run.packets[direction] = _array(packets, 6)
        stats = rows[f"/freelook/link_stats/{direction}"]
        if stats:
            run.link_stats[direction] = _array(stats, 5)


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
