"""A ROS 2 robot's own map and localization: ``nav_msgs/OccupancyGrid`` as the program's map,
followed as it changes, and ``geometry_msgs/PoseWithCovarianceStamped`` (AMCL's ``amcl_pose``)
as its pose instead of freelook's particle filter.

Both are subscribed reliable and transient local, as map_server, slam_toolbox and AMCL publish
them, so the newest map and pose published before freelook started come at once. Every message
is hostile: a grid's size, resolution, origin and cells, and a pose's numbers and covariance are
checked before anything is kept; a grid larger than ``[ros2] map_max_cells`` is refused before
it is copied. A map arrives on the ROS thread as it came and is turned into a world only by
:meth:`RosMap.convert` (at start, then on a thread of the robot program's at most once a
:data:`MAP_PERIOD`), so a flood of maps costs one conversion a period, never the sensors' time.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from freelook.config import Ros2Config
from freelook.errors import WorldError
from freelook.hal import PoseSample
from freelook.hardware.ros2._convert import yaw_of_quaternion
from freelook.maps import World, world_of_occupancy

__all__ = ["MAP_PERIOD", "RosMap", "RosPose", "latched_qos"]

log = logging.getLogger(__name__)

#: s between two conversions of a changing map (slam_toolbox publishes one every 5 s)
MAP_PERIOD = 1.0
#: m from the map frame's origin beyond which a pose is not believed
MAX_POSE_M = 1e6


def latched_qos(r: Any) -> Any:
    """Reliable, transient local, the newest one: how map_server, slam_toolbox and AMCL
    publish their map and pose (a subscriber so gets the one published before it came)."""
    qos = r.qos
    return qos.QoSProfile(
        depth=1,
        reliability=qos.ReliabilityPolicy.RELIABLE,
        durability=qos.DurabilityPolicy.TRANSIENT_LOCAL,
    )


class RosMap:
    """The newest ``OccupancyGrid`` of a topic, checked, and the world made of it.

    ``on_refuse(why)`` and ``on_heard()`` tell the robot of each refused and each taken grid.
    :meth:`latest` (a :class:`freelook.hal.MapSource`) is the newest world converted.
    """

    def __init__(
        self,
        settings: Ros2Config,
        *,
        clock: Callable[[], float] = time.monotonic,
        on_heard: Callable[[], None],
        on_refuse: Callable[[str], None],
    ) -> None:
        self._max_cells = settings.map_max_cells
        self._clock = clock
        self._on_heard = on_heard
        self._on_refuse = on_refuse
        self._lock = threading.Lock()
        self._message: Any = None  # the newest grid not yet converted
        self._world: World | None = None
        self.frame = ""  # the newest grid's frame_id
        self.grids = 0  # grids taken
        self.conversions = 0
        self._converted_at = -math.inf

    def on_message(self, msg: Any) -> None:
        """A grid (on the ROS thread): its header checked and kept, converted later."""
        info = msg.info
        width, height = int(info.width), int(info.height)
        cells = width * height
        if not 0 < cells <= self._max_cells:
            self._on_refuse(
                f"a {width} × {height} grid: expected 1…{self._max_cells} cells "
                "([ros2] map_max_cells)"
            )
            return
        if len(msg.data) != cells:
            self._on_refuse(f"{len(msg.data)} cells in a {width} × {height} grid")
            return
        resolution = float(info.resolution)
        if not (math.isfinite(resolution) and 1e-4 <= resolution <= 100.0):
            self._on_refuse(f"resolution {resolution} m: expected 0.0001…100")
            return
        p, q = info.origin.position, info.origin.orientation
        if not all(math.isfinite(v) for v in (p.x, p.y, q.x, q.y, q.z, q.w)) or (
            max(abs(p.x), abs(p.y)) > MAX_POSE_M or q.x == q.y == q.z == q.w == 0.0
        ):
            self._on_refuse("an origin that is no pose (not finite, too far or no rotation)")
            return
        with self._lock:
            self._message = msg
            self.frame = str(msg.header.frame_id)
            self.grids += 1
        self._on_heard()

    @property
    def pending(self) -> bool:
        """Whether a grid came that :meth:`convert` has not turned into a world yet."""
        return self._message is not None

    def convert(self, name: str) -> World | None:
        """Turn the newest grid into the world :meth:`latest` gives (at most once a
        :data:`MAP_PERIOD` after the first, on the clock given); returns it, or None (nothing
        new, too soon, or a grid refused for its cells). Any thread; slow on a large grid."""
        now = self._clock()
        if now - self._converted_at < MAP_PERIOD:
            return None
        with self._lock:
            msg, self._message = self._message, None
        if msg is None:
            return None
        self._converted_at = now
        info = msg.info
        values = np.frombuffer(msg.data, dtype=np.int8).reshape(int(info.height), int(info.width))
        q = info.origin.orientation
        origin = (
            float(info.origin.position.x),
            float(info.origin.position.y),
            yaw_of_quaternion(q.x, q.y, q.z, q.w),
        )
        try:
            world = world_of_occupancy(name, values, float(info.resolution), origin)
        except WorldError as err:
            self._on_refuse(str(err).removeprefix(f"{name}: "))
            return None
        self._world = world
        self.conversions += 1
        return world

    def latest(self) -> World | None:
        return self._world


class RosPose:
    """The newest ``PoseWithCovarianceStamped`` of the robot's localization, checked, as a
    :class:`freelook.hal.PoseSample` on the robot program's clock.

    ``ros_now()`` is the node's clock (seconds), against which the header's stamp says how
    long ago the pose held; ``map_frame()`` the map's frame_id the pose must be in ("": any).
    """

    def __init__(
        self,
        settings: Ros2Config,
        *,
        clock: Callable[[], float],
        ros_now: Callable[[], float],
        map_frame: Callable[[], str],
        on_heard: Callable[[], None],
        on_refuse: Callable[[str], None],
    ) -> None:
        self._lead = settings.stamp_lead
        self._clock = clock
        self._ros_now = ros_now
        self._map_frame = map_frame
        self._on_heard = on_heard
        self._on_refuse = on_refuse
        self._sample: PoseSample | None = None

    def on_message(self, msg: Any) -> None:
        now = self._clock()
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        if stamp == 0.0:
            self._on_refuse("no stamp (header.stamp is 0)")
            return
        lag = self._ros_now() - stamp
        if -lag > self._lead:
            self._on_refuse(f"stamped {-lag:.2f} s ahead of this computer's clock")
            return
        frame = self._map_frame()
        if frame and msg.header.frame_id != frame:
            self._on_refuse(f"in frame {msg.header.frame_id!r}, the map's is {frame!r}")
            return
        pose = msg.pose.pose
        p, q = pose.position, pose.orientation
        cov = msg.pose.covariance
        variances = (float(cov[0]), float(cov[7]), float(cov[35]))
        numbers = (p.x, p.y, q.x, q.y, q.z, q.w, *variances)
        if not all(math.isfinite(v) for v in numbers):
            self._on_refuse("a non-finite number in the pose or its covariance")
            return
        if min(variances) < 0.0:
            self._on_refuse(f"negative variances {variances}: no covariance")
            return
        if max(abs(p.x), abs(p.y)) > MAX_POSE_M or q.x == q.y == q.z == q.w == 0.0:
            self._on_refuse("a position beyond ±1e6 m, or an all-zero quaternion")
            return
        theta = yaw_of_quaternion(q.x, q.y, q.z, q.w)
        if not math.isfinite(theta):
            self._on_refuse("an orientation quaternion with no finite heading")
            return
        held = now - max(0.0, lag)  # when the robot stood there, on the program's clock
        std_xy = math.sqrt(max(variances[0], variances[1]))
        self._sample = PoseSample(held, float(p.x), float(p.y), theta, std_xy, variances[2] ** 0.5)
        self._on_heard()

    def latest(self) -> PoseSample | None:
        return self._sample
