"""A ROS 2 robot behind the robot program's hardware interfaces.

:class:`Ros2Robot` owns an rclpy node in a context of its own and spins it on a thread of its
own. Subscriptions keep the newest reading of each topic, checked and converted
(:mod:`._convert`, :mod:`._readings`, the lasers' :mod:`._scans`), stamped on the robot
program's clock when it arrived; the HAL devices (:mod:`._devices`) read those and publish
commands; :mod:`._graph` watches who else publishes. Nothing of rclpy reaches the robot program.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import math
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.arm import load_arm
from freelook.config import RobotConfig
from freelook.geometry import Pose
from freelook.hal import GyroSample, LatestReading, OdometrySample, RangeScan, RobotHardware
from freelook.hardware.ros2._arm import Ros2Arm
from freelook.hardware.ros2._devices import _Camera, _Drive, _Laser, _PanTilt
from freelook.hardware.ros2._errors import Ros2Error
from freelook.hardware.ros2._graph import _Graph
from freelook.hardware.ros2._localization import RosMap, RosPose, latched_qos
from freelook.hardware.ros2._rclpy import NodeThread, ros
from freelook.hardware.ros2._readings import _finite, _Frame, _Geometry, _LaserTopic, _Piece
from freelook.hardware.ros2._scans import _Scans
from freelook.hardware.ros2._state import StatePublisher
from freelook.hardware.ros2._tf import (
    TF_STATIC_TOPIC,
    Mount,
    OdomTfPublisher,
    StaticTree,
    tf_message,
)

__all__ = ["Ros2Robot"]

log = logging.getLogger(__name__)

#: s to wait for the optional topics once odometry and the scan have come
OPTIONAL_GRACE = 1.0
#: refused messages of a required topic, with none usable, that stop the start at once
REFUSALS_AT_START = 3
#: s between two looks at who publishes on the robot's topics
GRAPH_PERIOD = 1.0


@functools.cache
def _say_tf_off(why: str) -> None:
    """Say once why /tf is off (each reason once per process)."""
    log.warning(
        "no /tf: %s; the lasers' mounts are the description's and freelook publishes no "
        "odom → base_link (python tools/build_tf2_msgs.py in freelook's checkout builds "
        "tf2_msgs into this environment; a sourced ROS 2 install has it)",
        why,
    )


class Ros2Robot(_Graph, _Scans):
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
        """Over 80 lines: the node's state, one attribute a line with what it holds."""
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
