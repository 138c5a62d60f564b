"""A description from what a ROS 2 robot's topics showed (sans-I/O): which topics are taken,
what is written as seen and what as assumed, and hostile observations bounded and said, never
a crash and never a file that does not load."""

from __future__ import annotations

import math
import tomllib

import numpy as np
import pytest
import simplejpeg
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import load_robot, robot_from_mapping
from freelook.hardware.ros2 import (
    Ros2Error,
    ScanSeen,
    TopicChoice,
    TopicGraph,
    Watch,
    blind_sector,
    check_scan_layout,
    choose_topics,
    describe,
    picture_size,
)

ODOM = "nav_msgs/msg/Odometry"
SCAN = "sensor_msgs/msg/LaserScan"
IMU = "sensor_msgs/msg/Imu"
JPEG = "sensor_msgs/msg/CompressedImage"
IMAGE = "sensor_msgs/msg/Image"
JOINTS = "sensor_msgs/msg/JointState"
TWIST = "geometry_msgs/msg/Twist"
STAMPED = "geometry_msgs/msg/TwistStamped"
FLOATS = "std_msgs/msg/Float64MultiArray"
TRAJECTORY = "trajectory_msgs/msg/JointTrajectory"


def husky_graph(ns: str = "a200_0001") -> TopicGraph:
    """A Husky-like robot under a namespace, with a second robot's topics beside it."""
    p = f"/{ns}"
    return TopicGraph(
        published={
            f"{p}/platform/odom": (ODOM,),
            f"{p}/odometry/filtered": (ODOM,),
            f"{p}/sensors/lidar2d_0/scan": (SCAN,),
            f"{p}/sensors/imu_0/data": (IMU,),
            f"{p}/camera/image_raw": (IMAGE,),
            f"{p}/camera/image_raw/compressed": (JPEG,),
            f"{p}/platform/joint_states": (JOINTS,),
            "/other/odom": (ODOM,),
            "/rosout": ("rcl_interfaces/msg/Log",),
        },
        subscribed={f"{p}/cmd_vel": (STAMPED,), "/other/cmd_vel": (TWIST,)},
    )


def test_the_usual_names_are_taken_under_the_namespace_with_cmd_vel_as_its_subscriber_takes_it():
    choice = choose_topics(husky_graph(), "a200_0001")
    assert choice.odom == "/a200_0001/platform/odom"  # the wheels' own before a fused one
    assert choice.scans == ("/a200_0001/sensors/lidar2d_0/scan",)
    assert choice.imu == "/a200_0001/sensors/imu_0/data"
    assert choice.camera == "/a200_0001/camera/image_raw/compressed"  # compressed first
    assert choice.camera_compressed
    assert choice.cmd_vel == "/a200_0001/cmd_vel"
    assert choice.cmd_vel_stamped
    assert any("also published" in n and "odometry/filtered" in n for n in choice.notes)
    # no namespace asked: the robot whose odometry is nearest the usual name, all in its own
    # namespace (never one robot's odometry with another's cmd_vel)
    other = choose_topics(husky_graph(), "")
    assert other.namespace == "other"
    assert (other.odom, other.cmd_vel, other.scans) == ("/other/odom", "/other/cmd_vel", ())
    assert not other.cmd_vel_stamped
    assert "odometry in namespace /other" in other.notes[0]


def test_a_cmd_vel_taken_both_ways_is_plain_and_said_and_the_pan_tilt_command_type_is_kept():
    graph = TopicGraph(
        {"/odom": (ODOM,)},
        {"/cmd_vel": (STAMPED, TWIST), "/pan_tilt_controller/joint_trajectory": (TRAJECTORY,)},
    )
    choice = choose_topics(graph)
    assert not choice.cmd_vel_stamped
    assert any("Twist and TwistStamped" in n for n in choice.notes)
    assert choice.pan_tilt_command == "/pan_tilt_controller/joint_trajectory"
    assert choice.pan_tilt_trajectory


def test_a_camera_whose_name_belies_its_type_is_left_out():
    graph = TopicGraph({"/odom": (ODOM,), "/camera/compressed": (IMAGE,)}, {})
    choice = choose_topics(graph)
    assert choice.camera is None
    assert any("which its name does not say" in n for n in choice.notes)


def watched(
    scan: ScanSeen,
    *,
    rate: float = 20.0,
    seconds: float = 3.0,
    camera: tuple[int, int] | None = (1280, 720),
    joints: tuple[str, ...] = ("pan_joint", "tilt_joint"),
    lag: float = 0.01,
) -> Watch:
    """A watch of ``seconds`` with odometry at 50 Hz, scans at ``rate``, IMU at 100 Hz and a
    camera at 15 Hz."""
    watch = Watch()
    for i in range(int(seconds * 50)):
        watch.odom("/odom", i / 50, lag, "base_link", 0.2, 0.1)
        watch.joint_state("/joint_states", i / 50, lag, list(joints))
    for i in range(int(seconds * rate)):
        watch.scan("/scan", i / rate, lag, scan)
    for i in range(int(seconds * 100)):
        watch.imu("/imu/data", i / 100, lag, True)
    for i in range(int(seconds * 15)):
        watch.image("/camera/image_raw/compressed", i / 15, lag, camera)
    return watch


def plain_choice(**changes: object) -> TopicChoice:
    choice = TopicChoice(
        odom="/odom",
        scans=("/scan",),
        imu="/imu/data",
        camera="/camera/image_raw/compressed",
        camera_compressed=True,
        joint_states="/joint_states",
        battery=None,
        cmd_vel="/cmd_vel",
        cmd_vel_stamped=True,
        pan_tilt_command="/pan_tilt_controller/commands",
        pan_tilt_trajectory=False,
    )
    import dataclasses

    return dataclasses.replace(choice, **changes)  # type: ignore[arg-type]


LIDAR_360 = ScanSeen("lidar_link", -math.pi, math.radians(1.0), 360, 0.15, 12.0)


def test_a_360_degree_lidar_from_minus_pi_is_written_as_seen_and_pinned_so_the_program_takes_it():
    d = describe(plain_choice(), watched(LIDAR_360), name="husky", seconds=3.0)
    laser = d.config.laser
    assert laser is not None
    assert (laser.beams, laser.fov_deg, laser.pinned) == (360, 359.0, ("beams", "fov_deg"))
    assert (laser.range_min, laser.range_max) == (0.15, 12.0)
    assert laser.rate_hz == pytest.approx(20.0, abs=0.5)
    # the program's own check takes the scan it was written from
    assert check_scan_layout(LIDAR_360.layout, laser, d.config.ros2.scan_frame) is None
    assert d.config.ros2.scan_frame == "lidar_link"
    assert d.config.ros2.cmd_vel_stamped
    assert (d.config.camera.width, d.config.camera.height) == (1280, 720)
    assert d.config.camera.rate_hz == pytest.approx(15.0, abs=0.5)
    assert d.config.gyro is not None
    assert d.config.gyro.rate_hz == pytest.approx(100.0, abs=1)
    pt = d.config.pan_tilt
    assert pt is not None
    assert pt.has_pan
    assert pt.has_tilt
    assert d.config.name == "husky"
    # what it could not know is said, in the file and in the lines the commands print
    assert "footprint" in " ".join(d.assumed)
    assert "safety zones" in " ".join(d.assumed)
    assert "# assumed: a 0.51 × 0.43 m base" in d.text
    assert any("360 beams from -180° every 1°" in line for line in d.found)


def test_a_reversed_fan_is_taken_with_its_negative_increment_and_the_topics_relative():
    fan = ScanSeen("laser", math.radians(135), -math.radians(0.5), 541, 0.05, 25.0)
    choice = choose_topics(husky_graph(), "a200_0001")
    watch = watched(fan)
    for name in ("/scan", "/odom", "/imu/data", "/camera/image_raw/compressed"):
        watch.topics[name.replace("/", "/a200_0001/", 1)] = watch.topics.pop(name)
    watch.scans["/a200_0001/sensors/lidar2d_0/scan"] = watch.scans.pop("/scan")
    watch.topics["/a200_0001/platform/odom"] = watch.topics.pop("/a200_0001/odom")
    watch.topics["/a200_0001/sensors/imu_0/data"] = watch.topics.pop("/a200_0001/imu/data")
    watch.images = {"/a200_0001/camera/image_raw/compressed": (640, 480)}
    d = describe(choice, watch, namespace="a200_0001")
    topics = d.config.ros2.topics
    assert topics.odom == "platform/odom"
    assert topics.scan == "sensors/lidar2d_0/scan"
    assert topics.cmd_vel == "cmd_vel"
    assert d.config.ros2.cmd_vel_stamped
    laser = d.config.laser
    assert laser is not None
    assert (laser.beams, laser.fov_deg) == (541, 270.0)
    assert check_scan_layout(fan.layout, laser, "laser") is None
    assert "(clockwise (a negative increment))" in d.text or "clockwise (a negative" in d.text


def test_no_odometry_is_an_error_naming_the_topics_there():
    with pytest.raises(Ros2Error, match=r"no nav_msgs/Odometry published in namespace /r1.*"):
        describe(plain_choice(odom=None), Watch(), namespace="r1", published=("/scan",))


def test_no_command_subscriber_and_no_joints_are_assumed_and_said():
    d = describe(
        plain_choice(cmd_vel=None, pan_tilt_command=None, camera=None, joint_states=None),
        watched(LIDAR_360, camera=None, joints=()),
    )
    assert d.config.ros2.topics.cmd_vel == "cmd_vel"
    assert not d.config.ros2.cmd_vel_stamped
    assert any("no node subscribes" in line for line in d.assumed)
    assert d.config.pan_tilt is None


def test_hostile_observations_are_bounded_and_said_not_used():
    absurd = ScanSeen('la"ser\n[drive]\nkind = "holonomic"', -1.0, 1e-5, 20000, math.nan, math.inf)
    watch = Watch()
    for i in range(400):
        watch.odom("/odom", i * 1e-7, 30.0, "base\nlink", 0.1, 0.0)  # 10 MHz, 30 s stale
        watch.scan("/scan", i * 1e-3, 0.0, absurd)  # 1000 Hz
        watch.image("/camera/image_raw/compressed", i, 0.0, (100_000, 5))
        watch.joint_state("/joint_states", i, 0.0, ['pan"\n= 1', "x" * 10_000] * 100)
    for i in range(3000):
        watch.imu("/imu/data", i * 1e-4, None, True)  # 10 kHz, unstamped
    watch.odom("/odom", 1.0, 0.0, "base_link", math.nan, 0.0)  # refused, counted
    watch.odom("/odom", 1.0, 0.0, "base_link", 1e300, 0.0)
    d = describe(plain_choice(), watch)
    laser = d.config.laser
    assert laser is not None
    assert laser.beams == 8192
    assert laser.pinned == ()
    assert (laser.range_min, laser.range_max) == (0.05, 30.0)
    assert laser.rate_hz == 200.0
    assert d.config.gyro is not None
    assert d.config.gyro.rate_hz == 2000.0
    assert (d.config.camera.width, d.config.camera.height) == (640, 480)
    assert d.config.drive.kind == "differential"  # no frame_id wrote a section
    assert d.config.ros2.scan_frame == ""
    assert d.config.ros2.base_frame == "base_link"
    pt = d.config.pan_tilt
    assert pt is not None
    assert not pt.has_pan
    said = " ".join(d.assumed)
    for words in (
        "beyond the 8192",
        "are no range",
        "beyond the 200 Hz",
        "beyond 4096 a side",
        "stamped up to 30.00 s behind",
        "with no stamp",
    ):
        assert words in said, words
    assert all(len(line) < 200 for line in d.text.splitlines())
    assert watch.topics["/odom"].refused == 2


finite = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=200, deadline=None)
@given(
    angle_min=finite,
    increment=finite,
    beams=st.integers(0, 100_000),
    low=finite,
    high=finite,
    frame=st.text(max_size=40),
    times=st.lists(finite, max_size=20),
    size=st.tuples(st.integers(-10, 10**6), st.integers(-10, 10**6)),
    joints=st.lists(st.text(max_size=20), max_size=80),
    twist=st.tuples(finite, finite),
)
def test_any_observation_gives_a_description_that_loads(
    angle_min: float,
    increment: float,
    beams: int,
    low: float,
    high: float,
    frame: str,
    times: list[float],
    size: tuple[int, int],
    joints: list[str],
    twist: tuple[float, float],
) -> None:
    watch = Watch()
    scan = ScanSeen(frame, angle_min, increment, beams, low, high)
    for t in times:
        watch.odom("/odom", t, t, frame, *twist)
        watch.scan("/scan", t, -t, scan)
        watch.imu("/imu/data", t, None, True)
        watch.image("/camera/image_raw/compressed", t, 0.0, size)
        watch.joint_state("/joint_states", t, 0.0, joints)
    d = describe(plain_choice(), watch, name=frame or "x", seconds=3.0)
    assert tomllib.loads(d.text)["name"] == d.config.name


def test_a_picture_size_is_read_from_its_jpeg_or_png_header_and_garbage_has_none():
    jpeg = simplejpeg.encode_jpeg(np.zeros((48, 64, 3), np.uint8), colorspace="RGB")
    assert picture_size(jpeg, "jpeg") == (64, 48)
    png = b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + (800).to_bytes(4, "big")
    png += (600).to_bytes(4, "big") + b"\x08\x02\x00\x00\x00"
    assert picture_size(png, "png") == (800, 600)
    assert picture_size(b"\xff\xd8 not a jpeg", "jpeg") is None
    assert picture_size(b"", "png") is None


def test_a_scan_blind_where_the_program_would_refuse_it_is_said_with_where():
    ranges = np.full(360, 3.0)
    ranges[135:225] = np.inf  # the rear 90°, behind the robot's own mast
    assert blind_sector(ranges, LIDAR_360) == pytest.approx(math.radians(-45.0))
    assert blind_sector(np.full(360, 3.0), LIDAR_360) is None
    assert blind_sector(np.full(360, 0.1), LIDAR_360) == -math.pi  # all under range_min
    assert blind_sector([], LIDAR_360) is None
    watch = watched(LIDAR_360)
    for i in range(10):
        watch.scan("/scan", 10 + i, 0.0, LIDAR_360, blind_sector(ranges, LIDAR_360))
    d = describe(plain_choice(), watch)
    note = next(line for line in d.assumed if "no measured range" in line)
    assert "10 of 70 scans had no measured range over 45° from -45°" in note
    assert d.config.ros2.blind_sector_deg == 45.0  # said, not turned off


def test_four_wheel_joints_make_a_skid_steer_base_and_two_a_differential_one():
    husky = ("front_left_wheel_joint", "front_right_wheel_joint")
    husky += ("rear_left_wheel_joint", "rear_right_wheel_joint")
    d = describe(plain_choice(), watched(LIDAR_360, joints=husky))
    assert d.config.drive.kind == "skid_steer"
    assert "assumed from its 4 wheel joints" in d.text
    assert d.config.pan_tilt is not None
    assert not d.config.pan_tilt.has_pan  # wheels are no pan joint
    turtlebot = describe(plain_choice(), watched(LIDAR_360, joints=("left_wheel_joint",)))
    assert turtlebot.config.drive.kind == "differential"


def test_the_camera_info_beside_the_camera_gives_its_field_of_view_within_bounds():
    graph = TopicGraph(
        {
            "/odom": (ODOM,),
            "/front/image_raw/compressed": (JPEG,),
            "/front/camera_info": ("sensor_msgs/msg/CameraInfo",),
            "/rear/camera_info": ("sensor_msgs/msg/CameraInfo",),
        },
        {},
    )
    choice = choose_topics(graph)
    assert choice.camera_info == "/front/camera_info"
    watch = watched(LIDAR_360, camera=(640, 480))
    watch.camera_info("/front/camera_info", 0.0, 0.0, 640, 320.0)  # 2·atan(1): 90°
    d = describe(plain_choice(camera_info="/front/camera_info"), watch)
    assert d.config.camera.fov_deg == 90.0
    assert "# assumed" not in next(line for line in d.text.splitlines() if "fov_deg = 90" in line)
    for width, fx in ((640, 0.0), (640, math.nan), (0, 300.0), (640, 1e-9)):
        hostile = watched(LIDAR_360)
        hostile.camera_info("/front/camera_info", 0.0, 0.0, width, fx)
        seen = describe(plain_choice(camera_info="/front/camera_info"), hostile)
        assert seen.config.camera.fov_deg == 60.0  # assumed, and said
        assert "a camera field of view of 60°" in " ".join(seen.assumed)


def test_a_jazzy_husky_graph_gives_the_topics_of_the_shipped_husky_description():
    """The topics of Clearpath's ROS 2 API (a200_0001 on Jazzy), as the shipped ``husky``
    names them: the wheels' odometry, not the fused one; the twist_mux's input, stamped."""
    p = "/a200_0001"
    graph = TopicGraph(
        {
            f"{p}/platform/odom": (ODOM,),
            f"{p}/platform/odom/filtered": (ODOM,),
            f"{p}/sensors/lidar2d_0/scan": (SCAN,),
            f"{p}/sensors/imu_0/data": (IMU,),
            f"{p}/platform/joint_states": (JOINTS,),
            f"{p}/platform/bms/state": ("sensor_msgs/msg/BatteryState",),
        },
        {f"{p}/cmd_vel": (STAMPED,), f"{p}/platform/cmd_vel": (STAMPED,)},
    )
    choice = choose_topics(graph)  # no namespace asked: the odometry's
    assert choice.namespace == "a200_0001"
    wheels = ("front_left_wheel_joint", "front_right_wheel_joint")
    wheels += ("rear_left_wheel_joint", "rear_right_wheel_joint")
    watch = Watch()
    for i in range(60):
        watch.odom(choice.odom or "", i / 20, 0.01, "base_link", 0.0, 0.0)
        watch.scan(choice.scans[0], i / 20, 0.01, LIDAR_360)
        watch.imu(choice.imu or "", i / 20, 0.01, True)
        watch.joint_state(choice.joint_states or "", i / 20, 0.01, wheels)
    d = describe(choice, watch)
    shipped = load_robot("husky")
    for key in ("cmd_vel", "odom", "scan", "imu", "battery"):
        assert getattr(d.config.ros2.topics, key) == getattr(shipped.ros2.topics, key), key
    assert d.config.ros2.cmd_vel_stamped == shipped.ros2.cmd_vel_stamped
    assert d.config.drive.kind == shipped.drive.kind == "skid_steer"


def test_the_robots_own_map_and_localization_are_offered_commented_and_load_uncommented():
    graph = TopicGraph(
        {
            "/odom": (ODOM,),
            "/map": ("nav_msgs/msg/OccupancyGrid",),
            "/amcl_pose": ("geometry_msgs/msg/PoseWithCovarianceStamped",),
        },
        {"/cmd_vel": (TWIST,)},
    )
    choice = choose_topics(graph)
    assert (choice.map, choice.pose) == ("/map", "/amcl_pose")
    d = describe(choice, watched(LIDAR_360))
    assert d.config.ros2.localization == "freelook"  # offered, not taken
    assert d.config.ros2.topics.map == ""
    assert any("a map on /map" in line for line in d.found)
    taken = d.text.replace('# map = "map"', 'map = "map"')
    taken = taken.replace('# localization = "ros"', 'localization = "ros"')
    assert taken != d.text
    config = robot_from_mapping(tomllib.loads(taken))
    assert config.ros2.topics.map == "map"
    assert config.ros2.localization == "ros"
    assert config.ros2.topics.pose == "amcl_pose"


def test_a_second_laser_is_offered_as_a_commented_extra_that_loads_uncommented():
    rear = ScanSeen("rear_laser", -math.pi / 2, math.radians(0.5), 361, 0.05, 20.0)
    watch = watched(LIDAR_360)
    for i in range(30):
        watch.scan("/r1/rear/scan", i / 10, 0.0, rear)
    d = describe(plain_choice(scans=("/scan", "/r1/rear/scan"), namespace="r1"), watch)
    laser = d.config.laser
    assert laser is not None
    assert laser.extra == ()  # its mount is unknown: offered, not merged
    assert any("a [[laser.extra]] with its mount merges it" in line for line in d.assumed)
    taken = "\n".join(
        line[2:]
        if line.startswith(("# [[laser.extra]]", "# topic", "# mount_forward", "# yaw"))
        else line
        for line in d.text.splitlines()
    )
    extra = robot_from_mapping(tomllib.loads(taken)).laser
    assert extra is not None
    assert [e.topic for e in extra.extra] == ["rear/scan"]
