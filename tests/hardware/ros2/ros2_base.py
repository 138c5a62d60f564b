"""A differential base in a room, as a ROS 2 node of the tests' own: standard topics only.

It publishes ``odom`` (its own dead reckoning, which here is exact), ``scan`` (cast in a
rectangular room), ``imu/data``, ``camera/image_raw/compressed`` (a JPEG whose colour follows
the pan angle) and ``joint_states`` (a pan joint), and obeys ``cmd_vel`` and the pan joint's
``Float64MultiArray`` of rates. It has no command timeout of its own: whatever stops it was
published by whoever drives it. It counts a collision each time its footprint touches a
wall. Everything it receives is kept with its arrival time.
"""

from __future__ import annotations

import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import simplejpeg

from forged_images import claim_size
from freelook.hardware.ros2 import NodeThread, ros


@dataclass
class Room:
    """An axis-aligned room, metres; the base starts at the origin facing +x."""

    x_min: float = -2.0
    x_max: float = 4.0
    y_min: float = -2.0
    y_max: float = 2.0


@dataclass(frozen=True)
class Lidar:
    """A laser of the base, publishing on ``topic`` in its own frame: ``beams`` at angles
    ``angle_min + i·angle_increment`` (either sign), from (``forward``, ``left``) on the base,
    its x axis at ``yaw`` (rad), ``upside_down`` (its angles turn clockwise seen from above)."""

    topic: str = "scan"
    forward: float = 0.17
    left: float = 0.0
    yaw: float = 0.0
    upside_down: bool = False
    beams: int = 181
    angle_min: float = -math.pi / 2
    angle_increment: float = math.pi / 180
    frame: str = "laser"

    def angles(self) -> np.ndarray:
        """Each beam's angle in the laser's own frame (rad)."""
        return self.angle_min + self.angle_increment * np.arange(self.beams)

    def bearings(self) -> np.ndarray:
        """Each beam's bearing on the base (rad)."""
        return self.yaw + (-1.0 if self.upside_down else 1.0) * self.angles()


def lidar_360(**kwargs: Any) -> Lidar:
    """A 360° lidar as RPLidar, LDS and most 360° drivers publish: 360 beams from −π, 1°."""
    return Lidar(
        **{"beams": 360, "angle_min": -math.pi, "angle_increment": math.pi / 180, **kwargs}
    )


@dataclass
class Received:
    stamp: float  # time.monotonic() at arrival
    v: float
    omega: float


@dataclass
class RoomBase:
    """The base; :meth:`start` runs it on a thread of its own in DDS domain ``domain_id``."""

    domain_id: int
    namespace: str = ""
    room: Room = field(default_factory=Room)
    # the footprint, as the robot's description gives it (the Pioneer's)
    length: float = 0.445
    width: float = 0.393
    center_forward: float = -0.04
    laser_forward: float = 0.17
    beams: int = 181
    fov_deg: float = 180.0
    range_max: float = 30.0
    scan_hz: float = 20.0
    odom_hz: float = 50.0
    stamped: bool = False
    odom_type: str = "Odometry"  # another type to publish on ``odom`` instead (a wrong robot)
    scan_frame: str = "laser"
    publish_scan: bool = True
    publish_odom: bool = True
    camera_raw: bool = False  # a bgr8 sensor_msgs/Image on camera/image_raw instead of JPEG
    battery: float | None = None  # publish this charge (0…1) on battery_state
    nan_odom_every: int = 0  # every n-th odometry and IMU message carries a NaN (0: none)
    truncated_jpeg: bool = False  # each JPEG cut short after its header (a failing camera)
    claimed_size: tuple[int, int] | None = None  # each JPEG's header claims this (w, h): forged
    scan_value: float | None = None  # every beam reads this (inf: all clear to ROS, NaN)
    stamp_offset: float = 0.0  # s added to every stamp (< 0: stale readings, > 0: ahead)
    # the laser's layout in its own frame and its mount, as a ROS driver publishes it (None:
    # ``beams`` over ``fov_deg`` centred ahead, from ``laser_forward``)
    lidar: Lidar | None = None
    extra_lidars: tuple[Lidar, ...] = ()  # further lasers, each on its own topic

    def __post_init__(self) -> None:
        self.x = self.y = self.theta = 0.0
        self.v = self.omega = 0.0
        self.pan = 0.0
        self.pan_rate = 0.0
        self.received: list[Received] = []
        self.pan_commands: list[tuple[float, float]] = []
        self.collisions = 0
        self._touching = False
        self.scans_sent: list[float] = []  # monotonic time of each scan published
        self._odom_count = 0
        self._last_step = time.monotonic()
        self.lock = threading.Lock()

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> RoomBase:
        r = ros()
        self._r = r
        self._ros = NodeThread("test_base", self.namespace, domain_id=self.domain_id)
        node = self.node = self._ros.node
        sensor = r.qos.qos_profile_sensor_data
        reliable = r.qos.QoSProfile(depth=10, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        odom_kind = getattr(r, self.odom_type)
        self.odom_pub = node.create_publisher(odom_kind, "odom", 10)
        self.scan_pub = node.create_publisher(r.LaserScan, self.laser().topic, sensor)
        self.extra_pubs = [
            node.create_publisher(r.LaserScan, lidar.topic, sensor) for lidar in self.extra_lidars
        ]
        self.imu_pub = node.create_publisher(r.Imu, "imu/data", sensor)
        self.camera_pub = (
            node.create_publisher(r.Image, "camera/image_raw", sensor)
            if self.camera_raw
            else node.create_publisher(r.CompressedImage, "camera/image_raw/compressed", sensor)
        )
        self.battery_pub = node.create_publisher(r.BatteryState, "battery_state", 10)
        self.joints_pub = node.create_publisher(r.JointState, "joint_states", 10)
        twist = r.TwistStamped if self.stamped else r.Twist
        node.create_subscription(twist, "cmd_vel", self._on_cmd_vel, reliable)
        node.create_subscription(
            r.Float64MultiArray, "pan_tilt_controller/commands", self._on_pan, reliable
        )
        node.create_timer(
            1.0 / self.odom_hz,
            self._tick,
        )
        node.create_timer(1.0 / self.scan_hz, self._scan)
        node.create_timer(0.1, self._camera)
        self._ros.start()
        return self

    def stop_publishing(self, *topics: str) -> None:
        if "scan" in topics:
            self.publish_scan = False
        if "odom" in topics:
            self.publish_odom = False

    def close(self) -> None:
        self._ros.close()

    def __enter__(self) -> RoomBase:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- commands ----------------------------------------------------------------------------

    def _on_cmd_vel(self, msg: Any) -> None:
        t = msg.twist if self.stamped else msg
        with self.lock:
            self.v, self.omega = t.linear.x, t.angular.z
            self.received.append(Received(time.monotonic(), t.linear.x, t.angular.z))

    def _on_pan(self, msg: Any) -> None:
        with self.lock:
            self.pan_rate = float(msg.data[0]) if len(msg.data) else 0.0
            self.pan_commands.append((time.monotonic(), self.pan_rate))

    # -- the world ---------------------------------------------------------------------------

    def _tick(self) -> None:
        now = time.monotonic()
        with self.lock:
            dt = now - self._last_step
            self._last_step = now
            self.theta += self.omega * dt
            self.x += self.v * math.cos(self.theta) * dt
            self.y += self.v * math.sin(self.theta) * dt
            self.pan = max(-1.7, min(1.7, self.pan + self.pan_rate * dt))
            touching = not self.inside()
            if touching and not self._touching:
                self.collisions += 1
            self._touching = touching
            x, y, theta, v, omega, pan = self.x, self.y, self.theta, self.v, self.omega, self.pan
        r_ = self._r
        stamp = self._stamp()
        self._odom_count += 1
        if self.publish_odom:
            if self.odom_type == "Odometry":
                odom = r_.Odometry()
                odom.header.stamp = stamp
                odom.header.frame_id = "odom"
                odom.child_frame_id = "base_link"
                odom.pose.pose.position.x = x
                odom.pose.pose.position.y = y
                odom.pose.pose.orientation.z = math.sin(theta / 2)
                odom.pose.pose.orientation.w = math.cos(theta / 2)
                odom.twist.twist.linear.x = v
                odom.twist.twist.angular.z = omega
                if self.nan_odom_every and self._odom_count % self.nan_odom_every == 0:
                    odom.pose.pose.position.x = math.nan
            else:
                odom = getattr(r_, self.odom_type)()
            self.odom_pub.publish(odom)
        imu = r_.Imu()
        imu.header.stamp = stamp
        imu.header.frame_id = "imu"
        imu.angular_velocity.z = omega
        if self.nan_odom_every and self._odom_count % self.nan_odom_every == 0:
            imu.angular_velocity.z = math.inf
        imu.orientation_covariance[0] = -1.0
        self.imu_pub.publish(imu)
        joints = r_.JointState()
        joints.header.stamp = stamp
        joints.name = ["pan_joint"]
        joints.position = [pan]
        joints.velocity = [self.pan_rate]
        self.joints_pub.publish(joints)

    def _stamp(self) -> Any:
        """The node's time now, moved by :attr:`stamp_offset`."""
        now = self.node.get_clock().now()
        return (now + self._r.Duration(seconds=self.stamp_offset)).to_msg()

    def corners(self) -> list[tuple[float, float]]:
        """The footprint's corners in the room."""
        c, s = math.cos(self.theta), math.sin(self.theta)
        out = []
        for fx in (self.center_forward - self.length / 2, self.center_forward + self.length / 2):
            for fy in (-self.width / 2, self.width / 2):
                out.append((self.x + c * fx - s * fy, self.y + s * fx + c * fy))
        return out

    def clearance(self) -> float:
        """How far the footprint is from the nearest wall (negative: through it)."""
        room = self.room
        return min(
            min(x - room.x_min, room.x_max - x, y - room.y_min, room.y_max - y)
            for x, y in self.corners()
        )

    def inside(self) -> bool:
        return self.clearance() > 0.0

    def laser(self) -> Lidar:
        """The base's laser (:attr:`lidar`, or ``beams`` over ``fov_deg`` centred ahead)."""
        if self.lidar is not None:
            return self.lidar
        half = math.radians(self.fov_deg) / 2
        return Lidar(
            forward=self.laser_forward,
            beams=self.beams,
            angle_min=-half,
            angle_increment=2 * half / (self.beams - 1),
            frame=self.scan_frame,
        )

    def ranges(self, lidar: Lidar | None = None) -> np.ndarray:
        """What ``lidar`` (the base's laser) reads now, beam by beam as it publishes them."""
        with self.lock:
            x, y, theta = self.x, self.y, self.theta
        if lidar is None and self.lidar is None:
            half = math.radians(self.fov_deg) / 2
            bearings = theta + np.linspace(-half, half, self.beams)
            forward, left = self.laser_forward, 0.0
        else:
            lidar = lidar or self.laser()
            bearings = theta + lidar.bearings()
            forward, left = lidar.forward, lidar.left
        px = x + forward * math.cos(theta) - left * math.sin(theta)
        py = y + forward * math.sin(theta) + left * math.cos(theta)
        dx, dy = np.cos(bearings), np.sin(bearings)
        room = self.room
        with np.errstate(divide="ignore", invalid="ignore"):
            tx = np.where(dx > 0, (room.x_max - px) / dx, (room.x_min - px) / dx)
            ty = np.where(dy > 0, (room.y_max - py) / dy, (room.y_min - py) / dy)
        t = np.fmin(np.where(tx > 0, tx, np.inf), np.where(ty > 0, ty, np.inf))
        return np.where(t > self.range_max, np.inf, t)

    def _scan(self) -> None:
        if not self.publish_scan:
            return
        r = self._r
        scan = r.LaserScan()
        scan.header.stamp = self._stamp()
        scan.header.frame_id = self.scan_frame
        if self.lidar is None:
            half = math.radians(self.fov_deg) / 2
            scan.angle_min = -half
            scan.angle_max = half
            scan.angle_increment = 2 * half / (self.beams - 1)
        else:
            self._lay_out(scan, self.lidar)
        scan.range_min = 0.02
        scan.range_max = self.range_max
        beams = self.laser().beams
        ranges = self.ranges() if self.scan_value is None else np.full(beams, self.scan_value)
        scan.ranges = ranges.astype(np.float32).tolist()
        self.scans_sent.append(time.monotonic())
        self.scan_pub.publish(scan)
        for lidar, pub in zip(self.extra_lidars, self.extra_pubs, strict=True):
            extra = r.LaserScan()
            extra.header.stamp = scan.header.stamp
            extra.header.frame_id = lidar.frame
            self._lay_out(extra, lidar)
            extra.range_min = 0.02
            extra.range_max = self.range_max
            extra.ranges = self.ranges(lidar).astype(np.float32).tolist()
            pub.publish(extra)

    @staticmethod
    def _lay_out(scan: Any, lidar: Lidar) -> None:
        scan.header.frame_id = lidar.frame
        scan.angle_min = lidar.angle_min
        scan.angle_increment = lidar.angle_increment
        scan.angle_max = lidar.angle_min + (lidar.beams - 1) * lidar.angle_increment

    def image(self) -> np.ndarray:
        """What the camera sees (RGB): its colour follows the pan angle."""
        with self.lock:
            pan = self.pan
        shade = int(127 + 120 * math.sin(pan))
        return np.full((48, 64, 3), (shade, 80, 255 - shade), dtype=np.uint8)

    def _camera(self) -> None:
        image = self.image()
        stamp = self.node.get_clock().now().to_msg()
        if self.camera_raw:
            raw = self._r.Image()
            raw.header.stamp = stamp
            raw.height, raw.width = image.shape[:2]
            raw.encoding = "bgr8"
            raw.step = raw.width * 3
            raw.data = np.ascontiguousarray(image[:, :, ::-1]).tobytes()
            self.camera_pub.publish(raw)
        else:
            msg = self._r.CompressedImage()
            msg.header.stamp = stamp
            msg.format = "jpeg"
            data = simplejpeg.encode_jpeg(image, quality=90, colorspace="RGB")
            if self.truncated_jpeg:  # the header whole, the scan cut a few bytes in
                data = data[: data.index(b"\xff\xda") + 16]
            if self.claimed_size is not None:
                data = claim_size(data, *self.claimed_size)
            msg.data = data
            self.camera_pub.publish(msg)
        if self.battery is not None:
            battery = self._r.BatteryState()
            battery.percentage = self.battery
            self.battery_pub.publish(battery)

    # -- what happened -----------------------------------------------------------------------

    def commands_since(self, t: float) -> list[Received]:
        with self.lock:
            return [c for c in self.received if c.stamp >= t]
