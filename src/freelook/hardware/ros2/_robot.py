"""A ROS 2 robot behind the robot program's hardware interfaces.

:class:`Ros2Robot` owns an rclpy node in a context of its own and spins it on a thread of its
own. Subscriptions keep the newest reading of each topic, checked and converted
(:mod:`._convert`), stamped on the robot program's clock when it arrived; the HAL devices read
those and publish commands. Nothing of rclpy reaches the robot program.

Over 500 lines: the node, its readings and the small HAL devices over them share the
readings' state, and read best in one place.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any, Literal, NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.arm import load_arm
from freelook.config import LaserConfig, LaserMountConfig, RobotConfig
from freelook.geometry import Pose
from freelook.hal import (
    GyroSample,
    LatestReading,
    OdometrySample,
    PanTiltState,
    RangeScan,
    RobotHardware,
)
from freelook.hardware.ros2._arm import Ros2Arm
from freelook.hardware.ros2._convert import (
    ScanLayout,
    Sweep,
    check_scan_layout,
    layout_note,
    scan_ranges,
    scan_sweep,
    twist_of_wheels,
    wheels_of_twist,
    yaw_of_quaternion,
)
from freelook.hardware.ros2._errors import Ros2Error
from freelook.hardware.ros2._localization import RosMap, RosPose, latched_qos
from freelook.hardware.ros2._rclpy import NodeThread, ros
from freelook.hardware.ros2._state import StatePublisher
from freelook.hardware.ros2._tf import (
    TF_STATIC_TOPIC,
    Mount,
    OdomTfPublisher,
    StaticTree,
    mount_of,
    tf_message,
)

__all__ = ["Ros2Robot"]

log = logging.getLogger(__name__)

#: s to wait for the optional topics once odometry and the scan have come
OPTIONAL_GRACE = 1.0
#: refused messages of a required topic, with none usable, that stop the start at once
REFUSALS_AT_START = 3
#: m from the odometry frame's origin beyond which a base's pose is not believed
MAX_ODOMETRY_M = 1e6
#: s between two looks at who publishes on the robot's topics
GRAPH_PERIOD = 1.0


class _Frame(NamedTuple):
    stamp: float
    jpeg: bytes | None  # a CompressedImage's JPEG, as it came
    rgb: npt.NDArray[np.uint8] | None  # an Image's pixels, RGB
    width: int
    height: int


class _LaserTopic(NamedTuple):
    """One laser's scan topic: its description (pins, mount) and where that is said."""

    topic: str
    config: LaserConfig | LaserMountConfig
    where: str  # the description's section, as errors name it
    frame: str  # the frame_id its scans must carry ("": any)


class _Geometry(NamedTuple):
    """A scan layout's beams in the robot frame (the same arrays for every scan so laid out)."""

    layout: tuple[float, float, int]  # angle_min, angle_increment, beams
    mount: Mount  # where the laser sits, from /tf_static or the description
    frame: str  # the scans' frame_id
    tf_version: int  # the static transforms it was worked out against
    sweep: Sweep
    bearings: npt.NDArray[np.float64]
    origin_x: npt.NDArray[np.float64]
    origin_y: npt.NDArray[np.float64]


class _Piece(NamedTuple):
    """A laser's newest scan, as its sweep's ranges."""

    ranges: npt.NDArray[np.float64]
    geometry: _Geometry


def _node_name(info: Any) -> str:
    """A publisher's node, as ``ros2 node list`` names it (discovery may not know it yet)."""
    if info.node_name == "_NODE_NAME_UNKNOWN_":
        return "a node not yet named"
    return f"{info.node_namespace.rstrip('/')}/{info.node_name}"


def _finite(*values: float) -> bool:
    return all(math.isfinite(v) for v in values)


@functools.cache
def _say_tf_off(why: str) -> None:
    """Say once why /tf is off (each reason once per process)."""
    log.warning(
        "no /tf: %s; the lasers' mounts are the description's and freelook publishes no "
        "odom → base_link (python tools/build_tf2_msgs.py in freelook's checkout builds "
        "tf2_msgs into this environment; a sourced ROS 2 install has it)",
        why,
    )


class Ros2Robot:
    """A ROS 2 robot's standard topics as HAL devices (:attr:`hardware`, after :meth:`start`).

    ``namespace``: the robot's (``""``: none); ``clock`` stamps every reading (pass the
    runtime's); ``domain_id``: the DDS domain (None: ``ROS_DOMAIN_ID``); ``camera``: take the
    camera topic. :attr:`refused` counts readings refused, by topic (non-finite numbers, a
    scan unlike the description, an image in an unknown encoding).
    """

    def __init__(
        self,
        config: RobotConfig,
        namespace: str = "",
        *,
        clock: Callable[[], float] = time.monotonic,
        domain_id: int | None = None,
        camera: bool = True,
        node_name: str = "freelook_robot",
        map_topic: str | None = None,
    ) -> None:
        self.config = config
        self.settings = config.ros2
        self.namespace = namespace
        self._clock = clock
        self.refused: Counter[str] = Counter()
        self.heard: dict[str, float] = {}  # topic key → when its newest good reading came
        self.problems: dict[str, str] = {}  # topic key → why its newest reading was refused
        self._odom: OdometrySample | None = None
        self._gyro: GyroSample | None = None
        self._gyro_angle = 0.0
        self._gyro_stamp: float | None = None  # the newest IMU reading's stamp, s
        self._scan: RangeScan | None = None
        self._pan: float | None = None
        self._tilt: float | None = None
        self._joints_stamp = 0.0
        self._frame: _Frame | None = None
        self._frame_taken: _Frame | None = None
        self.battery: float | None = None  # 0…1, when the robot says
        self._closed = False
        self._news: Callable[[], None] = lambda: None
        #: why the ROS graph is not to be trusted (a second publisher), held once found
        self.graph_fault: str | None = None
        self.hardware: RobotHardware | None = None
        #: scan topic key → its laser; the key's newest scan; each key's layout in use; the
        #: merged layout (the pieces' geometries and their arrays joined)
        self._lasers: dict[str, _LaserTopic] = {}
        self._pieces: dict[str, _Piece] = {}
        self._geometries: dict[str, _Geometry] = {}
        self._merged: tuple[tuple[_Geometry, ...], tuple[npt.NDArray[np.float64], ...]] | None
        self._merged = None
        #: the robot's own map (``map_topic``, else ``[ros2.topics] map``) and pose
        #: (``[ros2] localization = "ros"``), when taken
        self.map: RosMap | None = None
        self.pose: RosPose | None = None
        self._map_topic = self.settings.topics.map if map_topic is None else map_topic
        #: an external e-stop (``[ros2.topics] estop``): its newest value, and who hears that
        #: it engaged (each true, and the release of the button, which the program latches)
        self.estop_pressed = False
        self.on_external_estop: Callable[[], None] = lambda: None
        #: /tf_static's transforms (None: no tf2_msgs here), and how often they changed
        self.tf_static: StaticTree | None = None
        self._tf_version = 0
        #: once running, the lasers keep their mounts: a later /tf_static is only said
        self._mounts_fixed = False
        self._mounts_said: set[tuple[str, Mount]] = set()
        #: freelook's estimate as odom → base_link on /tf (``[ros2] publish_tf``, tf2_msgs)
        self.odom_tf: OdomTfPublisher | None = None
        self._odom_frame = "odom"
        self._tf_anchor: tuple[Pose, Pose] | None = None  # the base's odometry, the estimate
        model = load_arm(config.arm.urdf, config.arm.srdf) if config.arm is not None else None
        r = ros()
        self._r = r
        self._ros = NodeThread(
            node_name,
            namespace,
            domain_id=domain_id,
            on_error=lambda err: log.error("the ROS 2 executor stopped: %r", err),
        )
        self.node = self._ros.node
        try:
            #: the arm (a description with an ``[arm]``), fed by ``joint_states``
            self.arm = (
                Ros2Arm(config, model, self.node, r, clock=clock) if model is not None else None
            )
            self._subscribe(camera)
            self._open_tf()
            self._advertise()
            self._graph_timer = self.node.create_timer(GRAPH_PERIOD, self.check_graph)
        except Exception:
            self._ros.close()
            raise
        self._ros.start()

    # -- topics ------------------------------------------------------------------------------

    def _sensor_qos(self) -> Any:
        qos = self._r.qos
        profile = qos.qos_profile_sensor_data
        if self.settings.sensor_qos == "reliable":
            return qos.QoSProfile(depth=5, reliability=qos.ReliabilityPolicy.RELIABLE)
        return profile

    def _subscribe(self, camera: bool) -> None:
        r, topics, cfg = self._r, self.settings.topics, self.config
        sensor = self._sensor_qos()
        #: topic key → (resolved name, message type name)
        self.topics: dict[str, tuple[str, str]] = {}

        def sub(
            key: str, name: str, kind: Any, callback: Callable[[Any], None], qos: Any = sensor
        ) -> None:
            s = self.node.create_subscription(kind, name, callback, qos)
            module = kind.__module__.split(".")[0]
            self.topics[key] = (s.topic_name, f"{module}/msg/{kind.__name__}")

        sub("odom", topics.odom, r.Odometry, self._on_odom)
        laser = cfg.laser
        if laser is not None:
            if topics.scan:
                self._lasers["scan"] = _LaserTopic(
                    topics.scan, laser, "[laser]", self.settings.scan_frame
                )
            for i, extra in enumerate(laser.extra):
                where = f"[[laser.extra]] {extra.topic!r}"
                self._lasers[f"scan{i + 2}"] = _LaserTopic(extra.topic, extra, where, extra.frame)
            for key, one in self._lasers.items():
                sub(key, one.topic, r.LaserScan, functools.partial(self._on_scan, key=key))
        if cfg.gyro is not None and topics.imu:
            sub("imu", topics.imu, r.Imu, self._on_imu)
        pt = cfg.pan_tilt
        joints = (pt is not None and (pt.has_pan or pt.has_tilt)) or self.arm is not None
        if joints and topics.joint_states:
            sub("joint_states", topics.joint_states, r.JointState, self._on_joints)
        if camera and topics.camera:
            compressed = topics.camera.rstrip("/").endswith("compressed")
            kind = r.CompressedImage if compressed else r.Image
            sub(
                "camera", topics.camera, kind, self._on_compressed if compressed else self._on_image
            )
        if topics.battery:
            sub("battery", topics.battery, r.BatteryState, self._on_battery)
        self._subscribe_localization(sub)
        if topics.estop:
            # best effort and volatile: every publisher is heard, reliable or not
            sub("estop", topics.estop, r.Bool, self._on_estop, r.qos.qos_profile_sensor_data)

    def _subscribe_localization(self, sub: Callable[..., None]) -> None:
        """The robot's own map and pose, when the description or ``--map ros:`` asks."""
        r, settings = self._r, self.settings
        latched = latched_qos(r)
        if self._map_topic:
            self.map = RosMap(
                settings,
                clock=self._clock,
                on_heard=lambda: self._heard("map", self._clock()),
                on_refuse=lambda why: self._refuse("map", why),
            )
            sub("map", self._map_topic, r.OccupancyGrid, self.map.on_message, latched)
        if settings.localization == "ros":
            ros_map = self.map
            self.pose = RosPose(
                settings,
                clock=self._clock,
                ros_now=lambda: self.node.get_clock().now().nanoseconds * 1e-9,
                map_frame=lambda: ros_map.frame if ros_map is not None else "",
                on_heard=lambda: self._heard("pose", self._clock()),
                on_refuse=lambda why: self._refuse("pose", why),
            )
            pose = self.pose
            sub("pose", settings.topics.pose, r.PoseWithCovarianceStamped, pose.on_message, latched)

    def _open_tf(self) -> None:
        """/tf_static for the lasers' mounts and /tf for odom → base_link, with tf2_msgs."""
        kind, why = tf_message()
        if kind is None:
            _say_tf_off(why)
            return
        r = self._r
        self.tf_static = StaticTree()
        # as tf2's static listener: reliable, transient local, every publisher's newest
        static = r.qos.QoSProfile(
            depth=100,
            reliability=r.qos.ReliabilityPolicy.RELIABLE,
            durability=r.qos.DurabilityPolicy.TRANSIENT_LOCAL,
        )
        s = self.node.create_subscription(kind, TF_STATIC_TOPIC, self._on_tf_static, static)
        self.topics["tf_static"] = (s.topic_name, "tf2_msgs/msg/TFMessage")
        if self.settings.publish_tf:
            self.odom_tf = OdomTfPublisher(self.node, r, kind, self.settings.base_frame)

    def _on_tf_static(self, msg: Any) -> None:
        """Static transforms: until the robot runs, the lasers' mounts follow them; after,
        a laser they would move keeps its mount (a node that joins the graph mid-run does not
        move where safety sees obstacles from) and the log says so."""
        tree = self.tf_static
        assert tree is not None
        if self._mounts_fixed:
            tree = tree.copy()
        changed = tree.add(msg.transforms)
        base = self.settings.base_frame
        if base in changed and self.odom_tf is not None:
            self.odom_tf.give_way(f"{TF_STATIC_TOPIC} gives it {tree.parent(base)!r} → {base!r}")
        if changed and not self._mounts_fixed:
            self._tf_version += 1  # each laser's geometry is worked out again at its next scan
        elif changed:
            for key, kept in self._geometries.items():
                mount, source = self._mount(self._lasers[key], kept.frame, tree)
                if mount != kept.mount and (key, mount) not in self._mounts_said:
                    self._mounts_said.add((key, mount))
                    log.warning(
                        "%s: %s now puts the laser at %s; it keeps %s until freelook restarts",
                        self.topics[key][0],
                        source,
                        mount.text(),
                        kept.mount.text(),
                    )
        self._heard("tf_static", self._clock())

    def publish_odom_tf(self, estimate: tuple[float, float, float]) -> bool:
        """The program's estimate of the base (its odometry frame, gyro and all) as the
        odometry's frame → ``[ros2] base_frame`` on /tf, anchored where the base's own
        odometry was at the first call; False when nothing is published."""
        tf, odom = self.odom_tf, self._odom
        if tf is None or odom is None:
            return False
        if self._tf_anchor is None:
            self._tf_anchor = (Pose(odom.x, odom.y, odom.theta), Pose(*estimate))
            log.info(
                "/tf: freelook publishes %s → %s from its estimate", self._odom_frame, tf.base_frame
            )
        base, start = self._tf_anchor
        x, y, theta = base.compose(start.relative(estimate))
        return tf.publish(self._odom_frame, x, y, theta)

    def _advertise(self) -> None:
        r, settings = self._r, self.settings
        reliable = r.qos.QoSProfile(depth=10, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        kind = r.TwistStamped if settings.cmd_vel_stamped else r.Twist
        self._cmd_vel = self.node.create_publisher(kind, settings.topics.cmd_vel, reliable)
        #: freelook's state for ROS tools (``/diagnostics`` and ``freelook/…``)
        self.state = StatePublisher(
            self.node,
            r,
            settings.topics.diagnostics,
            settings.topics.state,
            f"freelook: {self.node.get_name()}",
        )
        self._pan_tilt_pub = None
        pt = self.config.pan_tilt
        if pt is not None and (pt.has_pan or pt.has_tilt) and settings.topics.joint_states:
            command = (
                r.JointTrajectory
                if settings.pan_tilt_command == "trajectory"
                else r.Float64MultiArray
            )
            self._pan_tilt_pub = self.node.create_publisher(
                command, settings.topics.pan_tilt_command, reliable
            )

    def _on_estop(self, msg: Any) -> None:
        """An external e-stop's state: true engages the program's e-stop (latched, as the
        cockpit's); false never releases it, but its release is engaged once more, so the
        program's e-stop always holds until the cockpit releases it after the button."""
        pressed, was = bool(msg.data), self.estop_pressed
        self.estop_pressed = pressed
        self._heard("estop", self._clock())
        if pressed != was:
            name = self.topics["estop"][0]
            if pressed:
                log.error("%s: the external e-stop is engaged", name)
            else:
                log.warning("%s: the external e-stop is let go; the cockpit releases it", name)
        if pressed or was:
            self.on_external_estop()

    def _heard(self, key: str, now: float) -> None:
        first = key not in self.heard
        self.heard[key] = now
        self.problems.pop(key, None)
        if first:
            self._news()

    def _refuse(self, key: str, why: str) -> None:
        self.refused[key] += 1
        first = key not in self.problems
        self.problems[key] = why
        if first:
            self._news()

    def _stale(self, key: str, header: Any) -> bool:
        """Whether a reading's stamp is refused: none (zero), older than ``stamp_age`` or
        ahead of the node's clock by more than ``stamp_lead``."""
        stamp = header.stamp.sec + header.stamp.nanosec * 1e-9
        if stamp == 0.0:
            self._refuse(key, "no stamp (header.stamp is 0)")
            return True
        lag = self.node.get_clock().now().nanoseconds * 1e-9 - stamp
        if lag > self.settings.stamp_age:
            self._refuse(key, f"stamped {lag:.2f} s ago (more than {self.settings.stamp_age:g} s)")
            return True
        if -lag > self.settings.stamp_lead:
            self._refuse(key, f"stamped {-lag:.2f} s ahead of this computer's clock")
            return True
        return False

    def _on_odom(self, msg: Any) -> None:
        now = self._clock()
        if self._stale("odom", msg.header):
            return
        p, q = msg.pose.pose.position, msg.pose.pose.orientation
        t = msg.twist.twist
        if not _finite(p.x, p.y, q.x, q.y, q.z, q.w, t.linear.x, t.angular.z):
            self._refuse("odom", "a non-finite number in the pose or the twist")
            return
        if q.x == q.y == q.z == q.w == 0.0:
            self._refuse("odom", "an all-zero orientation quaternion")
            return
        drive = self.config.drive
        if max(abs(p.x), abs(p.y)) > MAX_ODOMETRY_M:
            self._refuse("odom", f"a position beyond ±{MAX_ODOMETRY_M:g} m")
            return
        # as a JAUS robot's reports: twice what the base can do, and a little, is believable
        if abs(t.linear.x) > 2.0 * drive.max_wheel_speed + 0.1 or (
            abs(t.angular.z) > 2.0 * drive.max_turn_rate + 0.1
        ):
            self._refuse("odom", f"a twist faster than the base ({t.linear.x}, {t.angular.z})")
            return
        yaw = yaw_of_quaternion(q.x, q.y, q.z, q.w)
        if not math.isfinite(yaw):  # a quaternion too large to normalise
            self._refuse("odom", "an orientation quaternion with no finite heading")
            return
        left, right = wheels_of_twist(t.linear.x, t.angular.z, drive.track_width)
        self._odom_frame = msg.header.frame_id.lstrip("/") or "odom"
        self._odom = OdometrySample(now, p.x, p.y, yaw, left, right)
        self._heard("odom", now)

    def _on_scan(self, msg: Any, key: str = "scan") -> None:
        """A laser's scan, laid out as it says (:func:`scan_sweep`), merged with the other
        lasers' newest into the robot's scan."""
        now = self._clock()
        laser = self.config.laser
        assert laser is not None
        if self._stale(key, msg.header):
            return
        one = self._lasers[key]
        layout = ScanLayout(
            msg.header.frame_id, float(msg.angle_min), float(msg.angle_increment), len(msg.ranges)
        )
        problem = check_scan_layout(layout, one.config, one.frame, one.where)
        if problem is None and not (
            _finite(msg.range_min, msg.range_max) and 0.0 <= msg.range_min < msg.range_max
        ):
            problem = f"range limits [{msg.range_min}, {msg.range_max}]: not a range"
        if problem is not None:
            self._refuse(key, problem)
            return
        ranges = (
            np.frombuffer(msg.ranges, dtype=np.float32)
            if hasattr(msg.ranges, "tobytes")
            else msg.ranges
        )
        blind = self._blind_sector(np.asarray(ranges, dtype=np.float64), msg)
        if blind is not None:
            self._refuse(key, blind)
            return
        read = scan_ranges(ranges, msg.range_min, msg.range_max, no_hit=laser.range_max)
        if read.invalid:
            self.refused[f"{key} beams"] += read.invalid
        geometry = self._geometry(key, layout, one)
        self._pieces[key] = _Piece(geometry.sweep.arrange(read.ranges), geometry)
        self._scan = self._merge(now)
        self._heard(key, now)

    def _geometry(self, key: str, layout: ScanLayout, one: _LaserTopic) -> _Geometry:
        """The robot-frame beams of a scan so laid out from ``key``'s laser (worked out again,
        and said in the log, only when its layout or its mount changes)."""
        shape = (layout.angle_min, layout.angle_increment, layout.beams)
        kept = self._geometries.get(key)
        version = self._tf_version
        if kept is not None and kept.layout == shape and kept.tf_version == version:
            return kept
        mount, source = self._mount(one, layout.frame_id)
        name = self.topics[key][0]
        if kept is not None and kept.layout == shape and kept.mount == mount:
            kept = self._geometries[key] = kept._replace(tf_version=version)
            return kept
        if kept is None or kept.mount != mount:
            self._say_mount(name, one, mount, source)
        sweep = scan_sweep(layout, mount.yaw, mount.upside_down)
        n = layout.beams
        geometry = _Geometry(
            shape,
            mount,
            layout.frame_id,
            version,
            sweep,
            sweep.bearings(),
            np.full(n, mount.forward),
            np.full(n, mount.left),
        )
        self._geometries[key] = geometry
        if kept is not None and kept.layout == shape:
            return geometry
        config = one.config
        note = layout_note(layout, config) if isinstance(config, LaserConfig) else None
        said = (
            f"{layout.beams} beams from {math.degrees(layout.angle_min):.4g}° every "
            f"{math.degrees(layout.angle_increment):.4g}°"
        )
        if note is not None:
            log.warning("%s: %s", name, note)  # unpinned: the log says so, once a layout
        elif kept is not None:
            log.warning("%s: now %s, taken as the scan says", name, said)
        else:
            log.info("%s: %s", name, said)
        return geometry

    def _mount(
        self, one: _LaserTopic, frame: str, tree: StaticTree | None = None
    ) -> tuple[Mount, str]:
        """Where a laser sits: ``frame``'s pose on the base from the static transforms
        (``tree``, else /tf_static's as the robot started) when they reach it and it lies
        level, else the description's; and whence, in words."""
        d = one.config
        described = Mount(d.mount_forward, d.mount_left, d.yaw, d.upside_down)
        tree, base = tree or self.tf_static, self.settings.base_frame
        if tree is None:
            return described, f"the description's {one.where}"
        if not frame:
            return described, f"the description's {one.where} (the scan names no frame)"
        pose = tree.pose(base, frame)
        if pose is None:
            return described, (
                f"the description's {one.where} (nothing on {TF_STATIC_TOPIC} from {base!r} "
                f"to {frame!r} so far)"
            )
        found = mount_of(pose)
        if isinstance(found, str):
            return described, f"the description's {one.where} ({TF_STATIC_TOPIC}: {found})"
        return found, f"{TF_STATIC_TOPIC} ({base!r} → {frame!r})"

    def _say_mount(self, name: str, one: _LaserTopic, mount: Mount, source: str) -> None:
        d = one.config
        described = Mount(d.mount_forward, d.mount_left, d.yaw, d.upside_down)
        if source.startswith(TF_STATIC_TOPIC) and mount.differs(described):
            log.warning(
                "%s: the laser's mount from %s: %s; the description's %s says %s",
                name,
                source,
                mount.text(),
                one.where,
                described.text(),
            )
        else:
            log.info("%s: the laser's mount from %s: %s", name, source, mount.text())

    def _merge(self, now: float) -> RangeScan:
        """The robot's scan: every laser's newest sweep, the ``[laser]``'s first, each beam
        from its own origin along its own bearing (the joined arrays kept while no layout
        changes)."""
        laser = self.config.laser
        assert laser is not None
        pieces = [self._pieces[k] for k in self._lasers if k in self._pieces]
        if len(pieces) == 1:
            g = pieces[0].geometry
            return RangeScan(
                now, pieces[0].ranges, g.bearings, g.origin_x, g.origin_y, laser.range_max
            )
        geometries = tuple(p.geometry for p in pieces)
        merged = self._merged
        if (
            merged is None
            or len(merged[0]) != len(geometries)
            or any(a is not b for a, b in zip(merged[0], geometries, strict=True))
        ):
            arrays = tuple(
                np.concatenate([getattr(g, name) for g in geometries])
                for name in ("bearings", "origin_x", "origin_y")
            )
            merged = self._merged = (geometries, arrays)
        bearings, ox, oy = merged[1]
        ranges = np.concatenate([p.ranges for p in pieces])
        return RangeScan(
            now, ranges, bearings, ox, oy, laser.range_max, sweep=len(pieces[0].ranges)
        )

    def _blind_sector(self, ranges: npt.NDArray[np.float64], msg: Any) -> str | None:
        """Why the scan is blind (a sector of ``blind_sector_deg`` with no range the laser
        measured, between its limits), or None. inf means "nothing in range" to ROS, so an
        all-inf scan would read as all clear: it is not taken as one."""
        width = math.radians(self.settings.blind_sector_deg)
        if width <= 0.0 or len(ranges) == 0:
            return None
        measured = np.isfinite(ranges) & (ranges >= msg.range_min) & (ranges <= msg.range_max)
        step = abs(float(msg.angle_increment)) or math.inf
        per_sector = max(1, round(width / step))
        for start in range(0, len(ranges), per_sector):
            if not measured[start : start + per_sector].any():
                first = math.degrees(msg.angle_min + start * msg.angle_increment)
                return (
                    f"blind: no measured range in the {self.settings.blind_sector_deg:g}° from "
                    f"{first:.0f}° (inf, NaN or outside the limits); set [ros2] "
                    "blind_sector_deg = 0 for open ground"
                )
        return None

    def _on_imu(self, msg: Any) -> None:
        now = self._clock()
        if self._stale("imu", msg.header):
            return
        rate = msg.angular_velocity.z
        if msg.angular_velocity_covariance[0] == -1.0:
            self._refuse("imu", "angular velocity covariance −1: the IMU gives no rate")
            return
        if not math.isfinite(rate):
            self._refuse("imu", f"angular velocity z = {rate}")
            return
        # the turn between readings over their stamps' interval, not their arrivals': a
        # program held up a quarter second lost 7 % of a turn taking the rate of one reading
        # over the others' time; a reading stamped no later than the last adds no turn
        stamp = msg.header.stamp.sec + msg.header.stamp.nanosec * 1e-9
        last = self._gyro_stamp
        if last is not None and stamp <= last:
            return
        if last is not None:
            self._gyro_angle += rate * (stamp - last)
        self._gyro_stamp = stamp
        self._gyro = GyroSample(now, rate, self._gyro_angle)
        self._heard("imu", now)

    def _on_joints(self, msg: Any) -> None:
        now = self._clock()
        names = list(msg.name)
        found = False
        for joint, attr in ((self.settings.pan_joint, "_pan"), (self.settings.tilt_joint, "_tilt")):
            if joint in names:
                i = names.index(joint)
                if i >= len(msg.position) or not math.isfinite(msg.position[i]):
                    self._refuse("joint_states", f"{joint}: no finite position")
                    return
                setattr(self, attr, float(msg.position[i]))
                found = True
        if self.arm is not None:
            try:
                found = self.arm.read(names, msg.position, msg.velocity, now) or found
            except ValueError as err:
                self._refuse("joint_states", str(err))
                return
        if found:
            self._joints_stamp = now
            self._heard("joint_states", now)

    def _on_compressed(self, msg: Any) -> None:
        now = self._clock()
        fmt = msg.format.lower()
        if "jpeg" not in fmt and "jpg" not in fmt:
            self._refuse("camera", f"format {msg.format!r}: only JPEG is sent on the link")
            return
        import simplejpeg

        data = bytes(msg.data)
        try:
            height, width, _, _ = simplejpeg.decode_jpeg_header(data)
        except ValueError as err:
            self._refuse("camera", f"not a JPEG ({err})")
            return
        if not self._frame_fits(int(width), int(height)):
            return
        self._frame = _Frame(now, data, None, int(width), int(height))
        self._heard("camera", now)

    def _on_image(self, msg: Any) -> None:
        now = self._clock()
        channels = {"rgb8": 3, "bgr8": 3, "mono8": 1, "rgba8": 4, "bgra8": 4}.get(msg.encoding)
        if channels is None:
            self._refuse("camera", f"encoding {msg.encoding!r} (rgb8, bgr8, rgba8, bgra8 or mono8)")
            return
        h, w, step = msg.height, msg.width, msg.step
        if not self._frame_fits(w, h):
            return
        data = np.frombuffer(bytes(msg.data), dtype=np.uint8)
        if step < w * channels or len(data) < h * step:
            self._refuse("camera", f"{len(data)} bytes for {w}×{h} {msg.encoding} rows of {step}")
            return
        pixels = data[: h * step].reshape(h, step)[:, : w * channels].reshape(h, w, channels)
        if channels == 1:
            rgb = np.repeat(pixels, 3, axis=2)
        elif msg.encoding.startswith("bgr"):
            rgb = pixels[:, :, 2::-1]
        else:
            rgb = pixels[:, :, :3]
        self._frame = _Frame(now, None, np.ascontiguousarray(rgb), int(w), int(h))
        self._heard("camera", now)

    def _frame_fits(self, width: int, height: int) -> bool:
        """A frame within the description's camera (twice its size each way); a larger one,
        or one of no pixels, is refused before anything is decoded or copied."""
        max_w, max_h = self.config.camera.frame_limit
        if 0 < width <= max_w and 0 < height <= max_h:
            return True
        self._refuse("camera", f"a {width}×{height} frame; the camera's limit is {max_w}×{max_h}")
        return False

    def _on_battery(self, msg: Any) -> None:
        if not 0.0 <= msg.percentage <= 1.0:  # NaN: not measured (REP 145); beyond: not a share
            if not math.isnan(msg.percentage):
                self._refuse("battery", f"percentage {msg.percentage}: not within 0…1")
            return
        self.battery = float(msg.percentage)
        self._heard("battery", self._clock())

    # -- start, watch, close -----------------------------------------------------------------

    def required(self) -> list[str]:
        """The topics the robot program cannot go without (odometry, and the laser's scan)."""
        return [key for key in ("odom", *self._lasers) if key in self.topics]

    async def start(self, timeout: float | None = None) -> RobotHardware:
        """Wait for odometry and the scan (then briefly for the rest) and build the HAL.

        Raises :class:`Ros2Error` naming the topic when a required one is silent, carries
        another type or is refused (a scan unlike the description), with the topics there are.
        """
        loop = asyncio.get_running_loop()
        news = asyncio.Event()

        def told() -> None:
            loop.call_soon_threadsafe(news.set)

        self._news = told
        timeout = self.settings.startup_timeout if timeout is None else timeout
        deadline = loop.time() + timeout
        required = self.required() + (["map"] if self.map is not None else [])
        try:
            while True:
                self._check_types()
                fault = self.check_graph()
                if fault is not None:
                    raise Ros2Error(fault)
                missing = [k for k in required if k not in self.heard]
                for key in missing:
                    # a refusal that repeats with nothing good between (a scan unlike the
                    # description) is the robot's; a stray bad message is counted and waited out
                    if self.refused[key] >= REFUSALS_AT_START or (
                        key in self.problems and loop.time() >= deadline
                    ):
                        name, _ = self.topics[key]
                        count = self.refused[key]
                        raise Ros2Error(
                            f"{name}: refused {count} message(s), none usable: {self.problems[key]}"
                        )
                optional = [k for k in self.topics if k not in self.heard and k not in required]
                if not missing:
                    if not optional:
                        break
                    deadline = min(deadline, loop.time() + OPTIONAL_GRACE)
                left = deadline - loop.time()
                if left <= 0:
                    if missing:
                        raise Ros2Error(self._silence(missing, timeout))
                    break
                news.clear()
                try:
                    async with asyncio.timeout(min(left, 0.25)):  # the graph changes unannounced
                        await news.wait()
                except TimeoutError:
                    pass
        finally:
            self._news = lambda: None
        if self.map is not None and self.map.convert(self.topics["map"][0]) is None:
            name = self.topics["map"][0]
            raise Ros2Error(f"{name}: refused its map: {self.problems.get('map', 'no map')}")
        self.hardware = self._build()
        self._mounts_fixed = True
        return self.hardware

    def check_graph(self) -> str | None:
        """A second publisher on odometry, scan, IMU, the map, the pose (the robot's own, when
        taken) or ``cmd_vel`` (beside this node): a
        fault, held for the rest of the run (:attr:`graph_fault`, said by :attr:`status`),
        since whatever it publishes cannot be told from the robot's own. Checked at start and
        every :data:`GRAPH_PERIOD` while running."""
        if self.graph_fault is not None:
            return self.graph_fault
        me = (self.node.get_name(), self.node.get_namespace())
        keys = ("odom", *self._lasers, "imu", "map", "pose")
        watched = [self.topics[k][0] for k in keys if k in self.topics]
        for name in [*watched, self._cmd_vel.topic_name]:
            infos = self.node.get_publishers_info_by_topic(name)
            others = [i for i in infos if (i.node_name, i.node_namespace) != me]
            allowed = 0 if name == self._cmd_vel.topic_name else 1
            if len(others) > allowed:
                nodes = ", ".join(sorted({_node_name(i) for i in others}))
                self.graph_fault = (
                    f"{name} has {len(others) + (name == self._cmd_vel.topic_name)} publishers "
                    f"({nodes}{', and this node' if allowed == 0 else ''}): another node "
                    "publishes where only one may; restart once it is gone (SROS2 keeps them "
                    "out: docs/ros2.md)"
                )
                log.error("%s", self.graph_fault)
                self._news()
                return self.graph_fault
        return None

    def _publishers(self, name: str) -> list[str]:
        return [info.topic_type for info in self.node.get_publishers_info_by_topic(name)]

    def _check_types(self) -> None:
        for key, (name, kind) in self.topics.items():
            if key in self.heard:
                continue
            types = self._publishers(name)
            if types and kind not in types:
                raise Ros2Error(
                    f"{name} carries {', '.join(sorted(set(types)))}, expected {kind} "
                    f"(set [ros2.topics] {key} in the robot description)"
                )

    def _silence(self, missing: list[str], timeout: float) -> str:
        names = ", ".join(f"{self.topics[k][0]} ({self.topics[k][1]})" for k in missing)
        there = []
        node = self.node
        me = (node.get_name(), node.get_namespace())
        for name, types in sorted(node.get_topic_names_and_types()):
            others = [
                info
                for info in node.get_publishers_info_by_topic(name)
                if (info.node_name, info.node_namespace) != me
            ]
            if others and name not in ("/rosout", "/parameter_events"):
                there.append(f"{name} ({', '.join(types)})")
        where = f" in namespace /{self.namespace}" if self.namespace else ""
        listing = "; ".join(there) if there else "none"
        return (
            f"no message on {names} within {timeout:g} s{where} "
            f"(ROS_DOMAIN_ID decides which robots are seen); published topics: {listing}"
        )

    def _build(self) -> RobotHardware:
        heard = self.heard
        pt = self.config.pan_tilt
        arm = self.arm if self.arm is not None and self.arm.heard else None
        notes: tuple[str, ...] = ()
        if self.arm is not None and arm is None:
            topic = self.topics.get("joint_states")
            name = topic[0] if topic is not None else "joint_states"
            notes = (f"no arm: {name} names none of the arm's joints; the arm is off",)
        return RobotHardware(
            drive=_Drive(self),
            odometer=LatestReading(lambda: self._odom),
            gyro=LatestReading(lambda: self._gyro) if "imu" in heard else None,
            laser=_Laser(self) if any(k in heard for k in self._lasers) else None,
            pan_tilt=_PanTilt(self) if pt is not None and "joint_states" in heard else None,
            camera=_Camera(self) if "camera" in heard else None,
            connection=self,
            arm=arm,
            localization=self.pose,
            map_source=self.map,
            notes=notes,
        )

    @property
    def connected(self) -> bool:
        """Every required topic spoke within ``quiet_timeout`` and the node spins."""
        return (
            self._quiet() is None
            and self.graph_fault is None
            and not self.estop_pressed
            and self._ros.spinning
        )

    def _quiet(self) -> tuple[str, float] | None:
        now = self._clock()
        for key in self.required():
            last = self.heard.get(key)
            if last is None or now - last > self.settings.quiet_timeout:
                return key, (now - last if last is not None else math.inf)
        return None

    @property
    def status(self) -> str:
        where = f"namespace /{self.namespace}" if self.namespace else "no namespace"
        if self._closed:
            return f"closed the ROS 2 node ({where})"
        if self.graph_fault is not None:
            return f"hardware fault: {self.graph_fault}; commanding nothing"
        if self.estop_pressed:
            return (
                f"external e-stop engaged on {self.topics['estop'][0]}: commanding nothing "
                "(let it go there, then release the e-stop in the cockpit)"
            )
        quiet = self._quiet()
        if quiet is not None:
            key, age = quiet
            why = f": {self.problems[key]}" if key in self.problems else ""
            return (
                f"hardware fault: {self.topics[key][0]} quiet for {age:.2f} s{why}; "
                "commanding nothing"
            )
        battery = f", battery {self.battery:.0%}" if self.battery is not None else ""
        return f"a ROS 2 robot ({where}; {', '.join(list(self.heard))}){battery}"

    def publish_twist(self, v: float, vy: float, omega: float) -> None:
        """A velocity command on ``cmd_vel`` (zero if any number is not finite)."""
        if not _finite(v, vy, omega):
            v = vy = omega = 0.0
        r = self._r
        twist = r.Twist()
        twist.linear.x, twist.linear.y, twist.angular.z = float(v), float(vy), float(omega)
        if self.settings.cmd_vel_stamped:
            msg = r.TwistStamped()
            msg.header.stamp = self.node.get_clock().now().to_msg()
            msg.header.frame_id = self.settings.base_frame
            msg.twist = twist
        else:
            msg = twist
        self._cmd_vel.publish(msg)

    def publish_pan_tilt(self, pan_rate: float, tilt_rate: float) -> None:
        """Pan and tilt rates as the description's controller takes them."""
        pub, pt = self._pan_tilt_pub, self.config.pan_tilt
        if pub is None or pt is None:
            return
        if not _finite(pan_rate, tilt_rate):
            pan_rate = tilt_rate = 0.0
        r = self._r
        joints, rates, positions = [], [], []
        if pt.has_pan:
            joints.append(self.settings.pan_joint)
            rates.append(float(pan_rate))
            positions.append(self._pan or 0.0)
        if pt.has_tilt:
            joints.append(self.settings.tilt_joint)
            rates.append(float(tilt_rate))
            positions.append(self._tilt or 0.0)
        if self.settings.pan_tilt_command == "velocities":
            msg = r.Float64MultiArray()
            msg.data = rates
        else:
            # a point a cycle or two ahead along the commanded rates, reached at those rates
            horizon = 2.0 * self.config.link.control_period
            msg = r.JointTrajectory()
            msg.header.stamp = self.node.get_clock().now().to_msg()
            msg.joint_names = joints
            point = r.JointTrajectoryPoint()
            point.positions = [p + w * horizon for p, w in zip(positions, rates, strict=True)]
            point.velocities = rates
            point.time_from_start = r.Duration(seconds=horizon).to_msg()
            msg.points = [point]
        pub.publish(msg)

    def take_frame(self) -> _Frame | None:
        """The newest camera frame not taken yet (None: nothing new)."""
        frame = self._frame
        if frame is None or frame is self._frame_taken:
            return None
        self._frame_taken = frame
        return frame

    def close(self) -> None:
        """Command zero velocity and still joints, then end the node and its thread."""
        if self._closed:
            return
        try:
            self.publish_twist(0.0, 0.0, 0.0)
            self.publish_pan_tilt(0.0, 0.0)
            if self.arm is not None:
                self.arm.stop()
            self._cmd_vel.wait_for_all_acked(self._r.Duration(seconds=0.5))
        except Exception as err:  # a dead context cannot publish: nothing more to do
            log.warning("could not command the stop on closing: %r", err)
        self._closed = True
        self._ros.close()


# -- the HAL devices ---------------------------------------------------------------------------


class _Drive:
    """``cmd_vel`` from wheel speeds, with the controller's track width: (v, ω) round-trip."""

    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot
        self._kind = robot.config.drive.kind
        self._d = robot.config.drive.d_eff

    @property
    def kind(self) -> Literal["differential", "tracked", "skid_steer", "holonomic"]:
        return self._kind

    def command_wheels(self, left: float, right: float) -> None:
        v, omega = twist_of_wheels(left, right, self._d)
        self._robot.publish_twist(v, 0.0, omega)

    def command_twist(self, vx: float, vy: float, omega: float) -> None:
        self._robot.publish_twist(vx, vy, omega)


class _Laser:
    name = "laser"

    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot

    def latest(self) -> RangeScan | None:
        return self._robot._scan


class _PanTilt:
    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot
        pt = robot.config.pan_tilt
        assert pt is not None
        self._has_pan, self._has_tilt = pt.has_pan, pt.has_tilt

    @property
    def has_pan(self) -> bool:
        return self._has_pan

    @property
    def has_tilt(self) -> bool:
        return self._has_tilt

    def command_rates(self, pan_rate: float, tilt_rate: float) -> None:
        self._robot.publish_pan_tilt(pan_rate, tilt_rate)

    def state(self) -> PanTiltState:
        r = self._robot
        return PanTiltState(r._joints_stamp, r._pan or 0.0, r._tilt or 0.0)


class _Camera:
    """The camera topic: JPEG passed through as it came; raw images as RGB for encoding."""

    def __init__(self, robot: Ros2Robot) -> None:
        self._robot = robot

    def capture(self) -> npt.NDArray[np.uint8] | None:
        frame = self._robot._frame
        if frame is None:
            return None
        if frame.rgb is not None:
            return frame.rgb
        import simplejpeg

        assert frame.jpeg is not None
        try:  # its header was read on arrival; the rest may still be cut short or corrupt
            image: npt.NDArray[np.uint8] = simplejpeg.decode_jpeg(frame.jpeg, colorspace="RGB")
        except ValueError as err:
            self._robot._refuse("camera", f"a JPEG that does not decode ({err})")
            return None
        return image

    def capture_jpeg(self, quality: int) -> tuple[bytes, int, int] | None:
        frame = self._robot.take_frame()
        if frame is None:
            return None
        if frame.jpeg is not None:
            return frame.jpeg, frame.width, frame.height
        import simplejpeg

        assert frame.rgb is not None
        jpeg: bytes = simplejpeg.encode_jpeg(frame.rgb, quality=quality, colorspace="RGB")
        return jpeg, frame.width, frame.height
