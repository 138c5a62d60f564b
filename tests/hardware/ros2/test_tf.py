"""/tf and /tf_static over real DDS, with the ``tf2_msgs`` that ``tools/build_tf2_msgs.py``
builds: the laser's mount taken from the robot's static transforms at start (said in the log;
one that moves it mid-run said and not taken), the program's estimate published as odom →
base_link, given up when another node publishes the base's transform, and one line in the log
when tf2_msgs is not there."""

from __future__ import annotations

import asyncio
import logging
import math
import os
import subprocess
import sys
import time
from typing import Any

import numpy as np
import pytest
from ros2_base import Room, RoomBase, lidar_360
from ros2_processes import CLI_TEST_TIMEOUT, start_robot_program

from cli_processes import ThesisOperator, free_udp_port, stop
from freelook.config import RobotConfig, load_robot
from freelook.hardware.ros2 import NodeThread, Ros2Robot, ros
from freelook.hardware.ros2._tf import Mount, StaticTree, mount_of, tf_message
from freelook.link import SetTransmission, VelocityCommand
from waiting import wait_until, wait_until_async

pytestmark = [pytest.mark.realtime, pytest.mark.timeout(CLI_TEST_TIMEOUT)]

DIFF_BASE: dict[str, Any] = {"length": 0.51, "width": 0.43, "center_forward": 0.0}


def _kind() -> Any:
    kind, why = tf_message()
    assert kind is not None, f"{why}: python tools/build_tf2_msgs.py builds it"
    return kind


def _transform(
    parent: str, child: str, xyz: tuple[float, float, float], rpy: tuple[float, float, float]
) -> Any:
    r = ros()
    t = r.TransformStamped()
    t.header.frame_id, t.child_frame_id = parent, child
    t.transform.translation.x, t.transform.translation.y, t.transform.translation.z = xyz
    roll, pitch, yaw = (a / 2 for a in rpy)
    cr, sr, cp, sp, cy, sy = (f(a) for a in (roll, pitch, yaw) for f in (math.cos, math.sin))
    q = t.transform.rotation
    q.w = cr * cp * cy + sr * sp * sy
    q.x = sr * cp * cy - cr * sp * sy
    q.y = cr * sp * cy + sr * cp * sy
    q.z = cr * cp * sy - sr * sp * cy
    return t


class TfNode:
    """A node of the test's own: publishes static transforms (transient local, as
    robot_state_publisher), publishes on /tf and keeps what /tf carries."""

    def __init__(self, domain: int) -> None:
        r = ros()
        self._kind = kind = _kind()
        self._ros = NodeThread("tf_test", domain_id=domain)
        node = self.node = self._ros.node
        latched = r.qos.QoSProfile(
            depth=1,
            reliability=r.qos.ReliabilityPolicy.RELIABLE,
            durability=r.qos.DurabilityPolicy.TRANSIENT_LOCAL,
        )
        reliable = r.qos.QoSProfile(depth=100, reliability=r.qos.ReliabilityPolicy.RELIABLE)
        self.static = node.create_publisher(kind, "/tf_static", latched)
        self.dynamic = node.create_publisher(kind, "/tf", reliable)
        self.heard: list[tuple[float, Any]] = []
        node.create_subscription(
            kind,
            "/tf",
            lambda m: self.heard.extend((time.monotonic(), t) for t in m.transforms),
            reliable,
        )
        self._ros.start()

    def publish_static(self, *transforms: Any) -> None:
        stamp = self.node.get_clock().now().to_msg()
        for t in transforms:
            t.header.stamp = stamp
        self.static.publish(self._kind(transforms=list(transforms)))

    def publish(self, *transforms: Any) -> None:
        stamp = self.node.get_clock().now().to_msg()
        for t in transforms:
            t.header.stamp = stamp
        self.dynamic.publish(self._kind(transforms=list(transforms)))

    def base_transforms(self) -> list[Any]:
        return [t for _, t in self.heard if t.child_frame_id == "base_link"]

    def close(self) -> None:
        self._ros.close()


def _wall_gap(points: np.ndarray, room: Room) -> np.ndarray:
    x, y = points[:, 0], points[:, 1]
    return np.min(
        np.abs(np.column_stack((x - room.x_min, x - room.x_max, y - room.y_min, y - room.y_max))),
        axis=1,
    )


def _started(config: RobotConfig, domain: int) -> Ros2Robot:
    robot = Ros2Robot(config, domain_id=domain, camera=False)
    try:
        asyncio.run(robot.start())
    except BaseException:
        robot.close()
        raise
    return robot


# -- the static tree, sans-I/O --------------------------------------------------------------


def test_a_chain_of_static_transforms_gives_the_lasers_mount_on_the_base() -> None:
    tree = StaticTree()
    changed = tree.add(
        [
            _transform("base_link", "plate", (0.2, 0.05, 0.3), (0.0, 0.0, math.pi / 2)),
            _transform("plate", "laser", (0.1, 0.0, 0.05), (0.0, 0.0, 0.0)),
            _transform("base_link", "rear", (-0.3, 0.0, 0.2), (math.pi, 0.0, 0.0)),
            _transform("base_link", "tilted", (0.0, 0.0, 0.2), (0.0, math.radians(30), 0.0)),
            _transform("base_link", "behind", (-0.1, 0.0, 0.2), (0.0, math.pi, 0.0)),
        ]
    )
    assert changed == ["plate", "laser", "rear", "tilted", "behind"]
    assert tree.add([_transform("plate", "laser", (0.1, 0.0, 0.05), (0, 0, 0))]) == []
    pose = tree.pose("base_link", "laser")
    assert pose is not None
    laser = mount_of(pose)
    assert isinstance(laser, Mount)
    # the plate turned 90° left: the laser 0.1 m along it is 0.1 m to the base's left
    assert (laser.forward, laser.left) == pytest.approx((0.2, 0.15))
    assert laser.yaw == pytest.approx(math.pi / 2)
    assert not laser.upside_down
    rear_pose = tree.pose("base_link", "rear")
    assert rear_pose is not None
    rear = mount_of(rear_pose)  # rolled over: its x axis still ahead, its z axis down
    assert isinstance(rear, Mount)
    assert rear.upside_down
    assert rear.yaw == pytest.approx(0.0)
    behind_pose = tree.pose("base_link", "behind")
    assert behind_pose is not None
    behind = mount_of(behind_pose)  # pitched over: upside down facing backwards
    assert isinstance(behind, Mount)
    assert behind.upside_down
    assert abs(behind.yaw) == pytest.approx(math.pi)
    tilted_pose = tree.pose("base_link", "tilted")
    assert tilted_pose is not None
    assert mount_of(tilted_pose) == "its scan plane leans 30° from the base's (at most 10°)"
    assert tree.pose("base_link", "camera") is None  # no chain
    assert tree.pose("odom", "laser") is None  # the chain ends at base_link
    tree.add([_transform("laser", "plate", (0, 0, 0), (0, 0, 0))])  # a loop: no pose
    assert tree.pose("base_link", "laser") is None


# -- the laser's mount from /tf_static ------------------------------------------------------


def test_the_lasers_mount_comes_from_tf_static_and_the_log_says_so(
    ros_domain: int, caplog: pytest.LogCaptureFixture
) -> None:
    # the laser sits 0.3 m ahead, 0.1 m left, turned 90° left; the description says 0.12 m
    # ahead, facing ahead: the scan lands on the walls only with the static transform's mount
    lidar = lidar_360(forward=0.3, left=0.1, yaw=math.pi / 2)
    config = load_robot("ros2-diff-base")
    tf = TfNode(ros_domain)
    try:
        tf.publish_static(
            _transform("base_link", "laser", (0.3, 0.1, 0.25), (0.0, 0.0, math.pi / 2))
        )
        with RoomBase(ros_domain, lidar=lidar, **DIFF_BASE) as base:
            caplog.set_level(logging.INFO, logger="freelook.hardware.ros2")
            robot = _started(config, ros_domain)
            try:
                assert "tf_static" in robot.heard
                wait_until(
                    lambda: robot._scan is not None and robot._scan.origin_x[0] == 0.3,
                    2.0,
                    "a scan from the static transform's mount",
                )
                scan = robot._scan
                assert scan is not None
                assert np.all(scan.origin_y == 0.1)
                gap = _wall_gap(scan.points(), base.room)
                assert gap.max() < 2e-3, float(gap.max())
                said = [r.getMessage() for r in caplog.records if "laser's mount" in r.message]
                assert said[-1] == (
                    "/scan: the laser's mount from /tf_static ('base_link' → 'laser'): 0.300 m "
                    "ahead, 0.100 m left, yaw 90.0°, upright; the description's [laser] says "
                    "0.120 m ahead, 0.000 m left, yaw 0.0°, upright"
                )
                # a static transform that moves the laser mid-run (a node joining the graph
                # late, or a forged one) is said, and not taken: safety's geometry stays
                tf.publish_static(_transform("base_link", "laser", (1.0, 0.0, 0.25), (0, 0, 0)))
                wait_until(
                    lambda: any("now puts the laser" in r.message for r in caplog.records),
                    2.0,
                    "the new static transform said",
                )
                moved = [r.getMessage() for r in caplog.records if "now puts" in r.message]
                assert moved == [
                    "/scan: /tf_static ('base_link' → 'laser') now puts the laser at 1.000 m "
                    "ahead, 0.000 m left, yaw 0.0°, upright; it keeps 0.300 m ahead, 0.100 m "
                    "left, yaw 90.0°, upright until freelook restarts"
                ]
                seen = robot.heard["scan"]
                wait_until(lambda: robot.heard["scan"] > seen, 1.0, "a scan after it")
                scan = robot._scan
                assert scan is not None
                assert np.all(scan.origin_x == 0.3)
                assert _wall_gap(scan.points(), base.room).max() < 2e-3
            finally:
                robot.close()
    finally:
        tf.close()


def test_without_tf_static_the_description_s_mount_is_used_and_said(
    ros_domain: int, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="freelook.hardware.ros2")
    with RoomBase(ros_domain, lidar=lidar_360(forward=0.12), **DIFF_BASE) as base:
        robot = _started(load_robot("ros2-diff-base"), ros_domain)
        try:
            assert "tf_static" not in robot.heard
            scan = robot._scan
            assert scan is not None
            assert np.all(scan.origin_x == 0.12)
            assert _wall_gap(scan.points(), base.room).max() < 2e-3
            said = [r.getMessage() for r in caplog.records if "laser's mount" in r.message]
            assert said == [
                "/scan: the laser's mount from the description's [laser] (nothing on "
                "/tf_static from 'base_link' to 'laser' so far): 0.120 m ahead, 0.000 m left, "
                "yaw 0.0°, upright"
            ]
        finally:
            robot.close()


# -- odom → base_link on /tf ----------------------------------------------------------------


def test_the_estimate_goes_on_tf_from_the_bases_odometry_and_gives_way_to_another_publisher(
    ros_domain: int, caplog: pytest.LogCaptureFixture
) -> None:
    tf = TfNode(ros_domain)
    try:
        with RoomBase(ros_domain, lidar=lidar_360(forward=0.12), **DIFF_BASE):
            robot = _started(load_robot("ros2-diff-base"), ros_domain)
            try:
                assert robot.odom_tf is not None
                # anchored at the base's odometry (0, 0, 0) whatever the estimate's own
                # origin (here the map's start at (5, 2) facing +y)
                assert robot.publish_odom_tf((5.0, 2.0, math.pi / 2))
                assert robot.publish_odom_tf((5.0, 3.0, math.pi))  # 1 m ahead, then a turn
                wait_until(lambda: len(tf.base_transforms()) >= 2, 2.0, "two odom → base_link")
                first, second = tf.base_transforms()[:2]
                assert (first.header.frame_id, first.child_frame_id) == ("odom", "base_link")
                p, q = second.transform.translation, second.transform.rotation
                assert (p.x, p.y, p.z) == pytest.approx((1.0, 0.0, 0.0), abs=1e-9)
                assert 2 * math.atan2(q.z, q.w) == pytest.approx(math.pi / 2)
                assert robot.odom_tf.off == ""
                # the base's controller publishes its own odom → base_link: freelook stops
                tf.publish(_transform("odom", "base_link", (0.0, 0.0, 0.0), (0, 0, 0)))
                wait_until(lambda: robot.odom_tf is not None and robot.odom_tf.off, 2.0, "off")
                assert not robot.publish_odom_tf((5.0, 3.0, math.pi))
                gave_way = [r for r in caplog.records if "no odom → base_link" in r.message]
                assert len(gave_way) == 1
                assert "/tf gives it 'odom' → 'base_link'" in gave_way[0].getMessage()
            finally:
                robot.close()
    finally:
        tf.close()


def test_a_static_parent_of_the_base_frame_keeps_odom_off_tf(ros_domain: int) -> None:
    tf = TfNode(ros_domain)
    try:
        tf.publish_static(_transform("base_footprint", "base_link", (0, 0, 0.1), (0, 0, 0)))
        with RoomBase(ros_domain, lidar=lidar_360(forward=0.12), **DIFF_BASE):
            robot = _started(load_robot("ros2-diff-base"), ros_domain)
            try:
                assert robot.odom_tf is not None
                assert "/tf_static gives it 'base_footprint' → 'base_link'" in robot.odom_tf.off
                assert not robot.publish_odom_tf((0.0, 0.0, 0.0))
            finally:
                robot.close()
        config = load_robot("ros2-diff-base")
        quiet = config.model_copy(
            update={"ros2": config.ros2.model_copy(update={"publish_tf": False})}
        )
        with RoomBase(ros_domain, lidar=lidar_360(forward=0.12), **DIFF_BASE):
            robot = _started(quiet, ros_domain)
            try:
                assert robot.odom_tf is None  # publish_tf = false: none
                assert robot.tf_static is not None  # the mounts are still read
            finally:
                robot.close()
    finally:
        tf.close()


def test_the_robot_program_publishes_its_estimate_on_tf_as_the_base_drives(
    ros_domain: int,
) -> None:
    async def run() -> None:
        base = RoomBase(ros_domain).start()
        tf = TfNode(ros_domain)
        udp_port = free_udp_port()
        process, lines = await start_robot_program(udp_port)
        operator = await ThesisOperator.open(udp_port)
        try:
            assert any("a ROS 2 robot" in line for line in lines), lines
            await wait_until_async(lambda: tf.base_transforms(), 2.0, "odom → base_link")
            operator.send(SetTransmission(True))
            end = time.monotonic() + 1.0
            while time.monotonic() < end:
                operator.send(VelocityCommand(0.3, math.radians(10)))
                await asyncio.sleep(0.047)
            operator.send(VelocityCommand(0.0, 0.0))
            await wait_until_async(
                lambda: abs(base.v) + abs(base.omega) < 1e-6, 5.0, "the stop at the base"
            )
            at_rest = len(tf.base_transforms())  # three cycles on, the estimate at rest too
            await wait_until_async(
                lambda: len(tf.base_transforms()) >= at_rest + 3, 5.0, "odom → base_link at rest"
            )
            assert base.x > 0.05  # it went forwards (how far in the second is the machine's)
            t = tf.base_transforms()[-1]
            assert (t.header.frame_id, t.child_frame_id) == ("odom", "base_link")
            p, q = t.transform.translation, t.transform.rotation
            assert (p.x, p.y) == pytest.approx((base.x, base.y), abs=0.03)
            assert 2 * math.atan2(q.z, q.w) == pytest.approx(base.theta, abs=math.radians(2))
            # every control cycle (the Pioneer's 50 ms), give or take a loaded machine
            stamps = [s for s, t in tf.heard if t.child_frame_id == "base_link"]
            recent = [s for s in stamps if s > stamps[-1] - 1.0]
            assert len(recent) >= 10, len(recent)
        finally:
            operator.close()
            await stop(process)
            tf.close()
            base.close()

    asyncio.run(run())


# -- without tf2_msgs -----------------------------------------------------------------------

_WITHOUT = """
import importlib.abc, logging, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "tf2_msgs" or name.startswith("tf2_msgs."):
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Absent())
logging.basicConfig(level=logging.INFO, format="%(levelname)s %(message)s")
from freelook.config import load_robot
from freelook.hardware.ros2 import Ros2Robot
for _ in range(2):
    robot = Ros2Robot(load_robot("ros2-diff-base"), camera=False)
    assert robot.tf_static is None and robot.odom_tf is None
    robot.close()
"""


def test_without_tf2_msgs_the_log_says_once_that_tf_is_off(ros_domain: int) -> None:
    done = subprocess.run(
        [sys.executable, "-c", _WITHOUT],
        capture_output=True,
        text=True,
        timeout=60,
        env=os.environ.copy(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    off = [line for line in done.stderr.splitlines() if "no /tf" in line]
    assert off == [
        "WARNING no /tf: tf2_msgs is not installed here (No module named 'tf2_msgs'); the "
        "lasers' mounts are the description's and freelook publishes no odom → base_link "
        "(python tools/build_tf2_msgs.py in freelook's checkout builds tf2_msgs into this "
        "environment; a sourced ROS 2 install has it)"
    ]
