"""Every ROS message the backend takes is hostile input (a faulty driver, or any node on the
graph): odometry, scans, IMU, joint states, camera images and battery states with any values
the message types can carry (NaN, ±inf, huge, negative, empty and oversized arrays, any
geometry) go through the real backend's callbacks, with real rclpy messages, and never raise;
what is kept is finite and within its bounds, what is not is refused and counted."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.hardware.ros2 import Ros2Robot, ros

ANY_FLOAT = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, 1e308, -1e308, 5e-324]),
)
SMALL_FLOAT = st.floats(-1e6, 1e6, allow_nan=False)
FLOATS32 = st.floats(allow_nan=True, allow_infinity=True, width=32)


@pytest.fixture(scope="module")
def robot() -> Iterator[Ros2Robot]:
    """The backend with the ROS 2 base's description (laser, IMU, pan joint, camera)."""
    import os

    domain = 90 + os.getpid() % 10
    made = Ros2Robot(load_robot("ros2-tracked-pan-tilt"), domain_id=domain)
    try:
        yield made
    finally:
        made.close()


def _stamped(msg: Any, robot: Ros2Robot, offset: float) -> Any:
    now = robot.node.get_clock().now().nanoseconds * 1e-9 + offset
    sec = max(0, min(int(now), 2**31 - 1))
    msg.header.stamp.sec = sec
    msg.header.stamp.nanosec = int(max(0.0, now - sec) * 1e9) % 1_000_000_000
    return msg


_SETTINGS = settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@_SETTINGS
@given(
    values=st.lists(ANY_FLOAT, min_size=8, max_size=8),
    offset=st.sampled_from([0.0, -5.0, 5.0, -1e9]),
)
def test_odometry_of_any_values(robot: Ros2Robot, values: list[float], offset: float) -> None:
    msg = _stamped(ros().Odometry(), robot, offset)
    p, q, t = msg.pose.pose.position, msg.pose.pose.orientation, msg.twist.twist
    p.x, p.y, q.x, q.y, q.z, q.w, t.linear.x, t.angular.z = values
    robot._odom = None
    robot._on_odom(msg)
    kept = robot._odom
    if kept is not None:
        assert all(math.isfinite(v) for v in kept[1:])


@_SETTINGS
@given(
    angle_min=ANY_FLOAT,
    increment=ANY_FLOAT,
    limits=st.tuples(ANY_FLOAT, ANY_FLOAT),
    ranges=st.one_of(st.lists(FLOATS32, max_size=400), st.just([1.0] * 20000)),
    frame=st.sampled_from(["", "laser", "x" * 300, "\x00\n"]),
)
def test_scans_of_any_geometry_and_ranges(
    robot: Ros2Robot,
    angle_min: float,
    increment: float,
    limits: tuple[float, float],
    ranges: list[float],
    frame: str,
) -> None:
    msg = _stamped(ros().LaserScan(), robot, 0.0)
    msg.header.frame_id = frame
    msg.angle_min, msg.angle_increment = angle_min, increment
    msg.angle_max = (
        angle_min + increment * max(len(ranges) - 1, 0)
        if math.isfinite(angle_min + increment * max(len(ranges) - 1, 0))
        else 0.0
    )
    msg.range_min, msg.range_max = limits
    msg.ranges = ranges
    robot._scan = None
    robot._on_scan(msg)
    kept = robot._scan
    if kept is not None:
        assert np.all(np.isfinite(kept.ranges))
        assert np.all(kept.ranges >= 0.0)
        assert np.all(np.isfinite(kept.bearings))


@_SETTINGS
@given(rate=ANY_FLOAT, covariance=st.sampled_from([0.0, -1.0, math.nan]))
def test_imu_rates_of_any_value(robot: Ros2Robot, rate: float, covariance: float) -> None:
    msg = _stamped(ros().Imu(), robot, 0.0)
    msg.angular_velocity.z = rate
    msg.angular_velocity_covariance[0] = covariance
    robot._gyro = None
    robot._on_imu(msg)
    kept = robot._gyro
    if kept is not None:
        assert math.isfinite(kept.rate)
        assert kept.angle is None or math.isfinite(kept.angle)


@_SETTINGS
@given(
    names=st.lists(st.sampled_from(["pan_joint", "tilt_joint", "other", ""]), max_size=6),
    positions=st.lists(ANY_FLOAT, max_size=8),
    velocities=st.lists(ANY_FLOAT, max_size=8),
)
def test_joint_states_of_any_shape(
    robot: Ros2Robot, names: list[str], positions: list[float], velocities: list[float]
) -> None:
    msg = _stamped(ros().JointState(), robot, 0.0)
    msg.name, msg.position, msg.velocity = names, positions, velocities
    robot._pan = robot._tilt = None
    robot._on_joints(msg)
    for value in (robot._pan, robot._tilt):
        assert value is None or math.isfinite(value)


@_SETTINGS
@given(
    data=st.one_of(
        st.binary(max_size=512),
        st.just(b"\xff\xd8\xff\xc0\x00\x11\x08\xff\xff\xff\xff\x03" + b"\x00" * 64),
    ),
    fmt=st.sampled_from(["jpeg", "png", "rgb8; jpeg compressed bgr8", ""]),
)
def test_compressed_images_of_any_bytes(robot: Ros2Robot, data: bytes, fmt: str) -> None:
    msg = _stamped(ros().CompressedImage(), robot, 0.0)
    msg.format, msg.data = fmt, data
    robot._frame = None
    robot._on_compressed(msg)
    frame = robot._frame
    if frame is not None:
        limit = robot.config.camera.frame_limit
        assert 0 < frame.width <= limit[0]
        assert 0 < frame.height <= limit[1]


@_SETTINGS
@given(
    size=st.tuples(
        st.sampled_from([0, 1, 64, 65535, 2**32 - 1]), st.sampled_from([0, 1, 48, 2**32 - 1])
    ),
    step=st.sampled_from([0, 1, 192, 2**32 - 1]),
    encoding=st.sampled_from(["rgb8", "bgr8", "mono8", "rgba8", "16UC1", ""]),
    data=st.binary(max_size=20000),
)
def test_raw_images_of_any_size(
    robot: Ros2Robot, size: tuple[int, int], step: int, encoding: str, data: bytes
) -> None:
    msg = _stamped(ros().Image(), robot, 0.0)
    msg.width, msg.height = size
    msg.step, msg.encoding, msg.data = step, encoding, data
    robot._frame = None
    robot._on_image(msg)
    frame = robot._frame
    if frame is not None and frame.rgb is not None:
        assert frame.rgb.shape == (frame.height, frame.width, 3)


@_SETTINGS
@given(percentage=ANY_FLOAT)
def test_battery_states_of_any_value(robot: Ros2Robot, percentage: float) -> None:
    msg = ros().BatteryState()
    msg.percentage = percentage if math.isnan(percentage) or abs(percentage) < 3e38 else 0.5
    robot.battery = None
    robot._on_battery(msg)
    assert robot.battery is None or 0.0 <= robot.battery <= 1.0
