"""The physics-engine Husky against what its topics claim, before any freelook program is put
on it: its scan is the room seen from where the engine has the chassis (360 beams from −π),
its odometry comes from the wheels and so over-reports a point turn by what they skid, its gyro
turns as the chassis does, and its messages come every whole number of fixed engine steps."""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import pytest

pytest.importorskip("pybullet")

from husky_engine import LIDAR, RANGE_MAX, STEP, HuskyEngine, Room, Truth

from freelook.hardware.ros2 import NodeThread, ros, yaw_of_quaternion
from waiting import wait_until

pytestmark = pytest.mark.realtime


def _cast(room: Room, truth: Truth) -> np.ndarray:
    """Each beam's range to the nearest wall or box face (slabs), from the lidar's place."""
    c, s = math.cos(truth.yaw), math.sin(truth.yaw)
    ox, oy = truth.x + LIDAR[0] * c - LIDAR[1] * s, truth.y + LIDAR[0] * s + LIDAR[1] * c
    bearings = truth.yaw + np.radians(np.arange(360) - 180.0)
    dx, dy = np.cos(bearings), np.sin(bearings)
    best = np.full(360, np.inf)
    with np.errstate(divide="ignore", invalid="ignore"):
        for x0, x1, y0, y1 in room.blocks():
            tx0, tx1 = (x0 - ox) / dx, (x1 - ox) / dx
            ty0, ty1 = (y0 - oy) / dy, (y1 - oy) / dy
            near = np.maximum(np.minimum(tx0, tx1), np.minimum(ty0, ty1))
            far = np.minimum(np.maximum(tx0, tx1), np.maximum(ty0, ty1))
            hit = (near <= far) & (near > 0)
            best = np.where(hit & (near < best), near, best)
    return np.where(best > RANGE_MAX, np.inf, best)


class Probe:
    """A node of the test's own: publishes ``cmd_vel``, keeps what the engine publishes."""

    def __init__(self, domain_id: int) -> None:
        r = self.r = ros()
        self.thread = NodeThread("probe", domain_id=domain_id)
        node = self.thread.node
        self.cmd = node.create_publisher(r.Twist, "cmd_vel", 10)
        sensor = r.qos.qos_profile_sensor_data
        self.odom: list[Any] = []
        self.scans: list[Any] = []
        self.imu: list[Any] = []
        node.create_subscription(r.Odometry, "odom", self.odom.append, 50)
        node.create_subscription(r.LaserScan, "scan", self.scans.append, sensor)
        node.create_subscription(r.Imu, "imu/data", self.imu.append, sensor)
        self.thread.start()

    def drive(self, v: float, omega: float, seconds: float) -> None:
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            twist = self.r.Twist()
            twist.linear.x, twist.angular.z = v, omega
            self.cmd.publish(twist)
            time.sleep(0.02)

    def close(self) -> None:
        self.thread.close()


def _seconds(stamp: Any) -> float:
    return stamp.sec + stamp.nanosec * 1e-9


def test_the_engine_husky_publishes_its_room_its_skid_and_its_turn(ros_domain: int) -> None:
    engine = HuskyEngine(ros_domain).start()
    probe = Probe(ros_domain)
    try:
        wait_until(lambda: len(probe.scans) >= 3 and len(probe.odom) >= 3, 10.0, "its topics")
        wait_until(
            lambda: engine.truth().speed < 1e-3,
            10.0,
            "the chassis at rest on its wheels",
            show=engine.truth,
        )
        scans = len(probe.scans)
        wait_until(lambda: len(probe.scans) > scans, 5.0, "a scan of the chassis at rest")
        # standing still: the scan is the room from where the engine has it, beam for beam
        truth, scan = engine.truth(), probe.scans[-1]
        assert len(scan.ranges) == 360
        assert scan.angle_min == pytest.approx(-math.pi)
        assert scan.angle_increment == pytest.approx(math.pi / 180)
        assert np.asarray(scan.ranges) == pytest.approx(_cast(engine.room, truth), abs=0.01)

        # a point turn: the odometry says far more than the chassis turned, the gyro what it did
        odom0, gyro = len(probe.odom), len(probe.imu)
        yaw0 = truth.yaw
        turned = 0.0
        end = time.monotonic() + 3.0
        while time.monotonic() < end:
            probe.drive(0.0, 1.0, 0.1)
            yaw = engine.truth().yaw
            turned += math.remainder(yaw - yaw0, 2 * math.pi)
            yaw0 = yaw
        probe.drive(0.0, 0.0, 1.0)
        turned += math.remainder(engine.truth().yaw - yaw0, 2 * math.pi)
        q = probe.odom[-1].pose.pose.orientation
        q0 = probe.odom[odom0 - 1].pose.pose.orientation
        said = yaw_of_quaternion(q.x, q.y, q.z, q.w) - yaw_of_quaternion(q0.x, q0.y, q0.z, q0.w)
        readings = probe.imu[gyro:]
        stamps = [_seconds(m.header.stamp) for m in readings]
        rates = [m.angular_velocity.z for m in readings]
        gyro_turned = sum(r * dt for r, dt in zip(rates[1:], np.diff(stamps), strict=True))
        print(
            f"point turn: the chassis {math.degrees(turned):.1f}°, its odometry "
            f"{math.degrees(said):.1f}°, its gyro {math.degrees(gyro_turned):.1f}°"
        )
        assert turned > 0.5  # it turned
        assert said / turned > 1.3  # the wheels' odometry over-reports the turn (skid)
        assert gyro_turned == pytest.approx(turned, rel=0.03)

        # stamps on the engine's fixed step: odometry every 10 steps (24 Hz), a gap longer only
        # where a loaded machine held the engine back
        gaps = np.diff([_seconds(m.header.stamp) for m in probe.odom[odom0:]])
        on_step = np.abs(gaps - 10 * STEP) < 2e-6
        assert np.all(on_step | (gaps > 10 * STEP))
        # (how many are on the step is how well the machine kept up: the engine's own figure)
        assert on_step.any(), gaps
        assert engine.contacts == 0
    finally:
        probe.close()
        engine.close()
