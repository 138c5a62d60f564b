"""Clearpath's Husky from its published URDF in PyBullet, behind a ROS 2 base's standard topics.

The model is ``husky.urdf`` beside this file (husky_description expanded by xacro; README.md
says from where), loaded with its primitive collision shapes only: its visual meshes and its
one mesh collision (the top plate, above everything the room holds) are left out, so no mesh
file is needed. Four velocity-controlled wheels on a floor with Coulomb friction skid in a turn
as a real skid-steer base does; nothing here models the skid, the engine makes it.

The node does what the Husky's own ``diff_drive_controller`` (husky_control's
``control.yaml``) and its sensors do, and no more:

- ``cmd_vel`` (``geometry_msgs/Twist``) in, limited to 1 m/s and 2 rad/s and to 3 m/s² and
  6 rad/s² as the controller limits them, and turned into wheel speeds over the URDF's track
  (0.5708 m); no command timeout of its own: whatever stops it was published by whoever
  drives it.
- ``odom`` (``nav_msgs/Odometry``) integrated from the wheels' measured speeds over that
  same track, at :attr:`HuskyEngine.odom_hz`: it over-reports every turn by what the wheels
  skid, as a skid-steer base's own odometry does.
- ``scan`` (``sensor_msgs/LaserScan``): a 360° lidar on the top plate as RPLidar and LDS
  drivers publish it (360 beams from −π every 1°), each beam cast in the engine against the
  room's walls.
- ``imu/data`` (``sensor_msgs/Imu``): the chassis's yaw rate from the engine, no orientation.

The engine steps at a fixed 1/240 s; a timer of the node runs as many steps as the wall clock
has moved on (at most :data:`MAX_CATCH_UP` a tick), and every message is stamped with the
engine's own time on the node's clock, moved on by whatever the engine skipped when it fell
further behind than that. Everything runs on the node's one executor thread; the test
reads :meth:`truth` and the counters under a lock.
"""

from __future__ import annotations

import math
import tempfile
import threading
import time
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pybullet as pb

from freelook.hardware.ros2 import NodeThread, ros

URDF = Path(__file__).with_name("husky.urdf")
STEP = 1.0 / 240.0  # s, the engine's fixed time step
#: steps one tick of the timer may run: a world held back by a loaded machine catches up to
#: 1 s in one go (its readings then come late, stamped when they were true); beyond that it
#: skips, and its stamps jump while the chassis stands (:attr:`HuskyEngine.skipped`)
MAX_CATCH_UP = 240
WHEELS = ("front_left_wheel", "rear_left_wheel", "front_right_wheel", "rear_right_wheel")
WHEEL_RADIUS = 0.1651  # the URDF's wheel_radius
TRACK = 0.5708  # the URDF's track: the wheels' separation the controller is given
WHEEL_TORQUE = 100.0  # N·m a wheel's motor may give
MAX_SPEED, MAX_TURN = 1.0, 2.0  # control.yaml's limits, m/s and rad/s
MAX_ACCELERATION, MAX_ANGULAR_ACCELERATION = 3.0, 6.0  # m/s², rad/s²
#: the lidar on the top plate's centre (top_plate_joint at 0.0812 m ahead, 0.245 m up) on a
#: 5.5 cm mount, in base_link
LIDAR = (0.0812, 0.0, 0.30)
RANGE_MIN, RANGE_MAX = 0.15, 12.0  # m, an RPLidar A2's


@dataclass(frozen=True)
class Room:
    """A walled room, metres in the world (the map's frame); walls 1 m high, 0.1 m thick,
    their inner faces at these bounds, and a box in one corner so no turn of the room looks
    like another."""

    x_min: float = -2.0
    x_max: float = 4.2
    y_min: float = -1.8
    y_max: float = 3.8
    #: a box standing in the room, (x_min, x_max, y_min, y_max)
    box: tuple[float, float, float, float] = (3.3, 4.2, 2.9, 3.8)

    def blocks(self) -> list[tuple[float, float, float, float]]:
        """Every wall and the box as (x_min, x_max, y_min, y_max)."""
        t = 0.1
        return [
            (self.x_min - t, self.x_max + t, self.y_min - t, self.y_min),
            (self.x_min - t, self.x_max + t, self.y_max, self.y_max + t),
            (self.x_min - t, self.x_min, self.y_min, self.y_max),
            (self.x_max, self.x_max + t, self.y_min, self.y_max),
            self.box,
        ]

    def write_map(self, folder: Path, resolution: float = 0.05) -> Path:
        """The room as a ROS ``map_server`` map (``room.yaml`` and ``room.pgm``): its walls
        and box occupied, the floor free; returns the YAML's path."""
        x0, y0 = self.x_min - 0.3, self.y_min - 0.3
        cols = math.ceil((self.x_max + 0.3 - x0) / resolution)
        rows = math.ceil((self.y_max + 0.3 - y0) / resolution)
        xs = x0 + (np.arange(cols) + 0.5) * resolution
        ys = y0 + (np.arange(rows) + 0.5) * resolution
        gx, gy = np.meshgrid(xs, ys)
        occupied = np.zeros((rows, cols), dtype=bool)
        for bx0, bx1, by0, by1 in self.blocks():
            occupied |= (gx >= bx0) & (gx <= bx1) & (gy >= by0) & (gy <= by1)
        outside = (gx < self.x_min - 0.1) | (gx > self.x_max + 0.1)
        outside |= (gy < self.y_min - 0.1) | (gy > self.y_max + 0.1)
        pixels = np.where(occupied, 0, np.where(outside, 205, 254)).astype(np.uint8)
        image = folder / "room.pgm"
        image.write_bytes(f"P5\n{cols} {rows}\n255\n".encode() + pixels[::-1].tobytes())
        yaml = folder / "room.yaml"
        yaml.write_text(
            f"image: room.pgm\nresolution: {resolution}\norigin: [{x0}, {y0}, 0.0]\n"
            "negate: 0\noccupied_thresh: 0.65\nfree_thresh: 0.196\n"
        )
        return yaml


def primitive_urdf(source: Path, folder: Path) -> Path:
    """``source`` without its visuals, its mesh collisions and its Gazebo and transmission
    tags (nothing of them reaches the engine's contacts here), written into ``folder``."""
    tree = ET.parse(source)
    root = tree.getroot()
    for link in root.iter("link"):
        for element in list(link):
            mesh = element.find("geometry/mesh") is not None
            if element.tag == "visual" or (element.tag == "collision" and mesh):
                link.remove(element)
    for tag in ("gazebo", "transmission"):
        for element in root.findall(tag):
            root.remove(element)
    out = folder / "husky-primitive.urdf"
    tree.write(out)
    return out


def _toward(current: float, target: float, step: float) -> float:
    return current + max(-step, min(step, target - current))


@dataclass(frozen=True)
class Truth:
    """Where the engine has the chassis: base_link's (x, y, yaw) in the room, its speed."""

    t: float  # s of engine time
    x: float
    y: float
    yaw: float
    speed: float  # m/s, horizontal
    yaw_rate: float  # rad/s


@dataclass
class HuskyEngine:
    """The Husky in ``room`` at ``start`` (x, y, yaw), its node in DDS domain ``domain_id``;
    :meth:`start` runs it, :meth:`close` ends it."""

    domain_id: int
    odom_hz: float = 24.0
    scan_hz: float = 10.0
    imu_hz: float = 80.0
    room: Room = field(default_factory=Room)
    start_pose: tuple[float, float, float] = (0.0, 0.0, 0.0)
    namespace: str = ""
    #: the topics' names, relative to the namespace: (cmd_vel, odom, scan, imu)
    topics: tuple[str, str, str, str] = ("cmd_vel", "odom", "scan", "imu/data")
    stamped: bool = False  # geometry_msgs/TwistStamped on cmd_vel (Jazzy's controllers)
    #: the wheel separation the base's controller is given (times its multiplier)
    separation: float = TRACK
    lidar_forward: float = LIDAR[0]  # m ahead of base_link

    def __post_init__(self) -> None:
        self.lock = threading.Lock()
        self.contacts = 0  # engine steps on which the robot touched a wall or the box
        self.scans = 0
        self.commands: list[tuple[float, float, float]] = []  # (monotonic, v, ω) received
        self._truth: Truth | None = None
        self._last_scan: list[float] = []
        self._command = (0.0, 0.0)
        self._v = self._w = 0.0  # the controller's limited command
        self._odom = [0.0, 0.0, 0.0]  # x, y, yaw integrated from the wheels
        self._wheels = (0.0, 0.0)  # the sides' measured rim speeds, m/s
        self._steps = 0
        self._skipped = 0.0  # s of the clock the engine fell behind by and skipped
        self._every = {
            name: max(1, round(1.0 / (hz * STEP)))
            for name, hz in (("odom", self.odom_hz), ("scan", self.scan_hz), ("imu", self.imu_hz))
        }

    # -- lifecycle ---------------------------------------------------------------------------

    def start(self) -> HuskyEngine:
        self._folder = tempfile.TemporaryDirectory(prefix="husky-")
        self._engine()
        r = self._r = ros()
        self._ros = NodeThread("husky_engine", self.namespace, domain_id=self.domain_id)
        node = self._node = self._ros.node
        sensor = r.qos.qos_profile_sensor_data
        reliable = r.qos.QoSProfile(depth=10, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        cmd_vel, odom, scan, imu = self.topics
        self._odom_pub = node.create_publisher(r.Odometry, odom, 10)
        self._scan_pub = node.create_publisher(r.LaserScan, scan, sensor)
        self._imu_pub = node.create_publisher(r.Imu, imu, sensor)
        twist = r.TwistStamped if self.stamped else r.Twist
        node.create_subscription(twist, cmd_vel, self._on_cmd_vel, reliable)
        self._t0 = node.get_clock().now()
        self._wall0 = time.monotonic()
        node.create_timer(1.0 / 120.0, self._tick)
        self._ros.start()
        return self

    def close(self) -> None:
        self._ros.close()
        pb.disconnect(physicsClientId=self._client)
        self._folder.cleanup()

    def __enter__(self) -> HuskyEngine:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _engine(self) -> None:
        c = self._client = pb.connect(pb.DIRECT)
        pb.setGravity(0, 0, -9.81, physicsClientId=c)
        pb.setTimeStep(STEP, physicsClientId=c)
        # the pyramid friction model: Bullet's cone model sticks a skid-steer base's wheels
        # in a point turn (it turned 4° of 90°), the pyramid lets them skid as Coulomb
        # friction has them (the chassis turns about half what its wheels say)
        pb.setPhysicsEngineParameter(
            enableConeFriction=0, deterministicOverlappingPairs=1, physicsClientId=c
        )
        floor = pb.createMultiBody(
            0, pb.createCollisionShape(pb.GEOM_PLANE, physicsClientId=c), physicsClientId=c
        )
        pb.changeDynamics(floor, -1, lateralFriction=1.0, physicsClientId=c)
        self._walls = []
        for x0, x1, y0, y1 in self.room.blocks():
            shape = pb.createCollisionShape(
                pb.GEOM_BOX, halfExtents=[(x1 - x0) / 2, (y1 - y0) / 2, 0.5], physicsClientId=c
            )
            self._walls.append(
                pb.createMultiBody(
                    0, shape, basePosition=[(x0 + x1) / 2, (y0 + y1) / 2, 0.5], physicsClientId=c
                )
            )
        x, y, yaw = self.start_pose
        # base_link sits 0.1323 m above the floor on its wheels (wheel_radius less the
        # wheels' vertical offset)
        self._robot = robot = pb.loadURDF(
            str(primitive_urdf(URDF, Path(self._folder.name))),
            [x, y, WHEEL_RADIUS - 0.03282 + 0.001],
            pb.getQuaternionFromEuler([0, 0, yaw]),
            flags=pb.URDF_USE_INERTIA_FROM_FILE | pb.URDF_MERGE_FIXED_LINKS,
            physicsClientId=c,
        )
        # links the URDF gives no inertia the engine makes 1 kg each; the chassis is the
        # URDF's inertial_link, 46.034 kg
        pb.changeDynamics(robot, -1, mass=46.034, physicsClientId=c)
        joints = {
            pb.getJointInfo(robot, j, physicsClientId=c)[1].decode(): j
            for j in range(pb.getNumJoints(robot, physicsClientId=c))
        }
        self._wheel_joints = [joints[name] for name in WHEELS]
        for j in self._wheel_joints:
            pb.changeDynamics(robot, j, lateralFriction=1.0, physicsClientId=c)
        for _ in range(120):  # settle on the wheels
            pb.stepSimulation(physicsClientId=c)
        angles = np.radians(np.arange(360) - 180.0)
        self._beam_angles = angles

    # -- the node ----------------------------------------------------------------------------

    def _on_cmd_vel(self, msg: Any) -> None:
        twist = msg.twist if self.stamped else msg
        v, w = twist.linear.x, twist.angular.z
        with self.lock:
            self.commands.append((time.monotonic(), v, w))
        if math.isfinite(v) and math.isfinite(w):
            self._command = (max(-MAX_SPEED, min(MAX_SPEED, v)), max(-MAX_TURN, min(MAX_TURN, w)))

    def _tick(self) -> None:
        due = int((time.monotonic() - self._wall0) / STEP)
        for _ in range(min(MAX_CATCH_UP, due - self._steps)):
            self._step()
        behind = due - self._steps
        if behind > 0:  # fell behind: the world slows, it does not leap, and its stamps
            self._wall0 += behind * STEP  # stay on the clock (skipping what it slowed by)
            with self.lock:
                self._skipped += behind * STEP

    def _step(self) -> None:
        c, robot = self._client, self._robot
        target_v, target_w = self._command
        self._v = _toward(self._v, target_v, MAX_ACCELERATION * STEP)
        self._w = _toward(self._w, target_w, MAX_ANGULAR_ACCELERATION * STEP)
        left = (self._v - self._w * self.separation / 2) / WHEEL_RADIUS
        right = (self._v + self._w * self.separation / 2) / WHEEL_RADIUS
        for name, j in zip(WHEELS, self._wheel_joints, strict=True):
            pb.setJointMotorControl2(
                robot,
                j,
                pb.VELOCITY_CONTROL,
                targetVelocity=left if "left" in name else right,
                force=WHEEL_TORQUE,
                physicsClientId=c,
            )
        pb.stepSimulation(physicsClientId=c)
        self._steps += 1
        # the controller's odometry, from the wheels' measured speeds
        speeds = [pb.getJointState(robot, j, physicsClientId=c)[1] for j in self._wheel_joints]
        rim_left = WHEEL_RADIUS * (speeds[0] + speeds[1]) / 2
        rim_right = WHEEL_RADIUS * (speeds[2] + speeds[3]) / 2
        self._wheels = (rim_left, rim_right)
        v, w = (rim_left + rim_right) / 2, (rim_right - rim_left) / self.separation
        ox, oy, oyaw = self._odom
        mid = oyaw + w * STEP / 2
        self._odom = [ox + v * math.cos(mid) * STEP, oy + v * math.sin(mid) * STEP, oyaw + w * STEP]
        position, orientation = pb.getBasePositionAndOrientation(robot, physicsClientId=c)
        linear, angular = pb.getBaseVelocity(robot, physicsClientId=c)
        yaw = pb.getEulerFromQuaternion(orientation)[2]
        touching = any(pb.getContactPoints(robot, wall, physicsClientId=c) for wall in self._walls)
        with self.lock:
            self._truth = Truth(
                self._steps * STEP,
                position[0],
                position[1],
                yaw,
                math.hypot(linear[0], linear[1]),
                angular[2],
            )
            self.contacts += touching
        n = self._steps
        if n % self._every["odom"] == 0:
            self._publish_odom(v, w)
        if n % self._every["imu"] == 0:
            self._publish_imu(angular[2])
        if n % self._every["scan"] == 0:
            self._publish_scan(position, yaw)

    def _stamp(self) -> Any:
        seconds = self._steps * STEP + self._skipped
        return (self._t0 + self._r.Duration(seconds=seconds)).to_msg()

    def _publish_odom(self, v: float, w: float) -> None:
        x, y, yaw = self._odom
        odom = self._r.Odometry()
        odom.header.stamp = self._stamp()
        odom.header.frame_id = "odom"
        odom.child_frame_id = "base_link"
        odom.pose.pose.position.x = x
        odom.pose.pose.position.y = y
        odom.pose.pose.orientation.z = math.sin(yaw / 2)
        odom.pose.pose.orientation.w = math.cos(yaw / 2)
        odom.twist.twist.linear.x = v
        odom.twist.twist.angular.z = w
        self._odom_pub.publish(odom)

    def _publish_imu(self, yaw_rate: float) -> None:
        imu = self._r.Imu()
        imu.header.stamp = self._stamp()
        imu.header.frame_id = "base_link"
        imu.orientation_covariance[0] = -1.0  # no orientation: a gyro
        imu.angular_velocity.z = yaw_rate
        self._imu_pub.publish(imu)

    def _publish_scan(self, position: Any, yaw: float) -> None:
        c = self._client
        lx, ly, lz = self.lidar_forward, LIDAR[1], LIDAR[2]
        ox = position[0] + lx * math.cos(yaw) - ly * math.sin(yaw)
        oy = position[1] + lx * math.sin(yaw) + ly * math.cos(yaw)
        oz = position[2] + lz
        bearings = yaw + self._beam_angles
        starts = np.column_stack(
            [ox + RANGE_MIN * np.cos(bearings), oy + RANGE_MIN * np.sin(bearings), np.full(360, oz)]
        )
        ends = np.column_stack(
            [ox + RANGE_MAX * np.cos(bearings), oy + RANGE_MAX * np.sin(bearings), np.full(360, oz)]
        )
        hits = pb.rayTestBatch(starts.tolist(), ends.tolist(), physicsClientId=c)
        span = RANGE_MAX - RANGE_MIN
        ranges = [
            RANGE_MIN + fraction * span if body >= 0 and body != self._robot else math.inf
            for body, _, fraction, _, _ in hits
        ]
        scan = self._r.LaserScan()
        scan.header.stamp = self._stamp()
        scan.header.frame_id = "laser"
        scan.angle_min = -math.pi
        scan.angle_increment = math.pi / 180
        scan.angle_max = -math.pi + 359 * scan.angle_increment
        scan.scan_time = 1.0 / self.scan_hz
        scan.range_min, scan.range_max = RANGE_MIN, RANGE_MAX
        scan.ranges = [float(np.float32(r)) for r in ranges]
        self._scan_pub.publish(scan)
        with self.lock:
            self.scans += 1
            self._last_scan = ranges

    # -- what the test reads -----------------------------------------------------------------

    def truth(self) -> Truth:
        """The chassis in the room now (after the first step)."""
        with self.lock:
            assert self._truth is not None, "the engine has not stepped yet"
            return self._truth

    def set_odom_hz(self, hz: float) -> None:
        """Publish odometry every whole number of steps nearest ``1/hz`` s from now on."""
        self._every["odom"] = max(1, round(1.0 / (hz * STEP)))

    @property
    def skipped(self) -> float:
        """s of the clock the engine fell behind by and skipped (a loaded machine's): while
        it skips, its sensors' stamps jump while the chassis stands."""
        with self.lock:
            return self._skipped

    def last_scan(self) -> list[float]:
        """The ranges of the newest scan published, beam by beam (m; inf: nothing hit)."""
        with self.lock:
            return list(self._last_scan)

    def commands_since(self, t: float) -> list[tuple[float, float, float]]:
        """The ``cmd_vel`` received since ``t`` (monotonic): (arrival, v, ω)."""
        with self.lock:
            return [c for c in self.commands if c[0] >= t]
