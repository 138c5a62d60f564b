"""The robot's own map and pose from ROS 2 are hostile input: a grid's size is checked before
anything is copied from it, its cells, resolution and origin before it becomes the map; a pose's
numbers, covariance, frame and stamp before it is taken. Over real DDS: a start whose only map
is refused names it, and a map published later replaces the one the program drives by."""

from __future__ import annotations

import asyncio
import math
import time
from typing import Any

import numpy as np
import pytest
from ros2_base import RoomBase
from ros2_localization import MapAndPose, room_grid

from freelook.config import load_robot
from freelook.hardware.ros2 import NodeThread, Ros2Error, Ros2Robot, ros
from freelook.hardware.ros2._localization import RosMap, RosPose
from freelook.robot import RobotProgram
from freelook.runtime import LockstepRuntime
from waiting import wait_until

pytestmark = pytest.mark.realtime

CONFIG = load_robot("pioneer3dx")
#: a publisher as the fault names it: its node, or, while DDS discovery has not yet told the
#: node's name (a race on a loaded machine), "a node not yet named" (said once for both)
NAMED = r"(?:/forger|/test_localization|a node not yet named)"


def _grid(width: int, height: int, data: list[int] | None = None, **info: Any) -> Any:
    r = ros()
    msg = r.OccupancyGrid()
    msg.header.frame_id = "map"
    msg.info.width, msg.info.height = width, height
    msg.info.resolution = info.get("resolution", 0.05)
    msg.info.origin.position.x = info.get("x", 0.0)
    msg.info.origin.orientation.z = info.get("qz", 0.0)
    msg.info.origin.orientation.w = info.get("qw", 1.0)
    msg.data = data if data is not None else [0] * (width * height)
    return msg


class _Heard:
    def __init__(self) -> None:
        self.refused: list[str] = []
        self.heard = 0

    def refuse(self, why: str) -> None:
        self.refused.append(why)

    def hear(self) -> None:
        self.heard += 1


def _ros_map() -> tuple[RosMap, _Heard]:
    """A map as the robot keeps it, converting whenever asked (its clock 10 s on each time)."""
    said = _Heard()
    clock = iter(range(0, 10_000, 10))
    ros_map = RosMap(
        CONFIG.ros2, clock=lambda: float(next(clock)), on_heard=said.hear, on_refuse=said.refuse
    )
    return ros_map, said


@pytest.mark.parametrize(
    ("grid", "why"),
    [
        (lambda: _grid(100_000, 100_000, data=[]), "100000 × 100000 grid: expected 1"),
        (lambda: _grid(0, 10, data=[]), "0 × 10 grid"),
        (lambda: _grid(10, 10, data=[0] * 99), "99 cells in a 10 × 10 grid"),
        (lambda: _grid(4, 4, resolution=math.nan), "resolution nan"),
        (lambda: _grid(4, 4, resolution=0.0), "resolution 0.0"),
        (lambda: _grid(4, 4, x=math.inf), "no pose"),
        (lambda: _grid(4, 4, qw=0.0), "no pose"),
    ],
    ids=["larger than allowed", "no cells", "cells short", "NaN m", "0 m", "inf origin", "no turn"],
)
def test_a_hostile_grid_is_refused_from_its_header_before_anything_is_kept(
    grid: Any, why: str
) -> None:
    ros_map, said = _ros_map()
    ros_map.on_message(grid())
    assert said.heard == 0
    assert len(said.refused) == 1
    assert why in said.refused[0]
    assert not ros_map.pending
    assert ros_map.convert("/map") is None
    assert ros_map.latest() is None


def test_cells_outside_minus_one_to_100_are_refused_and_the_map_in_use_kept() -> None:
    ros_map, said = _ros_map()
    good = [0] * 16
    good[5] = 100
    good[6] = -1
    good[7] = 50  # a 50 % chance: neither free nor a wall
    ros_map.on_message(_grid(4, 4, data=good))
    world = ros_map.convert("/map")
    assert world is not None
    # row 1 (y 0.05…0.1), column 1: the wall; beside it unknown twice
    assert bool(world.occupancy[1, 1])
    assert world.occupancy.sum() == 1
    assert world.unknown is not None
    assert world.unknown[1, 2]
    assert world.unknown[1, 3]
    ros_map.on_message(_grid(4, 4, data=[-7] + [0] * 15))
    assert ros_map.convert("/map") is None
    assert "cell values -7…0" in said.refused[-1]
    assert ros_map.latest() is world


def test_a_turned_grid_is_laid_onto_the_world_axes() -> None:
    ros_map, _ = _ros_map()
    data = [0] * 8
    data[1] = 100  # row 0, column 1 of a 4 × 2 grid turned 90°: at y 0.05…0.1 off its x
    half = math.sqrt(0.5)
    ros_map.on_message(_grid(4, 2, data=data, qz=half, qw=half))
    world = ros_map.convert("/map")
    assert world is not None
    assert world.shape == (4, 2)  # its 4 columns run along y now
    wall = np.argwhere(world.occupancy)
    assert len(wall) == 1
    x = world.origin[0] + (wall[0][1] + 0.5) * world.resolution
    y = world.origin[1] + (wall[0][0] + 0.5) * world.resolution
    assert (x, y) == pytest.approx((-0.025, 0.075), abs=1e-9)


def _pose(**fields: Any) -> Any:
    r = ros()
    msg = r.PoseWithCovarianceStamped()
    msg.header.frame_id = fields.get("frame", "map")
    msg.header.stamp.sec = fields.get("sec", 1000)
    msg.pose.pose.position.x = fields.get("x", 1.0)
    msg.pose.pose.orientation.w = fields.get("qw", 1.0)
    covariance = [0.0] * 36
    covariance[0] = covariance[7] = fields.get("var", 0.01)
    covariance[35] = fields.get("var_theta", 0.001)
    msg.pose.covariance = covariance
    return msg


@pytest.mark.parametrize(
    ("fields", "why"),
    [
        ({"x": math.nan}, "non-finite"),
        ({"var": math.inf}, "non-finite"),
        ({"var": -1.0}, "negative variances"),
        ({"x": 1e9}, "beyond"),
        ({"qw": 0.0}, "all-zero quaternion"),
        ({"frame": "odom"}, "in frame 'odom', the map's is 'map'"),
        ({"sec": 0}, "no stamp"),
        ({"sec": 2000}, "ahead of this computer's clock"),
    ],
)
def test_a_hostile_pose_is_refused(fields: dict[str, Any], why: str) -> None:
    said = _Heard()
    pose = RosPose(
        CONFIG.ros2,
        clock=lambda: 50.0,
        ros_now=lambda: 1000.2,
        map_frame=lambda: "map",
        on_heard=said.hear,
        on_refuse=said.refuse,
    )
    pose.on_message(_pose(**fields))
    assert pose.latest() is None
    assert len(said.refused) == 1
    assert why in said.refused[0]
    pose.on_message(_pose())  # a good one: taken, at the time it held on the program's clock
    sample = pose.latest()
    assert sample is not None
    assert sample.stamp == pytest.approx(50.0 - 0.2)
    assert (sample.x, sample.std_xy, sample.std_theta) == pytest.approx((1.0, 0.1, 0.001**0.5))


def test_a_start_whose_only_map_is_refused_stops_naming_the_topic(ros_domain: int) -> None:
    config = CONFIG.model_copy(
        update={"ros2": CONFIG.ros2.model_copy(update={"map_max_cells": 1000})}
    )
    grid, origin = room_grid()  # 120 × 80 cells: beyond 1000
    with RoomBase(ros_domain) as base:
        node = MapAndPose(ros_domain, lambda: (base.x, base.y, base.theta), grid, origin).start()
        robot = Ros2Robot(config, domain_id=ros_domain, map_topic="map")
        try:
            with pytest.raises(
                Ros2Error, match=r"/map: refused 1 message\(s\), none usable: a 120"
            ):
                asyncio.run(robot.start(2.0))
        finally:
            robot.close()
            node.close()


def test_a_map_published_later_replaces_the_one_the_program_drives_by(ros_domain: int) -> None:
    grid, origin = room_grid()
    with RoomBase(ros_domain) as base:
        node = MapAndPose(ros_domain, lambda: (base.x, base.y, base.theta), grid, origin).start()
        robot = Ros2Robot(CONFIG, domain_id=ros_domain, map_topic="map")
        try:
            hardware = asyncio.run(robot.start())
            assert robot.map is not None
            first = robot.map.latest()
            assert first is not None
            assert first.shape == grid.shape
            runtime = LockstepRuntime()
            program = RobotProgram(CONFIG, hardware, runtime, robot_map=first)
            runtime.run_for(0.1)
            assert program.core.map_layer is not None
            assert program.core.map_layer.map is first
            mcl = program.core.estimator.mcl  # freelook's own localization, on the ROS map
            assert mcl is not None
            assert mcl.world is first
            # slam_toolbox grows its map: a larger grid with a wall across it
            wider, _ = room_grid(room=(-2.0, 6.0, -2.0, 2.0), wall_x=1.0)
            node.publish_map(wider, origin)
            ros_map = robot.map
            wait_until(lambda: ros_map.pending, 5.0, "the new map")
            # converted once the map period since the first has passed
            wait_until(lambda: ros_map.convert("/map") is not None, 2.0, "the new map converted")
            newer = ros_map.latest()
            assert newer is not None
            assert newer is not first
            runtime.run_for(0.04)
            assert program.robot_map is newer
            assert program.core.map_layer.map is newer
            assert newer.shape == wider.shape
            # and a filter of its own, started where the robot was
            assert program.core.estimator.mcl is not None
            assert program.core.estimator.mcl.world is newer
            assert robot.map.grids == 2
            program.close()
        finally:
            robot.close()
            node.close()


def test_a_second_pose_publisher_is_a_fault_naming_both(ros_domain: int) -> None:
    """A forged pose would move the map's walls around the robot: a second node publishing
    on the pose topic is refused as one on odometry is."""
    config = CONFIG.model_copy(
        update={"ros2": CONFIG.ros2.model_copy(update={"localization": "ros"})}
    )
    grid, origin = room_grid()
    with RoomBase(ros_domain) as base:
        node = MapAndPose(ros_domain, lambda: (base.x, base.y, base.theta), grid, origin).start()
        forger = NodeThread("forger", domain_id=ros_domain)
        r = ros()
        forger.node.create_publisher(r.PoseWithCovarianceStamped, "amcl_pose", 10)
        forger.start()
        robot = Ros2Robot(config, domain_id=ros_domain, map_topic="map")
        try:
            with pytest.raises(
                Ros2Error, match=rf"/amcl_pose has 2 publishers \({NAMED}(?:, {NAMED})?\)"
            ):
                asyncio.run(robot.start(3.0))
        finally:
            robot.close()
            forger.close()
            node.close()


def test_a_flood_of_maps_keeps_one_and_the_sensors_speak_on(ros_domain: int) -> None:
    """A node publishing a 400 × 400 grid 100 times a second: each is checked and kept in place
    of the last (never queued), conversions come at most once a map period, and the base's
    odometry and scan keep arriving in time (the ROS thread is not held)."""
    grid, origin = room_grid()
    with RoomBase(ros_domain) as base:
        node = MapAndPose(ros_domain, lambda: (base.x, base.y, base.theta), grid, origin).start()
        robot = Ros2Robot(CONFIG, domain_id=ros_domain, map_topic="map")
        try:
            asyncio.run(robot.start())
            ros_map = robot.map
            assert ros_map is not None
            big = np.zeros((400, 400), dtype=np.int8)
            big[0, :] = 100
            flood = node.occupancy(big, origin)
            converted = 0
            end = time.monotonic() + 3.0
            while time.monotonic() < end:
                node.map_pub.publish(flood)
                assert robot.connected, robot.status
                if ros_map.pending and ros_map.convert("/map") is not None:
                    converted += 1
                time.sleep(0.01)
            assert ros_map.grids > 100
            assert 1 <= converted <= 3  # once a second at most
            latest = ros_map.latest()
            assert latest is not None
            assert latest.shape == (400, 400)
        finally:
            robot.close()
            node.close()
