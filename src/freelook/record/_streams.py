"""The ROS 2 streams of a run, each one a method that builds its message, written through one
:meth:`RosStreams.write`: to an MCAP file (:class:`freelook.record.Recorder`) or live (the
operator's Foxglove bridge). One set of builders and one set of schemas, so a live viewer and a
recording can never disagree on a topic's type or layout. Streams that write into others (to
several at once, or under a robot's name) are in :mod:`._stream_sinks`.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
import json
import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
from mcap_ros2._dynamic import serialize_dynamic

from freelook.link import PacketRecord, SafetyFlags, Telemetry
from freelook.maps import World
from freelook.record._arm import ArmRecording, quaternion
from freelook.record._schemas import full_definition

__all__ = ["Direction", "RosSchema", "RosStreams", "ros_schema"]

Direction = Literal["operator_to_robot", "robot_to_operator"]
_DIRECTION_CODE = {"operator_to_robot": 0, "robot_to_operator": 1}
_IDENTITY_COVARIANCE = [0.0] * 36


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


@dataclass(frozen=True, slots=True)
class RosSchema:
    """One ROS 2 type as MCAP and Foxglove carry it: ``pkg/msg/Type``, its ``ros2msg`` text
    (dependencies included) and its CDR encoder."""

    name: str
    text: str
    encode: Callable[[dict[str, Any]], bytes]


@functools.cache
def ros_schema(typename: str) -> RosSchema:
    """The schema of ``pkg/Type`` (cached: building an encoder parses the definition)."""
    package, name = typename.split("/")
    schema_name = f"{package}/msg/{name}"
    text = full_definition(typename)
    return RosSchema(schema_name, text, serialize_dynamic(schema_name, text)[schema_name])


class RosStreams(abc.ABC):
    """The streams of a run (times in seconds); subclasses say where a message goes.

    Each stream method takes the sender's stamp (publish time); the log time is ``clock()``
    at the write, or the time pinned by :meth:`logged_at`.
    """

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self._pinned: float | None = None

    @abc.abstractmethod
    def write(self, topic: str, typename: str, message: dict[str, Any], t: float) -> None:
        """Write one message (a dict of fields) of ROS 2 type ``pkg/Type`` on ``topic``,
        stamped ``t`` by its sender (publish time)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Release what the writer holds (idempotent)."""

    @property
    def messages_recorded(self) -> int | None:
        """Messages this stream has put into a file so far (None: it writes to no file, as a
        live view does). One stream method may write many: a telemetry is a score of them."""
        return None

    def log_time(self) -> float:
        """The log time of a write now: pinned, else the clock."""
        return self._pinned if self._pinned is not None else self.clock()

    @contextmanager
    def logged_at(self, log_time: float) -> Iterator[None]:
        """Writes inside the block are logged at ``log_time`` (e.g. when they were queued)."""
        self._pinned = log_time
        try:
            yield
        finally:
            self._pinned = None

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
