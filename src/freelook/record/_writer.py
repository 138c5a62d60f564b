"""Writing runs to MCAP: raw link packets with both time stamps, and decoded ROS 2 streams.

One time base: every message's MCAP *log time* is the recorder's own clock (wall clock by
default) when the message was handed to it, whatever clock its sender used; the sender's stamp
(the time argument of each stream method, also in the message header) is its *publish time*.
A recording is therefore one timeline even when the robot's and the station's clocks disagree.

The writer is the I/O edge of recording. It emits small zstd chunks and closes a chunk (and
flushes the file) at least every ``flush_interval`` seconds of log time, so a process killed
mid-run loses at most the chunk in progress; :func:`freelook.record.repair` recovers the rest.
:class:`BackgroundRecorder` puts a bounded queue and a thread in front of it so that recording
never blocks the control path: when the queue is full, the newest item is dropped and counted.
The log time of a queued write is taken when it is submitted, not when the thread drains it.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import math
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import numpy as np
import numpy.typing as npt
from mcap.writer import CompressionType
from mcap.writer import Writer as McapWriter
from mcap_ros2._dynamic import serialize_dynamic

from freelook.link import PacketRecord, SafetyFlags, Telemetry
from freelook.maps import World
from freelook.record._arm import ArmRecording, quaternion
from freelook.record._schemas import full_definition

__all__ = ["BackgroundRecorder", "Direction", "Recorder", "RecorderStats"]

log = logging.getLogger(__name__)

Direction = Literal["operator_to_robot", "robot_to_operator"]
_DIRECTION_CODE = {"operator_to_robot": 0, "robot_to_operator": 1}
_IDENTITY_COVARIANCE = [0.0] * 36
#: rosbag2's QoS for a latched topic (transient local, keep last 1): a player or a viewer that
#: starts later in the file still gets the topic's one message
_LATCHED_QOS = (
    "- history: 1\n  depth: 1\n  reliability: 1\n  durability: 1\n"
    "  deadline:\n    sec: 2147483647\n    nsec: 4294967295\n"
    "  lifespan:\n    sec: 2147483647\n    nsec: 4294967295\n"
    "  liveliness: 1\n"
    "  liveliness_lease_duration:\n    sec: 2147483647\n    nsec: 4294967295\n"
    "  avoid_ros_namespace_conventions: false\n"
)
LATCHED_TOPICS = frozenset({"/map", "/robot_description", "/tf_static"})


def _stamp(t: float) -> dict[str, int]:
    sec = math.floor(t)
    nanosec = min(999_999_999, round((t - sec) * 1e9))
    return {"sec": int(sec), "nanosec": int(nanosec)}


def _header(t: float, frame_id: str) -> dict[str, Any]:
    return {"stamp": _stamp(t), "frame_id": frame_id}


def _yaw_quaternion(theta: float) -> dict[str, float]:
    return {"x": 0.0, "y": 0.0, "z": math.sin(theta / 2), "w": math.cos(theta / 2)}


def _fields(message: object) -> dict[str, object]:
    """A decoded message for the recording's JSON column (long arrays summarised)."""
    if not dataclasses.is_dataclass(message) or isinstance(message, type):
        return {}
    out = dataclasses.asdict(message)
    for key, value in list(out.items()):
        if isinstance(value, tuple) and len(value) > 16:
            out[key] = f"{len(value)} values"
        elif isinstance(value, bytes):
            out[key] = f"{len(value)} bytes"
    return out


def _ns(t: float) -> int:
    return max(0, round(t * 1e9))


class Recorder:
    """Synchronous MCAP writer with one method per recorded stream (times in seconds).

    Each stream method takes the sender's stamp (publish time); the log time is ``clock()``
    at the write, or the time pinned by :meth:`logged_at`.
    """

    def __init__(
        self,
        output: str | Path | IO[bytes],
        *,
        chunk_size: int = 64 * 1024,
        flush_interval: float = 0.5,
        metadata: dict[str, str] | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.clock = clock
        self._pinned: float | None = None
        if isinstance(output, str | Path):
            self._stream: IO[bytes] = open(output, "wb")  # noqa: SIM115 - closed in close()
            self._owns_stream = True
        else:
            self._stream = output
            self._owns_stream = False
        self._writer = McapWriter(
            self._stream, chunk_size=chunk_size, compression=CompressionType.ZSTD
        )
        self._writer.start(profile="ros2", library="freelook")
        if metadata:
            self._writer.add_metadata("freelook", metadata)
        self._flush_interval = flush_interval
        self._last_flush: float | None = None
        self._schemas: dict[str, tuple[int, Callable[[Any], bytes]]] = {}
        self._channels: dict[str, int] = {}
        self._sequence: dict[str, int] = {}
        self.messages_written = 0
        #: Messages known to be on disk (their chunk was closed and the file flushed).
        self.messages_flushed = 0
        self._closed = False

    # -- plumbing ----------------------------------------------------------------------------

    def _encoder(self, typename: str) -> tuple[int, Callable[[Any], bytes]]:
        found = self._schemas.get(typename)
        if found is None:
            package, name = typename.split("/")
            schema_name = f"{package}/msg/{name}"
            text = full_definition(typename)
            schema_id = self._writer.register_schema(schema_name, "ros2msg", text.encode())
            encoder = serialize_dynamic(schema_name, text)[schema_name]
            found = (schema_id, encoder)
            self._schemas[typename] = found
        return found

    @contextmanager
    def logged_at(self, log_time: float) -> Iterator[None]:
        """Writes inside the block are logged at ``log_time`` (e.g. when they were queued)."""
        self._pinned = log_time
        try:
            yield
        finally:
            self._pinned = None

    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        """Write one message (a dict of fields) of ROS 2 type ``pkg/Type`` on ``topic``,
        stamped ``t`` by its sender (publish time), logged on the recorder's clock."""
        if self._closed:
            raise ValueError("recorder is closed")
        log_time = self._pinned if self._pinned is not None else self.clock()
        publish_ns = _ns(t)  # a stamp that is not a time (NaN, inf) is refused here
        schema_id, encoder = self._encoder(typename)
        channel_id = self._channels.get(topic)
        if channel_id is None:
            metadata = {"offered_qos_profiles": _LATCHED_QOS} if topic in LATCHED_TOPICS else {}
            channel_id = self._writer.register_channel(topic, "cdr", schema_id, metadata)
            self._channels[topic] = channel_id
        sequence = self._sequence.get(topic, 0)
        self._sequence[topic] = sequence + 1
        self._writer.add_message(channel_id, _ns(log_time), encoder(message), publish_ns, sequence)
        self.messages_written += 1
        if self._last_flush is None:
            self._last_flush = log_time
        elif log_time - self._last_flush >= self._flush_interval:
            self.flush()
            self._last_flush = log_time

    def flush(self) -> None:
        """Close the chunk in progress and flush it to the file."""
        self._writer.flush()  # type: ignore[no-untyped-call]
        self.messages_flushed = self.messages_written

    def close(self) -> None:
        """Write the summary and close the file (idempotent)."""
        if self._closed:
            return
        self._closed = True
        self._writer.finish()  # type: ignore[no-untyped-call]
        if self._owns_stream:
            self._stream.close()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- streams -----------------------------------------------------------------------------

    def packet(
        self,
        direction: Direction,
        data: bytes,
        *,
        send_time: float,
        receive_time: float,
        wire: str,
        accepted: bool,
        kind: str,
        decoded: dict[str, Any] | None = None,
        stream: int = 0,
        sequence: int = 0,
    ) -> None:
        """One link packet as its receiver saw it: raw bytes, both stamps, decode result;
        published at its send time."""
        message = {
            "direction": _DIRECTION_CODE[direction],
            "wire": wire,
            "stream": stream,
            "sequence": sequence,
            "send_stamp": _stamp(send_time),
            "receive_stamp": _stamp(receive_time),
            "accepted": accepted,
            "kind": kind,
            "decoded": json.dumps(decoded or {}, separators=(",", ":"), default=str),
            "data": bytes(data),
        }
        self.write(f"/link/{direction}", "freelook_msgs/Packet", message, send_time)

    def link_packet(
        self, direction: Direction, record: PacketRecord, *, wire: str, clock_offset: float = 0.0
    ) -> None:
        """A packet as a link session saw it; ``clock_offset`` turns the session's clock into
        the recording's (wall-clock) time."""
        decoded = record.decoded
        self.packet(
            direction,
            record.data,
            send_time=record.send_time + clock_offset,
            receive_time=record.receive_time + clock_offset,
            wire=wire,
            accepted=record.accepted,
            kind=record.kind,
            decoded=_fields(decoded.message) if decoded is not None else None,
            stream=decoded.stream if decoded is not None else 0,
            sequence=(decoded.sequence or 0) if decoded is not None else 0,
        )

    def cmd_vel(self, t: float, v: float, omega: float, topic: str = "/cmd_vel") -> None:
        twist = {
            "linear": {"x": v, "y": 0.0, "z": 0.0},
            "angular": {"x": 0.0, "y": 0.0, "z": omega},
        }
        self.write(topic, "geometry_msgs/Twist", twist, t)

    def odom(
        self,
        t: float,
        x: float,
        y: float,
        theta: float,
        v: float,
        omega: float,
        *,
        topic: str = "/odom",
        frame_id: str = "odom",
        child_frame_id: str = "base_link",
        covariance: Sequence[float] | None = None,
    ) -> None:
        pose = {"position": {"x": x, "y": y, "z": 0.0}, "orientation": _yaw_quaternion(theta)}
        twist = {
            "linear": {"x": v, "y": 0.0, "z": 0.0},
            "angular": {"x": 0.0, "y": 0.0, "z": omega},
        }
        message = {
            "header": _header(t, frame_id),
            "child_frame_id": child_frame_id,
            "pose": {"pose": pose, "covariance": list(covariance or _IDENTITY_COVARIANCE)},
            "twist": {"twist": twist, "covariance": list(_IDENTITY_COVARIANCE)},
        }
        self.write(topic, "nav_msgs/Odometry", message, t)

    def scan(
        self,
        t: float,
        ranges: Sequence[float],
        *,
        angle_min: float,
        angle_increment: float,
        range_min: float,
        range_max: float,
        scan_time: float = 0.0,
        frame_id: str = "laser",
    ) -> None:
        n = len(ranges)
        message = {
            "header": _header(t, frame_id),
            "angle_min": angle_min,
            "angle_max": angle_min + angle_increment * max(0, n - 1),
            "angle_increment": angle_increment,
            "time_increment": 0.0,
            "scan_time": scan_time,
            "range_min": range_min,
            "range_max": range_max,
            "ranges": [float(r) for r in ranges],
            "intensities": [],
        }
        self.write("/scan", "sensor_msgs/LaserScan", message, t)

    def sonar(
        self,
        t: float,
        index: int,
        distance: float,
        *,
        field_of_view: float,
        min_range: float,
        max_range: float,
    ) -> None:
        message = {
            "header": _header(t, f"sonar_{index}"),
            "radiation_type": 0,
            "field_of_view": field_of_view,
            "min_range": min_range,
            "max_range": max_range,
            "range": distance,
        }
        self.write("/sonar", "sensor_msgs/Range", message, t)

    def image(
        self,
        t: float,
        jpeg: bytes,
        frame_id: str = "camera",
        topic: str = "/camera/image/compressed",
    ) -> None:
        """A camera's JPEG frame; each camera stream on its own topic."""
        message = {"header": _header(t, frame_id), "format": "jpeg", "data": bytes(jpeg)}
        self.write(topic, "sensor_msgs/CompressedImage", message, t)

    def tf(
        self, t: float, x: float, y: float, theta: float, parent: str, child: str, z: float = 0.0
    ) -> None:
        transform = {
            "header": _header(t, parent),
            "child_frame_id": child,
            "transform": {
                "translation": {"x": x, "y": y, "z": z},
                "rotation": _yaw_quaternion(theta),
            },
        }
        self.write("/tf", "tf2_msgs/TFMessage", {"transforms": [transform]}, t)

    def transforms(
        self,
        t: float,
        links: Sequence[tuple[str, str, npt.NDArray[np.float64]]],
        *,
        static: bool = False,
    ) -> None:
        """Rigid transforms (parent, child, parent → child 4×4) in one ``tf2_msgs/TFMessage``
        on ``/tf``, or on the latched ``/tf_static`` for those that never change."""
        transforms = [
            {
                "header": _header(t, parent),
                "child_frame_id": child,
                "transform": {
                    "translation": dict(zip("xyz", matrix[:3, 3].tolist(), strict=True)),
                    "rotation": quaternion(matrix[:3, :3]),
                },
            }
            for parent, child, matrix in links
        ]
        self.write(
            "/tf_static" if static else "/tf", "tf2_msgs/TFMessage", {"transforms": transforms}, t
        )

    def joint_states(
        self,
        t: float,
        names: Sequence[str],
        positions: Sequence[float],
        velocities: Sequence[float],
        topic: str = "/joint_states",
    ) -> None:
        """``sensor_msgs/JointState`` on ``topic`` (no efforts)."""
        message = {
            "header": _header(t, ""),
            "name": list(names),
            "position": [float(x) for x in positions],
            "velocity": [float(x) for x in velocities],
            "effort": [],
        }
        self.write(topic, "sensor_msgs/JointState", message, t)

    def mode(self, t: float, mode: str, estop: bool, controller: str) -> None:
        message = {
            "header": _header(t, "base_link"),
            "mode": mode,
            "estop": estop,
            "controller": controller,
        }
        self.write("/freelook/mode", "freelook_msgs/Mode", message, t)

    def safety_event(self, t: float, kind: str, detail: str, zone: int, scale: float) -> None:
        message = {
            "header": _header(t, "base_link"),
            "kind": kind,
            "detail": detail,
            "zone": zone,
            "scale": scale,
        }
        self.write("/freelook/safety", "freelook_msgs/SafetyEvent", message, t)

    def occupancy_grid(self, t: float, world: World, topic: str = "/map") -> None:
        """The map as a ROS ``nav_msgs/OccupancyGrid`` (0 free, 100 occupied, −1 unknown; rows
        from the origin, growing with y, as ROS lays them out), on a latched topic."""
        obstacles = world.obstacles()
        cells = np.where(obstacles, 100, 0).astype(np.int8)
        if world.unknown is not None:
            cells[world.unknown & ~obstacles] = -1
        rows, cols = world.shape
        origin = {
            "position": {"x": world.origin[0], "y": world.origin[1], "z": 0.0},
            "orientation": _yaw_quaternion(0.0),
        }
        message = {
            "header": _header(t, "map"),
            "info": {
                "map_load_time": _stamp(t),
                "resolution": world.resolution,
                "width": cols,
                "height": rows,
                "origin": origin,
            },
            "data": cells.ravel().tolist(),
        }
        self.write(topic, "nav_msgs/OccupancyGrid", message, t)

    def robot_description(self, t: float, urdf: str) -> None:
        """The robot's URDF on ``/robot_description`` (latched), as ``robot_state_publisher``
        publishes it."""
        self.write("/robot_description", "std_msgs/String", {"data": urdf}, t)

    def link_stats(self, t: float, direction: Direction, figures: dict[str, float]) -> None:
        message: dict[str, Any] = {"header": _header(t, ""), "direction": direction}
        for name in (
            "packets_received",
            "packets_lost",
            "duplicates",
            "reordered",
            "crc_failures",
            "auth_failures",
            "packets_sent",
        ):
            message[name] = int(figures.get(name, 0))
        for name in ("rx_rate_hz", "tx_rate_hz", "drop_percent", "latency_s"):
            message[name] = float(figures.get(name, 0.0))
        self.write(f"/freelook/link_stats/{direction}", "freelook_msgs/LinkStats", message, t)

    def reference(self, t: float, x: float, y: float, theta: float, v: float, omega: float) -> None:
        message = {
            "header": _header(t, "map"),
            "x": x,
            "y": y,
            "theta": theta,
            "v": v,
            "omega": omega,
        }
        self.write("/freelook/reference", "freelook_msgs/Reference", message, t)

    def telemetry(
        self,
        t: Telemetry,
        *,
        sonar_cone: float = math.radians(15.0),
        sonar_range: float = 5.0,
        reference: tuple[float, float, float, float, float] | None = None,
        sent: int | None = None,
        arm: ArmRecording | None = None,
    ) -> None:
        """One telemetry message as the ROS 2 streams a robot would publish; ``sent``: the
        packets the recording end had sent the robot by then (beside the robot's own count of
        what it received, in ``/freelook/link_stats/operator_to_robot``)."""
        stamp = t.stamp
        self.cmd_vel(stamp, t.cmd_v, t.cmd_omega)
        self.odom(stamp, *t.odom, t.v, t.omega)
        self.odom(stamp, *t.pose, t.v, t.omega, topic="/localization", frame_id="map")
        if t.laser:
            self.scan(
                stamp,
                t.laser,
                angle_min=t.laser_angle_min,
                angle_increment=t.laser_angle_increment,
                range_min=0.02,
                range_max=t.laser_range_max,
            )
        for index, distance in enumerate(t.sonar):
            self.sonar(
                stamp,
                index,
                distance,
                field_of_view=sonar_cone,
                min_range=0.02,
                max_range=sonar_range,
            )
        self.tf(stamp, *t.pose, "map", "base_link")
        self.mode(stamp, t.mode.name.lower(), t.estop, str(t.controller))
        if t.safety_flags:
            kind = "|".join(
                f.name.lower() for f in SafetyFlags if f and f.name and f in t.safety_flags
            )
            detail = f"zone {t.safety_zone}" if t.safety_zone >= 0 else ""
            self.safety_event(stamp, kind, detail, t.safety_zone, t.safety_scale)
        link = t.link
        self.link_stats(
            stamp,
            "operator_to_robot",
            {
                "packets_received": link.packets_received,
                "packets_lost": link.packets_lost,
                "duplicates": link.duplicates,
                "reordered": link.reordered,
                "crc_failures": link.crc_failures,
                "auth_failures": link.auth_failures,
                "rx_rate_hz": link.rx_rate_hz,
                "tx_rate_hz": link.tx_rate_hz,
                "drop_percent": link.drop_percent,
                "latency_s": link.latency_s,
                "packets_sent": sent or 0,
            },
        )
        if reference is not None:
            self.reference(stamp, *reference)
        if arm is not None and t.arm is not None:
            arm.write(self, stamp, t.arm)


@dataclass(frozen=True, slots=True)
class RecorderStats:
    """What a background recorder did."""

    submitted: int
    written: int
    dropped: int  # queue full: newest item dropped
    errors: int


class BackgroundRecorder:
    """A :class:`Recorder` behind a bounded queue drained by its own thread.

    ``submit(write)`` calls ``write(recorder)`` on the writer thread, logged at the recorder's
    clock when ``submit`` was called. It never blocks: a full queue drops the item and counts
    it (``stats().dropped``).
    """

    def __init__(self, recorder: Recorder, max_queue: int = 10_000) -> None:
        self._recorder = recorder
        self._queue: queue.Queue[tuple[float, Callable[[Recorder], None]] | None] = queue.Queue(
            maxsize=max_queue
        )
        self._failures: set[str] = set()
        self._submitted = 0
        self._written = 0
        self._dropped = 0
        self._errors = 0
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._drain, name="freelook-recorder", daemon=True)
        self._thread.start()

    def submit(self, write: Callable[[Recorder], None]) -> bool:
        """Queue one write, e.g. ``submit(lambda r: r.cmd_vel(t, v, omega))`` (typed: mypy
        checks the call); False (and counted) when the queue is full."""
        log_time = self._recorder.clock()
        with self._lock:
            self._submitted += 1
        try:
            self._queue.put_nowait((log_time, write))
        except queue.Full:
            with self._lock:
                self._dropped += 1
            return False
        return True

    def _drain(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:
                return
            log_time, write = item
            try:
                with self._recorder.logged_at(log_time):
                    write(self._recorder)
            except Exception as err:  # a bad item must not stop recording the rest
                kind = type(err).__name__
                with self._lock:
                    self._errors += 1
                    first = kind not in self._failures
                    self._failures.add(kind)
                if first:  # once per kind: a stream that keeps failing does not flood the log
                    log.exception(
                        "recording failed (%s); later failures of this kind counted", kind
                    )
            else:
                with self._lock:
                    self._written += 1

    def stats(self) -> RecorderStats:
        with self._lock:
            return RecorderStats(self._submitted, self._written, self._dropped, self._errors)

    def close(self) -> RecorderStats:
        """Drain what is queued, finish the file and stop the thread."""
        self._queue.put(None)
        self._thread.join()
        self._recorder.close()
        return self.stats()
