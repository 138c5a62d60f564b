"""/tf and /tf_static: where the lasers sit on the base, as the robot's static transforms say,
and freelook's estimate of the base in the odometry frame (``odom`` → ``base_link``).

``tf2_msgs`` is imported only here, and only when a ROS 2 robot opens: it has no wheel, and
``python tools/build_tf2_msgs.py`` (run by ``tools/test.sh``) builds its ``TFMessage`` into the
environment; a sourced ROS 2 install has it. Without it the robot runs as before (the mounts
are the description's, nothing is published on /tf) and the log says so once.

:class:`StaticTree` and :func:`mount_of` are sans-I/O: transforms in, a laser's mount out.
"""

from __future__ import annotations

import functools
import importlib
import logging
import math
from collections import deque
from typing import Any, NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "LEVEL_TOLERANCE_DEG",
    "TF_STATIC_TOPIC",
    "TF_TOPIC",
    "Mount",
    "OdomTfPublisher",
    "StaticTree",
    "mount_of",
    "tf_message",
]

log = logging.getLogger(__name__)

TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"
#: a laser whose scan plane leans more than this from the base's is not taken from /tf_static
#: (its beams do not lie in the plane safety and localization reason in)
LEVEL_TOLERANCE_DEG = 10.0
#: the stamps of freelook's own odom → base_link kept to tell them from another node's
OWN_STAMPS = 256

_Matrix = npt.NDArray[np.float64]


class Mount(NamedTuple):
    """A laser on the base: its origin (m) and its x axis's heading (rad, counter-clockwise),
    upside down or not (its z axis down: its angles turn clockwise seen from above)."""

    forward: float
    left: float
    yaw: float
    upside_down: bool

    def text(self) -> str:
        side = "upside down" if self.upside_down else "upright"
        return (
            f"{self.forward:.3f} m ahead, {self.left:.3f} m left, yaw "
            f"{math.degrees(self.yaw):.1f}°, {side}"
        )

    def differs(self, other: Mount) -> bool:
        """Whether two mounts differ by more than a centimetre or a degree."""
        turn = math.remainder(self.yaw - other.yaw, math.tau)
        return (
            math.hypot(self.forward - other.forward, self.left - other.left) > 0.01
            or abs(turn) > math.radians(1.0)
            or self.upside_down != other.upside_down
        )


@functools.cache
def tf_message() -> tuple[Any, str]:
    """``tf2_msgs.msg.TFMessage`` with its type support loaded, and "" ; or None and why
    not."""
    try:
        kind = importlib.import_module("tf2_msgs.msg").TFMessage
        kind.__class__.__import_type_support__()
    except (ImportError, AttributeError) as err:
        return None, f"tf2_msgs is not installed here ({err})"
    if kind.__class__._TYPE_SUPPORT is None:
        return None, "tf2_msgs is installed but its type support does not load"
    return kind, ""


def _matrix(t: Any) -> _Matrix | None:
    """A ``geometry_msgs/Transform`` as a 4×4 matrix (None: not finite, or no rotation)."""
    p, q = t.translation, t.rotation
    values = (p.x, p.y, p.z, q.x, q.y, q.z, q.w)
    if not all(math.isfinite(v) for v in values):
        return None
    norm = math.sqrt(q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w)
    if not 1e-6 < norm < 1e6:
        return None
    x, y, z, w = q.x / norm, q.y / norm, q.z / norm, q.w / norm
    m = np.eye(4)
    m[:3, :3] = (
        (1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
        (2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
        (2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)),
    )
    m[:3, 3] = (p.x, p.y, p.z)
    return m


class StaticTree:
    """The static transforms heard, each child frame's newest from its parent."""

    def __init__(self) -> None:
        self._parents: dict[str, tuple[str, _Matrix]] = {}

    def copy(self) -> StaticTree:
        tree = StaticTree()
        tree._parents = dict(self._parents)
        return tree

    def add(self, transforms: Any) -> list[str]:
        """Take a message's transforms; returns the child frames whose transform changed."""
        changed = []
        for one in transforms:
            child, parent = one.child_frame_id.lstrip("/"), one.header.frame_id.lstrip("/")
            m = _matrix(one.transform)
            if not child or not parent or child == parent or m is None:
                continue
            kept = self._parents.get(child)
            if kept is None or kept[0] != parent or not np.allclose(kept[1], m, atol=1e-9):
                self._parents[child] = (parent, m)
                changed.append(child)
        return changed

    def parent(self, child: str) -> str | None:
        kept = self._parents.get(child.lstrip("/"))
        return kept[0] if kept is not None else None

    def pose(self, base: str, frame: str) -> _Matrix | None:
        """``frame`` in ``base``'s coordinates, along the static transforms from ``frame`` up
        to ``base`` (None: the chain does not reach it)."""
        base, frame = base.lstrip("/"), frame.lstrip("/")
        m = np.eye(4)
        seen = set()
        while frame != base:
            kept = self._parents.get(frame)
            if kept is None or frame in seen:
                return None
            seen.add(frame)
            parent, step = kept
            m = step @ m
            frame = parent
        return m


def mount_of(pose: _Matrix) -> Mount | str:
    """A laser's mount from its pose on the base, or why it cannot be one (its scan plane
    leans more than :data:`LEVEL_TOLERANCE_DEG` from level)."""
    r = pose[:3, :3]
    lean = math.degrees(math.acos(min(1.0, abs(float(r[2, 2])))))
    if lean > LEVEL_TOLERANCE_DEG:
        return (
            f"its scan plane leans {lean:.0f}° from the base's (at most {LEVEL_TOLERANCE_DEG:g}°)"
        )
    return Mount(
        float(pose[0, 3]),
        float(pose[1, 3]),
        math.atan2(float(r[1, 0]), float(r[0, 0])),
        bool(r[2, 2] < 0.0),
    )


class OdomTfPublisher:
    """freelook's estimate of the base as ``odom`` → ``base_link`` on /tf, unless another
    node already gives the base frame a parent (the base's controller with its odometry
    transform on, an EKF, or a static ``base_footprint`` → ``base_link``): then it publishes
    nothing more and says so once, since a frame with two parents breaks every tf listener.

    ``node``: the rclpy node; ``kind``: ``TFMessage``; ``r``: :func:`ros`'s namespace."""

    def __init__(self, node: Any, r: Any, kind: Any, base_frame: str) -> None:
        self._node = node
        self._r = r
        self._kind = kind
        self.base_frame = base_frame
        qos = r.qos.QoSProfile(depth=100, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        self._publisher = node.create_publisher(kind, TF_TOPIC, qos)
        self._listener = node.create_subscription(kind, TF_TOPIC, self._on_tf, qos)
        self._own: deque[tuple[int, int]] = deque(maxlen=OWN_STAMPS)
        self._own_set: set[tuple[int, int]] = set()
        #: why freelook publishes no odom → base_link ("": it does)
        self.off = ""
        self.published = 0

    def _on_tf(self, msg: Any) -> None:
        for one in msg.transforms:
            if one.child_frame_id.lstrip("/") != self.base_frame:
                continue
            stamp = (one.header.stamp.sec, one.header.stamp.nanosec)
            if stamp not in self._own_set:
                self.give_way(f"{TF_TOPIC} gives it {one.header.frame_id!r} → {self.base_frame!r}")
                return

    def give_way(self, why: str) -> None:
        """Another node gives the base frame a parent (``why`` says where): stop for good."""
        if self.off:
            return
        self.off = f"another node publishes the base frame's transform ({why})"
        log.warning(
            "no odom → %s on %s from freelook: %s; the robot's own is left as it is "
            "([ros2] publish_tf = false says so without this line)",
            self.base_frame,
            TF_TOPIC,
            self.off,
        )

    def publish(
        self, parent: str, x: float, y: float, theta: float, stamp: Any | None = None
    ) -> bool:
        """``parent`` → base frame at (x, y, θ); False once another node publishes it."""
        if self.off or not all(math.isfinite(v) for v in (x, y, theta)):
            return False
        r = self._r
        t = r.TransformStamped()
        t.header.stamp = stamp if stamp is not None else self._node.get_clock().now().to_msg()
        t.header.frame_id = parent
        t.child_frame_id = self.base_frame
        t.transform.translation.x, t.transform.translation.y = float(x), float(y)
        t.transform.rotation.z = math.sin(theta / 2.0)
        t.transform.rotation.w = math.cos(theta / 2.0)
        key = (t.header.stamp.sec, t.header.stamp.nanosec)
        if len(self._own) == self._own.maxlen:
            self._own_set.discard(self._own[0])
        self._own.append(key)
        self._own_set.add(key)
        self._publisher.publish(self._kind(transforms=[t]))
        self.published += 1
        return True
