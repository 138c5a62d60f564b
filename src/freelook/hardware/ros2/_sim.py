"""The built-in simulator published as a ROS 2 robot (``freelook sim --ros2``).

The simulator runs on the real-time runtime; its base behaves as a ROS 2 base does: it
publishes its own dead reckoning from its wheel encoders (never the simulator's truth) on
``odom``, the laser's scans on ``scan`` (+inf where nothing is within range, as ROS means it),
the gyro on ``imu/data``, the driving camera as JPEG on ``camera/image_raw/compressed`` and the
pan, tilt and arm joints on ``joint_states``, and obeys ``cmd_vel`` and the pan-tilt's, the
arm's and the gripper's controllers, as the robot description's ``[ros2]`` section names them.
Like its controllers it stops on its own: the base when ``cmd_vel``, the arm when its
commands have been silent for ``command_timeout``. With ``truth`` (an error model's draw) the
simulated robot differs from its description as a real one does. No /tf is published
(``tf2_msgs`` has no pip wheel here): the odometry message carries odom → base, the
description the sensors' poses.
"""

from __future__ import annotations

import asyncio
import math
import os
import threading
from collections.abc import Callable
from typing import Any

import numpy as np

from freelook.config import PhysicalTruth, RobotConfig
from freelook.estimation import Odometry
from freelook.hardware.ros2._convert import wheels_of_twist
from freelook.hardware.ros2._rclpy import NodeThread, ros
from freelook.maps import World, choose_start
from freelook.runtime import RealtimeRuntime
from freelook.sim import Simulator

__all__ = ["SimulatedRos2Robot", "serve_simulated_ros2"]

ODOM_RATE = 50.0  # Hz, odometry and joint states
IMU_RATE = 50.0  # Hz
CAMERA_RATE = 10.0  # Hz at most (each frame is rendered and encoded)


class SimulatedRos2Robot:
    """The simulator of ``config`` in ``world`` as a ROS 2 robot in ``namespace``.

    :meth:`run` (a coroutine) runs it until its runtime stops. ``camera``: render and publish
    the driving camera (a robot with a pan-tilt unit).
    """

    def __init__(
        self,
        config: RobotConfig,
        world: World,
        namespace: str = "",
        *,
        seed: int = 0,
        start: tuple[float, float, float] | None = None,
        domain_id: int | None = None,
        camera: bool = True,
        command_timeout: float = 0.5,
        truth: PhysicalTruth | None = None,
    ) -> None:
        self.config = config
        self.runtime = RealtimeRuntime()
        pose = choose_start(world, config.footprint, start)
        self.sim = Simulator(config, world, seed=seed, pose=pose, truth=truth)
        self.sim.attach(self.runtime)
        drive = config.drive
        # the base's own odometry frame: where it was switched on
        self.odometry = Odometry(
            drive.encoder_counts_per_rev, drive.wheel_diameter, drive.track_width
        )
        self.command_timeout = command_timeout
        self._last_command = -math.inf
        self._last_arm_command = -math.inf
        self.commands = 0
        #: set once odometry and the first scan have been published
        self.publishing = asyncio.Event()
        self._scans = 0
        r = ros()
        self._r = r
        self._ros = NodeThread("freelook_sim", namespace, domain_id=domain_id)
        self.node = self._ros.node
        self._lock = threading.Lock()  # commands arrive on the executor's thread
        self._pending: tuple[float, float, float] | None = None
        self._pending_pan: tuple[float, float] | None = None
        self._pending_arm: list[float] | None = None
        self._pending_opening: float | None = None
        self._advertise(world, camera)
        self._obey()
        self.runtime.add_periodic("ros2.odom", 1.0 / ODOM_RATE, self._publish_odom)
        if self._imu_pub is not None:
            self.runtime.add_periodic("ros2.imu", 1.0 / IMU_RATE, self._publish_imu)
        if self._scan_pub is not None:
            self.sim.on_laser.append(self._publish_scan)
        if self._camera is not None:
            rate = min(CAMERA_RATE, config.camera.rate_hz)
            self.runtime.add_periodic("ros2.camera", 1.0 / rate, self._publish_camera)
        self._ros.start()

    def _advertise(self, world: World, camera: bool) -> None:
        """The publishers of the readings (a device the description lacks publishes none)."""
        r, node, config = self._r, self.node, self.config
        topics = config.ros2.topics
        sensor = r.qos.qos_profile_sensor_data
        reliable = r.qos.QoSProfile(depth=10, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        self._odom_pub = node.create_publisher(r.Odometry, topics.odom, reliable)
        self._scan_pub = (
            node.create_publisher(r.LaserScan, topics.scan, sensor)
            if config.laser is not None and topics.scan
            else None
        )
        self._imu_pub = (
            node.create_publisher(r.Imu, topics.imu, sensor)
            if config.gyro is not None and topics.imu
            else None
        )
        pt = config.pan_tilt
        self._pans = pt is not None and (pt.has_pan or pt.has_tilt)
        joints = (self._pans or self.sim.arm is not None) and bool(topics.joint_states)
        self._joints_pub = (
            node.create_publisher(r.JointState, topics.joint_states, reliable) if joints else None
        )
        self._camera = None
        if camera and pt is not None and topics.camera:
            from freelook.sim.camera import Camera

            self._camera = Camera(config.camera, pt, world)
            self._camera_pub = node.create_publisher(r.CompressedImage, topics.camera, sensor)

    def _obey(self) -> None:
        """The subscriptions to the commands its controllers would take."""
        r, node, settings = self._r, self.node, self.config.ros2
        topics = settings.topics
        reliable = r.qos.QoSProfile(depth=10, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        twist = r.TwistStamped if settings.cmd_vel_stamped else r.Twist
        node.create_subscription(twist, topics.cmd_vel, self._on_cmd_vel, reliable)
        if self._joints_pub is not None and self._pans:
            kind = (
                r.JointTrajectory
                if settings.pan_tilt_command == "trajectory"
                else r.Float64MultiArray
            )
            node.create_subscription(kind, topics.pan_tilt_command, self._on_pan_tilt, reliable)
        if self._joints_pub is not None and self.sim.arm is not None:
            kind = (
                r.JointTrajectory if settings.arm_command == "trajectory" else r.Float64MultiArray
            )
            node.create_subscription(kind, topics.arm_command, self._on_arm, reliable)
            node.create_subscription(kind, topics.gripper_command, self._on_gripper, reliable)

    def describe(self) -> list[str]:
        """The topics it publishes and obeys, one line each (resolved names)."""
        node = self.node
        own = ("/rosout", "/parameter_events")
        out = [f"publishes {p.topic_name}" for p in node.publishers if p.topic_name not in own]
        out += [f"obeys {s.topic_name}" for s in node.subscriptions]
        return out

    async def run(self) -> None:
        try:
            await self.runtime.run()
        finally:
            self.close()

    def close(self) -> None:
        self.runtime.stop()
        self._ros.close()

    # -- commands in (executor thread), applied on the runtime's thread ----------------------

    def _on_cmd_vel(self, msg: Any) -> None:
        t = msg.twist if self.config.ros2.cmd_vel_stamped else msg
        values = (t.linear.x, t.linear.y, t.angular.z)
        if not all(math.isfinite(v) for v in values):
            values = (0.0, 0.0, 0.0)  # a base drops a command it cannot carry out
        with self._lock:
            self._pending = values

    def _on_pan_tilt(self, msg: Any) -> None:
        if self.config.ros2.pan_tilt_command == "trajectory":
            rates = list(msg.points[0].velocities) if msg.points else []
        else:
            rates = list(msg.data)
        pt = self.config.pan_tilt
        assert pt is not None
        pan = rates.pop(0) if pt.has_pan and rates else 0.0
        tilt = rates.pop(0) if pt.has_tilt and rates else 0.0
        if not (math.isfinite(pan) and math.isfinite(tilt)):
            pan = tilt = 0.0
        with self._lock:
            self._pending_pan = (pan, tilt)

    def _on_arm(self, msg: Any) -> None:
        if self.config.ros2.arm_command == "trajectory":
            rates = list(msg.points[0].velocities) if msg.points else []
        else:
            rates = list(msg.data)
        with self._lock:
            self._pending_arm = rates  # the arm refuses a wrong count or a non-finite rate

    def _on_gripper(self, msg: Any) -> None:
        if self.config.ros2.arm_command == "trajectory":
            finger = list(msg.points[-1].positions) if msg.points else []
        else:
            finger = list(msg.data)
        if len(finger) == 1 and math.isfinite(finger[0]):
            with self._lock:
                self._pending_opening = 2.0 * finger[0]

    def _apply_commands(self, now: float) -> None:
        with self._lock:
            command, self._pending = self._pending, None
            pan, self._pending_pan = self._pending_pan, None
            rates, self._pending_arm = self._pending_arm, None
            opening, self._pending_opening = self._pending_opening, None
        arm = self.sim.arm
        if arm is not None:
            if rates is not None:
                self._last_arm_command = now
                arm.command_velocities(rates)
            elif now - self._last_arm_command > self.command_timeout:
                arm.command_velocities([0.0] * len(arm.joint_names))  # as its controller would
            if opening is not None:
                arm.command_gripper(opening)
        if command is not None:
            self._last_command = now
            self.commands += 1
            vx, vy, omega = command
            if self.config.drive.kind == "holonomic":
                self.sim.set_twist(vx, vy, omega)
            else:
                self.sim.set_wheel_speeds(*wheels_of_twist(vx, omega, self.config.drive.d_eff))
        elif now - self._last_command > self.command_timeout:
            self.sim.set_wheel_speeds(0.0, 0.0)
            self.sim.set_pan_tilt_rates(0.0, 0.0)
        if pan is not None:
            self.sim.set_pan_tilt_rates(*pan)

    # -- readings out (runtime thread) -------------------------------------------------------

    def _stamp(self) -> Any:
        return self.node.get_clock().now().to_msg()

    def _publish_odom(self, now: float) -> None:
        self._apply_commands(now)
        sample = self.sim.latest_encoders
        if sample is None:
            return
        stamp, left, right = sample
        odometry = self.odometry
        odometry.advance_counts(left, right, stamp)
        x, y, theta = odometry.pose
        r = self._r
        msg = r.Odometry()
        msg.header.stamp = self._stamp()
        msg.header.frame_id = "odom"
        msg.child_frame_id = self.config.ros2.base_frame
        msg.pose.pose.position.x = x
        msg.pose.pose.position.y = y
        msg.pose.pose.orientation.z = math.sin(theta / 2.0)
        msg.pose.pose.orientation.w = math.cos(theta / 2.0)
        msg.twist.twist.linear.x = odometry.v
        msg.twist.twist.angular.z = odometry.omega
        self._odom_pub.publish(msg)
        if not self.publishing.is_set() and (self._scan_pub is None or self._scans > 0):
            self.publishing.set()
        if self._joints_pub is not None:
            self._publish_joints(msg.header.stamp)

    def _publish_joints(self, stamp: Any) -> None:
        assert self._joints_pub is not None
        names: list[str] = []
        positions: list[float] = []
        velocities: list[float] = []
        if self._pans:
            pan, tilt = self.sim.vehicle.pan_tilt()
            names += [self.config.ros2.pan_joint, self.config.ros2.tilt_joint]
            positions += [float(pan), float(tilt)]
            velocities += [0.0, 0.0]
        arm = self.sim.arm
        if arm is not None:
            state = arm.state()
            names += state.names
            positions += state.positions
            velocities += state.velocities
            model = arm.model
            for j in model.gripper_joints[:1]:
                names.append(model.joint_names[j])
                positions.append(float(arm.q[j]))
                velocities.append(float(arm.qd[j]))
        joints = self._r.JointState()
        joints.header.stamp = stamp
        joints.name = names
        joints.position = positions
        joints.velocity = velocities
        self._joints_pub.publish(joints)

    def _publish_imu(self, now: float) -> None:
        sample = self.sim.latest_gyro
        if sample is None or self._imu_pub is None:
            return
        msg = self._r.Imu()
        msg.header.stamp = self._stamp()
        msg.header.frame_id = "imu"
        msg.orientation_covariance[0] = -1.0  # no orientation: a rate gyro
        msg.angular_velocity.z = float(sample[1])
        self._imu_pub.publish(msg)

    def _publish_scan(self, stamp: float) -> None:
        frame = self.sim.latest_laser
        laser = self.config.laser
        if frame is None or laser is None or self._scan_pub is None:
            return
        half = math.radians(laser.fov_deg) / 2.0
        msg = self._r.LaserScan()
        msg.header.stamp = self._stamp()
        msg.header.frame_id = self.config.ros2.scan_frame or "laser"
        msg.angle_min = -half
        msg.angle_max = half
        msg.angle_increment = 2.0 * half / (laser.beams - 1)
        msg.scan_time = 1.0 / laser.rate_hz
        msg.range_min = laser.range_min
        msg.range_max = laser.range_max
        ranges = np.asarray(frame.ranges, dtype=np.float32)
        if laser.upside_down:  # its angles turn clockwise: the simulator's fan backwards
            ranges = ranges[::-1]
        msg.ranges = np.where(ranges >= laser.range_max, np.float32(np.inf), ranges).tolist()
        self._scan_pub.publish(msg)
        self._scans += 1

    def _publish_camera(self, now: float) -> None:
        assert self._camera is not None
        import simplejpeg

        v = self.sim.vehicle
        image = self._camera.render(v.x, v.y, v.theta, v.pan, v.tilt)
        msg = self._r.CompressedImage()
        msg.header.stamp = self._stamp()
        msg.header.frame_id = "camera"
        msg.format = "rgb8; jpeg compressed bgr8"
        msg.data = simplejpeg.encode_jpeg(
            np.ascontiguousarray(image), quality=self.config.camera.jpeg_quality, colorspace="RGB"
        )
        self._camera_pub.publish(msg)


async def serve_simulated_ros2(
    config: RobotConfig,
    world: World,
    namespace: str = "",
    *,
    seed: int = 0,
    start: tuple[float, float, float] | None = None,
    truth: PhysicalTruth | None = None,
    announce: Callable[[str], None] = print,
) -> None:
    """``freelook sim --ros2``: the simulator as a ROS 2 robot until cancelled, its topics
    announced first; ``truth``: the physical robot when it differs from its description."""
    robot = SimulatedRos2Robot(config, world, namespace, seed=seed, start=start, truth=truth)
    running = asyncio.create_task(robot.run())
    # announced once it publishes (its first steps load the simulator's compiled loops)
    published = asyncio.create_task(robot.publishing.wait())
    await asyncio.wait((running, published), return_when=asyncio.FIRST_COMPLETED)
    published.cancel()
    if not running.done():
        where = f"namespace /{namespace}" if namespace else "no namespace"
        domain = os.environ.get("ROS_DOMAIN_ID", "0")
        announce(
            f"freelook sim: {config.name} in {world.name} on ROS 2 ({where}, "
            f"ROS_DOMAIN_ID {domain})"
        )
        for line in robot.describe():
            announce(f"  {line}")
    await running
