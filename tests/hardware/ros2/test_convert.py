"""ROS readings as HAL readings: quaternions, scans as ROS means them, the description's check."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from freelook.config import LaserConfig
from freelook.errors import ConfigError
from freelook.hardware.ros2 import (
    ScanLayout,
    check_scan_layout,
    parse_ros2_url,
    scan_ranges,
    twist_of_wheels,
    wheels_of_twist,
    yaw_of_quaternion,
)

angles = st.floats(-math.pi + 1e-6, math.pi - 1e-6)
small = st.floats(-0.5, 0.5)


@given(angles, small, small, st.floats(0.1, 10.0))
def test_the_yaw_of_a_quaternion_is_its_heading_whatever_its_roll_pitch_and_scale(
    yaw: float, roll: float, pitch: float, scale: float
) -> None:
    cr, sr = math.cos(roll / 2), math.sin(roll / 2)
    cp, sp = math.cos(pitch / 2), math.sin(pitch / 2)
    cy, sy = math.cos(yaw / 2), math.sin(yaw / 2)
    w = cr * cp * cy + sr * sp * sy
    x = sr * cp * cy - cr * sp * sy
    y = cr * sp * cy + sr * cp * sy
    z = cr * cp * sy - sr * sp * cy
    got = yaw_of_quaternion(x * scale, y * scale, z * scale, w * scale)
    assert math.remainder(got - yaw, math.tau) == pytest.approx(0.0, abs=1e-9)


@given(st.floats(-2, 2), st.floats(-3, 3), st.floats(0.1, 1.5))
def test_wheels_and_twist_round_trip(v: float, omega: float, d: float) -> None:
    left, right = wheels_of_twist(v, omega, d)
    back = twist_of_wheels(left, right, d)
    assert back == pytest.approx((v, omega), abs=1e-12)


def test_a_scan_keeps_what_ros_means_by_inf_nan_and_out_of_range() -> None:
    ranges = [1.0, math.inf, -math.inf, math.nan, 0.01, 40.0, 25.0, 7.5]
    read = scan_ranges(ranges, 0.02, 30.0, no_hit=20.0)
    # +inf, NaN, below range_min, beyond range_max and beyond the description: nothing there
    assert read.ranges.tolist() == [1.0, 20.0, 0.02, 20.0, 20.0, 20.0, 20.0, 7.5]
    assert read.invalid == 3  # NaN, 0.01 and 40.0 were not measurements
    assert read.too_close == 1


@given(st.lists(st.floats(allow_nan=True, allow_infinity=True, width=32), max_size=50))
def test_every_scan_range_lands_within_what_the_robot_can_use(values: list[float]) -> None:
    read = scan_ranges(values, 0.05, 12.0, no_hit=10.0)
    assert np.all(np.isfinite(read.ranges))
    assert np.all((read.ranges >= 0.05) & (read.ranges <= 10.0))


def test_a_scan_unlike_the_description_is_named() -> None:
    laser = LaserConfig(beams=181, fov_deg=180.0)
    half = math.pi / 2
    good = ScanLayout("laser", -half, math.pi / 180, 181)
    assert check_scan_layout(good, laser, "laser") is None
    assert check_scan_layout(good, laser, "") is None
    wrong_frame = check_scan_layout(good._replace(frame_id="base_scan"), laser, "laser")
    assert wrong_frame is not None
    assert "'base_scan'" in wrong_frame
    fewer = check_scan_layout(good._replace(beams=360), laser, "")
    assert fewer is not None
    assert "360 beams" in fewer
    assert "[laser] pins beams = 181" in fewer
    # where a fan starts is the scan's own (its angles are used as they come); its span is not
    turned = check_scan_layout(good._replace(angle_min=-half + 0.1), laser, "")
    assert turned is None
    wider = check_scan_layout(good._replace(angle_increment=math.pi / 179), laser, "")
    assert wider is not None
    assert "pins fov_deg = 180" in wider


def test_the_hardware_url_gives_the_namespace() -> None:
    assert parse_ros2_url("ros2") == ""
    assert parse_ros2_url("ros2://") == ""
    assert parse_ros2_url("ros2://husky") == "husky"
    assert parse_ros2_url("ros2:///fleet/r1/") == "fleet/r1"
    for bad in ("ros2://1robot", "ros2://a b", "ros3://x"):
        with pytest.raises(ConfigError, match="ros2"):
            parse_ros2_url(bad)
