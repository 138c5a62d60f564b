"""Scans as ROS means them, through the real backend over DDS: a 360° lidar from −π, from 0
and with a reversed increment, one on its head and turned, and a front and a rear laser on two
topics, each with the shipped ``ros2-diff-base`` description (which pins no layout): every
wall the lasers see lands where the room has it in the program's points."""

from __future__ import annotations

import asyncio
import math
from typing import Any

import numpy as np
import pytest
from ros2_base import Lidar, Room, RoomBase, lidar_360

from freelook.config import LaserMountConfig, RobotConfig, load_robot
from freelook.hal import RangeScan
from freelook.hardware.ros2 import Ros2Error, Ros2Robot
from waiting import wait_until

pytestmark = pytest.mark.realtime

DEG = math.pi / 180
#: the shipped description's footprint and laser mount, for the base to match
DIFF_BASE: dict[str, Any] = {"length": 0.51, "width": 0.43, "center_forward": 0.0}


def _description(**laser: Any) -> RobotConfig:
    config = load_robot("ros2-diff-base")
    assert config.laser is not None
    if not laser:
        return config
    return config.model_copy(update={"laser": config.laser.model_copy(update=laser)})


def _wall_gap(points: np.ndarray, room: Room) -> np.ndarray:
    """How far each point (the base at the origin facing +x: robot frame = room frame) is from
    the room's nearest wall."""
    x, y = points[:, 0], points[:, 1]
    return np.min(
        np.abs(np.column_stack((x - room.x_min, x - room.x_max, y - room.y_min, y - room.y_max))),
        axis=1,
    )


def _scan_of(config: RobotConfig, base: RoomBase) -> tuple[Ros2Robot, RangeScan]:
    robot = Ros2Robot(config, domain_id=base.domain_id, camera=False)
    asyncio.run(robot.start())
    assert robot.hardware is not None
    assert robot.hardware.laser is not None
    scan = robot.hardware.laser.latest()
    assert scan is not None
    return robot, scan


def _ahead(scan: RangeScan) -> float:
    """The range of the beam straight ahead (bearing 0)."""
    off = np.abs(np.remainder(scan.bearings + math.pi, math.tau) - math.pi)
    return float(scan.ranges[int(np.argmin(off))])


@pytest.mark.parametrize(
    ("label", "lidar", "laser"),
    [
        ("360 beams from −π every 1°", lidar_360(forward=0.12), {}),
        ("0 … 2π", lidar_360(forward=0.12, angle_min=0.0), {}),
        (
            "a reversed increment, from +π down",
            lidar_360(forward=0.12, angle_min=math.pi, angle_increment=-DEG),
            {},
        ),
        (
            "upside down, turned 90° to the left",
            lidar_360(forward=0.12, yaw=math.pi / 2, upside_down=True),
            {"yaw_deg": 90.0, "upside_down": True},
        ),
        (
            "a 270° fan on its head, facing backwards",
            Lidar(
                forward=0.12,
                beams=541,
                angle_min=-135 * DEG,
                angle_increment=0.5 * DEG,
                yaw=math.pi,
                upside_down=True,
            ),
            {"yaw_deg": 180.0, "upside_down": True},
        ),
    ],
)
def test_a_wall_seen_in_any_layout_lands_where_the_room_has_it(
    ros_domain: int, label: str, lidar: Lidar, laser: dict[str, Any]
) -> None:
    with RoomBase(ros_domain, lidar=lidar, **DIFF_BASE) as base:
        robot, scan = _scan_of(_description(**laser), base)
        try:
            assert robot.connected, (label, robot.status)
            assert len(scan.ranges) == lidar.beams, label
            points = scan.points()
            assert len(points) == lidar.beams, label  # every wall within range
            gap = _wall_gap(points, base.room)
            assert gap.max() < 2e-3, (label, float(gap.max()))
            # a 360° lidar sees all four walls; ahead is the wall at x = 4, from the laser
            if lidar.beams == 360:
                assert _ahead(scan) == pytest.approx(base.room.x_max - 0.12, abs=2e-3), label
                for side in (points[:, 0] > 3.9, points[:, 0] < -1.9, points[:, 1] > 1.9):
                    assert side.sum() > 5, label
            else:  # facing backwards: the wall at x = −2 is in view, the one at x = 4 is not
                assert (points[:, 0] < -1.9).sum() > 20, label
                assert not (points[:, 0] > 3.9).any(), label
            # the sweep's bearings rise evenly from [−π, π): what safety and the memory take
            step = np.diff(scan.bearings)
            assert np.allclose(step, step[0]), label
            assert step[0] > 0, label
            assert -math.pi - 1e-6 <= scan.bearings[0] < math.pi, label
            assert scan.sweep is None, label
        finally:
            robot.close()


def test_a_front_and_a_rear_laser_on_two_topics_merge_into_the_scan(ros_domain: int) -> None:
    front = Lidar(forward=0.12, beams=541, angle_min=-135 * DEG, angle_increment=0.5 * DEG)
    rear = Lidar(
        topic="scan_rear",
        forward=-0.2,
        left=0.05,
        yaw=math.pi,
        beams=181,
        angle_min=math.pi / 2,
        angle_increment=-DEG,  # a driver counting clockwise
        frame="rear_laser",
    )
    extra = LaserMountConfig(
        topic="scan_rear", mount_forward=-0.2, mount_left=0.05, yaw_deg=180.0, frame="rear_laser"
    )
    with RoomBase(ros_domain, lidar=front, extra_lidars=(rear,), **DIFF_BASE) as base:
        robot, _ = _scan_of(_description(extra=(extra,)), base)
        try:
            assert "scan2" in robot.heard
            assert robot.topics["scan2"][0] == "/scan_rear"
            # both lasers' newest scans, the front one's first
            wait_until(
                lambda: robot._scan is not None and len(robot._scan.ranges) == 541 + 181,
                2.0,
                "both lasers in the scan",
            )
            scan = robot._scan
            assert scan is not None
            assert scan.sweep == 541
            assert scan.sweep_beams == 541
            points = scan.points()
            assert len(points) == 541 + 181
            gap = _wall_gap(points, base.room)
            assert gap.max() < 2e-3, float(gap.max())
            # the rear laser's beams start at its own mount and look backwards
            assert np.all(scan.origin_x[541:] == -0.2)
            assert np.all(scan.origin_y[541:] == 0.05)
            assert (points[541:, 0] < -1.9).sum() > 20
            # a second publisher on the rear topic is a fault like one on the front's
            assert robot.check_graph() is None
        finally:
            robot.close()


def test_a_rear_laser_that_never_speaks_stops_the_start_naming_its_topic(
    ros_domain: int,
) -> None:
    extra = LaserMountConfig(topic="scan_rear", mount_forward=-0.2, yaw_deg=180.0)
    with RoomBase(ros_domain, lidar=lidar_360(forward=0.12), **DIFF_BASE):
        robot = Ros2Robot(_description(extra=(extra,)), domain_id=ros_domain, camera=False)
        try:
            with pytest.raises(Ros2Error, match=r"no message on /scan_rear"):
                asyncio.run(robot.start(2.0))
        finally:
            robot.close()


@pytest.mark.parametrize(
    ("laser", "said"),
    [
        ({"pinned": ("beams", "fov_deg")}, r"\[laser\] pins beams = 541 \(pinned = \[\] takes any"),
        ({"beams": 360, "pinned": ("beams", "fov_deg")}, r"\[laser\] pins fov_deg = 270"),
    ],
)
def test_a_pinned_layout_unlike_the_scan_stops_the_start_in_one_line_naming_the_field(
    ros_domain: int, laser: dict[str, Any], said: str
) -> None:
    with RoomBase(ros_domain, lidar=lidar_360(forward=0.12), **DIFF_BASE):
        robot = Ros2Robot(_description(**laser), domain_id=ros_domain, camera=False)
        try:
            with pytest.raises(Ros2Error, match=said) as raised:
                asyncio.run(robot.start(3.0))
            assert "\n" not in str(raised.value)
            assert str(raised.value).startswith("/scan: refused")
        finally:
            robot.close()


def test_an_unpinned_layout_unlike_the_description_is_said_once_in_the_log(
    ros_domain: int, caplog: pytest.LogCaptureFixture
) -> None:
    with RoomBase(ros_domain, lidar=lidar_360(forward=0.12), **DIFF_BASE) as base:
        robot, _ = _scan_of(_description(), base)
        try:
            wait_until(lambda: robot.heard.get("scan", 0.0) > 0.0, 1.0, "scans")
            said = [r.getMessage() for r in caplog.records if "taken as the scan says" in r.message]
            assert len(said) == 1, said
            assert said[0].startswith("/scan: 360 beams from -180° every 1°")
            assert "541 beams over 270°" in said[0]
        finally:
            robot.close()


def test_the_simulator_on_ros2_publishes_a_turned_upside_down_laser_as_it_sits(
    ros_domain: int,
) -> None:
    """``freelook sim --ros2`` lays out the scan in the laser's own frame (on its head: the
    simulator's fan backwards); the backend turns it back onto the robot: the same beams."""
    from freelook.hardware.ros2 import SimulatedRos2Robot
    from freelook.maps import load_world

    config = _description(yaw_deg=90.0, upside_down=True)

    async def run() -> None:
        sim = SimulatedRos2Robot(config, load_world("square"), domain_id=ros_domain, camera=False)
        runtime = asyncio.create_task(sim.run())
        robot = Ros2Robot(config, domain_id=ros_domain, camera=False)
        try:
            hw = await robot.start()
            assert hw.laser is not None
            scan = hw.laser.latest()
            assert scan is not None
            drawn = sim.sim.laser
            assert drawn is not None
            # the simulator's fan: 541 beams over 270° centred on 90°, rising
            assert np.allclose(scan.bearings, drawn.angles, atol=1e-6)
            frame = sim.sim.latest_laser
            assert frame is not None
            hit = scan.ranges < scan.range_max
            assert hit.sum() > 100
            # the same ranges beam by beam (a scan or two apart, the robot standing still)
            near = np.abs(scan.ranges - frame.ranges)[hit]
            assert np.median(near) < 0.05
        finally:
            robot.close()
            sim.close()
            await asyncio.gather(runtime, return_exceptions=True)

    asyncio.run(run())
