"""A ROS 2 robot behind the HAL, against the tests' own base node over real DDS (loopback)."""

from __future__ import annotations

import asyncio
import math
import sys
import time
from typing import Any

import pytest
import simplejpeg
from ros2_base import RoomBase

from freelook.config import load_robot
from freelook.hal import Camera, DriveCommand, EncodedCamera
from freelook.hardware.ros2 import Ros2Error, Ros2Robot, ros
from waiting import wait_until

pytestmark = pytest.mark.realtime


def start(robot: Ros2Robot, timeout: float | None = None) -> None:
    asyncio.run(robot.start(timeout))


def started_camera(robot: Ros2Robot) -> Camera:
    """``robot`` started, and its camera (a base that publishes one)."""
    start(robot)
    assert robot.hardware is not None
    camera = robot.hardware.camera
    assert camera is not None
    return camera


def test_the_base_topics_become_hal_devices_and_commands_reach_the_base(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain) as base:
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            start(robot)
            hw = robot.hardware
            assert hw is not None
            assert hw.laser is not None
            assert hw.gyro is not None
            assert hw.odometer is not None
            assert hw.pan_tilt is not None
            assert hw.camera is not None
            assert robot.connected, robot.status
            # the scan, in the description's layout, as the base's room puts it
            scan = hw.laser.latest()
            assert scan is not None
            ahead = scan.ranges[90]  # straight ahead: the wall at x = 4, from the laser at 0.17
            assert ahead == pytest.approx(4.0 - 0.17, abs=1e-4)
            assert scan.bearings[0] == pytest.approx(-math.pi / 2)
            # a command is published as its twist, and the base moves
            d = config.drive.d_eff
            hw.drive.command(DriveCommand.of_wheels(0.25, 0.35, d))
            wait_until(lambda: bool(base.received), 2.0, "the base to hear cmd_vel")
            got = base.received[-1]
            assert (got.v, got.omega) == pytest.approx((0.3, 0.1 / d))
            wait_until(
                lambda: (o := hw.odometer.latest()) is not None and o.x > 0.02,  # type: ignore[union-attr]
                2.0,
                "odometry to follow the base",
            )
            odom = hw.odometer.latest()
            assert odom is not None
            assert odom.x == pytest.approx(base.x, abs=0.05)
            assert (odom.v_left + odom.v_right) / 2 == pytest.approx(0.3, abs=1e-9)
            gyro = hw.gyro.latest()
            assert gyro is not None
            assert gyro.rate == pytest.approx(0.1 / d, abs=1e-9)
            # the pan joint: commanded as a rate, read back from joint_states
            hw.pan_tilt.command_rates(0.5, 0.0)
            wait_until(lambda: hw.pan_tilt.state().pan > 0.05, 2.0, "the pan joint to turn")  # type: ignore[union-attr]
            # the camera's JPEG goes on as it came, each frame once
            assert isinstance(hw.camera, EncodedCamera)
            wait_until(lambda: robot._frame is not None, 2.0, "a camera frame")
            frame = robot._frame
            assert frame is not None
            taken = hw.camera.capture_jpeg(80)
            assert taken is not None
            assert taken[1:] == (64, 48)
            assert simplejpeg.decode_jpeg(taken[0]).shape == (48, 64, 3)
            assert hw.camera.capture_jpeg(80) is None or robot._frame is not frame
        finally:
            robot.close()
        # closing commands zero velocity
        wait_until(lambda: base.received[-1].v == 0.0, 2.0, "the stop on closing")
        assert base.received[-1].omega == 0.0


def test_non_finite_odometry_and_rates_are_refused_and_counted_never_used(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, nan_odom_every=2) as base:
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            start(robot)
            assert robot.hardware is not None
            assert robot.hardware.odometer is not None
            base.v = 0.2
            seen = []
            sampled = time.monotonic() + 1.0  # a second of the odometer, sampled every 5 ms
            while time.monotonic() < sampled:
                sample = robot.hardware.odometer.latest()
                assert sample is not None
                seen.append(sample.x)
                time.sleep(0.005)
            assert all(math.isfinite(x) for x in seen)
            assert robot.refused["odom"] >= 10  # half of 50 Hz for a second, and more
            assert robot.refused["imu"] >= 10
            gyro = robot.hardware.gyro
            assert gyro is not None
            sample = gyro.latest()
            assert sample is not None
            assert math.isfinite(sample.rate)
            assert sample.angle is not None
            assert math.isfinite(sample.angle)
            assert max(seen) > 0.05  # the good half was used
        finally:
            robot.close()


def test_no_odometry_names_the_topic_and_lists_what_is_there(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, publish_odom=False):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            with pytest.raises(Ros2Error) as caught:
                start(robot, timeout=1.5)
        finally:
            robot.close()
    message = str(caught.value)
    assert "no message on /odom (nav_msgs/msg/Odometry) within 1.5 s" in message
    assert "/scan (sensor_msgs/msg/LaserScan)" in message
    assert "/joint_states (sensor_msgs/msg/JointState)" in message


def test_a_topic_of_another_type_is_named_with_both_types(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, odom_type="Imu"):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            with pytest.raises(
                Ros2Error,
                match=r"/odom carries sensor_msgs/msg/Imu, expected nav_msgs/msg/Odometry",
            ):
                start(robot, timeout=3.0)
        finally:
            robot.close()


def test_a_scan_unlike_the_description_is_refused_at_start(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, beams=360, fov_deg=360.0 - 1.0):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            with pytest.raises(
                Ros2Error,
                match=r"/scan: refused \d+ message\(s\), none usable: 360 beams .* beams = 181",
            ):
                start(robot, timeout=3.0)
        finally:
            robot.close()
    with RoomBase(ros_domain + 1 if ros_domain < 100 else 1, scan_frame="base_scan") as base:
        frame = config.model_copy(
            update={"ros2": config.ros2.model_copy(update={"scan_frame": "laser"})}
        )
        robot = Ros2Robot(frame, domain_id=base.domain_id)
        try:
            with pytest.raises(
                Ros2Error, match=r"frame_id 'base_scan', but the description says 'laser'"
            ):
                start(robot, timeout=3.0)
        finally:
            robot.close()


def test_a_scan_that_goes_quiet_mid_run_is_a_hardware_fault_naming_it(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain) as base:
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            start(robot)
            assert robot.connected
            base.stop_publishing("scan")
            quiet = time.monotonic()
            wait_until(lambda: not robot.connected, 2.0, "the quiet scan to be noticed")
            assert time.monotonic() - quiet < config.ros2.quiet_timeout + 0.3
            assert "hardware fault: /scan quiet for" in robot.status
            base.publish_scan = True
            wait_until(lambda: robot.connected, 2.0, "the scan to be heard again")
        finally:
            robot.close()


def test_without_rclpy_the_error_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "rclpy", None)  # import rclpy now fails as if absent
    ros.cache_clear()
    try:
        with pytest.raises(Ros2Error, match=r"pip install -e '\.\[ros2\]'.*source /opt/ros"):
            Ros2Robot(load_robot("pioneer3dx"))
    finally:
        monkeypatch.undo()
        ros.cache_clear()
    assert ros().rclpy is not None


def test_a_raw_image_camera_is_encoded_and_the_battery_is_told(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    topics = config.ros2.topics.model_copy(update={"camera": "camera/image_raw"})
    config = config.model_copy(update={"ros2": config.ros2.model_copy(update={"topics": topics})})
    with RoomBase(ros_domain, camera_raw=True, battery=0.87) as base:
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            camera = started_camera(robot)
            image = camera.capture()
            assert image is not None
            # bgr8 on the wire, RGB in the HAL: the colours are where they were
            assert image[0, 0].tolist() == base.image()[0, 0].tolist()
            assert isinstance(camera, EncodedCamera)
            taken = camera.capture_jpeg(90)
            assert taken is not None
            decoded = simplejpeg.decode_jpeg(taken[0])
            assert abs(int(decoded[20, 30, 2]) - int(base.image()[20, 30, 2])) < 8
            wait_until(lambda: robot.battery is not None, 2.0, "the battery state")
            assert "battery 87%" in robot.status
        finally:
            robot.close()


def test_a_jpeg_that_does_not_decode_is_refused_and_counted_never_raised(ros_domain: int) -> None:
    # its header reads (so it is taken on arrival, to pass through as it came), its scan is
    # cut short: decoding it for the video encoder or the autonomy is where it fails
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, truncated_jpeg=True):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            camera = started_camera(robot)
            # None before the first frame too: the refusal counted tells them apart
            wait_until(
                lambda: camera.capture() is None and robot.refused["camera"] >= 1,
                2.0,
                "a frame that does not decode refused",
            )
            assert "does not decode" in robot.problems["camera"]
        finally:
            robot.close()


def test_a_jpeg_claiming_a_huge_frame_is_refused_on_arrival_before_any_decoding(
    ros_domain: int,
) -> None:
    # a 64 × 48 JPEG whose header says 20000 × 20000: decoding it would take 1.2 GB
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, claimed_size=(20000, 20000)):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            wait_until(lambda: robot.refused["camera"] >= 3, 5.0, "forged frames refused")
            assert "20000×20000" in robot.problems["camera"]
            assert "1280×960" in robot.problems["camera"]  # twice the described 640 × 480
            assert robot.take_frame() is None  # nothing kept to decode later
        finally:
            robot.close()


# -- a hostile ROS graph -----------------------------------------------------------------------


@pytest.mark.parametrize(("value", "label"), [(math.inf, "inf"), (math.nan, "NaN")])
def test_a_scan_with_nothing_measured_is_blind_not_clear(
    ros_domain: int, value: float, label: str
) -> None:
    # all-inf is "nothing in range" to ROS: read as is, a wall ahead would vanish
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, scan_value=value):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            with pytest.raises(Ros2Error, match=r"/scan: refused .*blind: no measured range"):
                start(robot, timeout=3.0)
            assert robot._scan is None, label
        finally:
            robot.close()


@pytest.mark.parametrize(("offset", "why"), [(-2.0, "s ago"), (2.0, "ahead of this computer")])
def test_readings_stamped_long_ago_or_in_the_future_are_refused(
    ros_domain: int, offset: float, why: str
) -> None:
    # a dead base whose old odometry is replayed, or a base whose clock runs ahead
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain, stamp_offset=offset):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            with pytest.raises(Ros2Error, match=why):
                start(robot, timeout=3.0)
            assert robot.refused["odom"] >= 1
            assert robot._odom is None
        finally:
            robot.close()


def _publisher(ros_domain: int, kind: str, topic: str) -> Any:
    """Another node publishing on ``topic`` (a hostile or stray node on the graph)."""
    from freelook.hardware.ros2 import NodeThread

    r = ros()
    thread = NodeThread("intruder", "", domain_id=ros_domain)
    thread.node.create_publisher(getattr(r, kind), topic, 10)
    thread.start()
    return thread


@pytest.mark.parametrize(("kind", "topic"), [("LaserScan", "scan"), ("Twist", "cmd_vel")])
def test_a_second_publisher_on_the_robots_topics_is_a_fault_while_running(
    ros_domain: int, kind: str, topic: str
) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain):
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            start(robot)
            assert robot.connected
            intruder = _publisher(ros_domain, kind, topic)
            try:
                wait_until(lambda: not robot.connected, 5.0, "the second publisher found")
                assert f"/{topic} has 2 publishers" in robot.status
                assert "/intruder" in robot.status
                assert robot.status.startswith("hardware fault")
            finally:
                intruder.close()
            # held: the intruder gone, the fault stays for the run
            wait_until(
                lambda: not robot.node.get_publishers_info_by_topic(f"/{topic}")[1:],
                5.0,
                "the intruder gone from the graph",
            )
            robot.check_graph()
            assert not robot.connected
        finally:
            robot.close()


def test_a_second_publisher_at_start_is_refused_naming_it(ros_domain: int) -> None:
    config = load_robot("pioneer3dx")
    with RoomBase(ros_domain):
        intruder = _publisher(ros_domain, "Odometry", "odom")
        robot = Ros2Robot(config, domain_id=ros_domain)
        try:
            wait_until(
                lambda: len(robot.node.get_publishers_info_by_topic("/odom")) == 2,
                5.0,
                "the intruder on the graph",
            )
            named = r"/odom has 2 publishers \(.*(/intruder|not yet named)"
            with pytest.raises(Ros2Error, match=named):
                start(robot)
        finally:
            robot.close()
            intruder.close()
