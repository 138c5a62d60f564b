"""``describe_robot`` on a real ROS 2 node that publishes hostile values on the standard topics
(real rclpy, real DDS): the description it writes loads, bounds what it must and says what it
did not use; nothing it saw ends the watch."""

from __future__ import annotations

import importlib
import math
from typing import Any

import pytest

from freelook.hardware.ros2 import NodeThread, describe_robot, ros

pytestmark = pytest.mark.realtime


class HostileBase:
    """Odometry with a forged frame name and now and then a NaN twist, a 20000-beam scan with
    no range limits and a frame name that would end a comment line, a camera that sends no
    picture and a calibration of a 180° field of view, unstamped IMU readings, a hundred joint
    names, and a ``TwistStamped`` command subscription."""

    def __init__(self, domain: int) -> None:
        r = ros()
        self.ros = NodeThread("hostile_base", domain_id=domain)
        node = self.ros.node
        sensor = r.qos.qos_profile_sensor_data
        self.odom = node.create_publisher(r.Odometry, "odom", 10)
        self.scan = node.create_publisher(r.LaserScan, "scan", sensor)
        self.imu = node.create_publisher(r.Imu, "imu/data", sensor)
        self.camera = node.create_publisher(r.CompressedImage, "camera/image_raw/compressed", 5)
        self.joints = node.create_publisher(r.JointState, "joint_states", 10)
        info = importlib.import_module("sensor_msgs.msg").CameraInfo
        self.info, self.info_kind = node.create_publisher(info, "camera/camera_info", 5), info
        node.create_subscription(r.TwistStamped, "cmd_vel", lambda _: None, 10)
        self.r, self.node, self.k = r, node, 0
        node.create_timer(0.02, self._fast)
        node.create_timer(0.05, self._scan)
        self.ros.start()

    def _fast(self) -> None:
        r, stamp = self.r, self.node.get_clock().now().to_msg()
        self.k += 1
        odom = r.Odometry()
        odom.header.stamp = stamp
        odom.child_frame_id = 'base\n[drive]\nkind = "holonomic"'
        odom.pose.pose.orientation.w = 1.0
        odom.twist.twist.linear.x = math.nan if self.k % 10 == 0 else 0.0
        self.odom.publish(odom)
        imu = r.Imu()  # stamp 0: none
        imu.angular_velocity.z = 0.01
        self.imu.publish(imu)
        joints = r.JointState()
        joints.header.stamp = stamp
        joints.name = [f"joint_{i}\n# x" for i in range(100)] + ["y" * 5000]
        self.joints.publish(joints)
        picture = r.CompressedImage()
        picture.header.stamp = stamp
        picture.format = "jpeg"
        picture.data = b"\xff\xd8 not a jpeg at all"
        self.camera.publish(picture)
        calibration = self.info_kind()
        calibration.header.stamp = stamp
        calibration.width, calibration.height = 640, 480
        calibration.k[0] = 1e-9  # a field of view of all but 180°
        self.info.publish(calibration)

    def _scan(self) -> None:
        scan: Any = self.r.LaserScan()
        scan.header.stamp = self.node.get_clock().now().to_msg()
        scan.header.frame_id = "laser\n[limits]"
        scan.angle_min = -math.pi
        scan.angle_increment = 1e-4
        scan.range_min = math.nan
        scan.range_max = math.inf
        scan.ranges = [1.0] * 20000
        self.scan.publish(scan)

    def close(self) -> None:
        self.ros.close()


def test_a_hostile_robot_is_described_within_bounds_and_what_was_not_used_is_said(
    ros_domain: int,
) -> None:
    base = HostileBase(ros_domain)
    try:
        d = describe_robot("", 2.0, domain_id=ros_domain)
    finally:
        base.close()
    config = d.config
    laser = config.laser
    assert laser is not None
    assert laser.beams == 8192  # the most a description takes
    assert laser.pinned == ()
    assert (laser.range_min, laser.range_max) == (0.05, 30.0)
    assert laser.fov_deg == pytest.approx(math.degrees(1e-4 * 19999), abs=1e-3)
    assert config.ros2.scan_frame == ""
    assert config.ros2.base_frame == "base_link"
    assert config.ros2.cmd_vel_stamped
    assert config.drive.kind == "differential"
    assert config.gyro is not None
    pt = config.pan_tilt
    assert pt is not None
    assert not pt.has_pan
    said = "\n".join(d.assumed)
    assert "beyond the 8192 a description takes" in said
    assert "are no range" in said
    assert "no picture on /camera/image_raw/compressed whose size could be read" in said
    assert "/imu/data: " in said
    assert "with no stamp" in said
    assert "is no frame name" in said
    assert "a field of view of 180° from its camera_info: 60° kept" in said
    # every line of the file is a comment, a section or a key: no name opened another
    for line in d.text.splitlines():
        assert line == "" or line.startswith(("#", "[", " ", "]")) or " = " in line, line
    assert "[limits]" in d.text
    assert d.text.count("\n[drive]") == 1
