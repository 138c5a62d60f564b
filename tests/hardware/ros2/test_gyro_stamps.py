"""A ROS 2 robot's gyro turns over its readings' stamps, not over when they reached the
program: readings held up and delivered together (a loaded robot computer) add the turn they
measured, and a reading stamped no later than the newest adds none."""

from __future__ import annotations

import math
from typing import Any

import pytest

from dds_domains import next_domain
from freelook.config import load_robot
from freelook.hardware.ros2 import Ros2Robot, ros


class Arrivals:
    """The program's clock, set by the test: when each reading reaches it."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def _imu(robot: Ros2Robot, stamp: float, rate: float) -> Any:
    msg = ros().Imu()
    msg.header.stamp.sec = int(stamp)
    msg.header.stamp.nanosec = min(999_999_999, round((stamp - int(stamp)) * 1e9))
    msg.angular_velocity.z = rate
    return msg


@pytest.fixture
def robot() -> Any:
    arrivals = Arrivals()
    made = Ros2Robot(
        load_robot("ros2-diff-base"),
        domain_id=next_domain(),
        camera=False,
        clock=arrivals,
    )
    try:
        yield made, arrivals
    finally:
        made.close()


def test_held_up_readings_add_the_turn_they_measured_and_a_stale_one_adds_none(
    robot: tuple[Ros2Robot, Arrivals],
) -> None:
    backend, arrivals = robot
    t0 = backend.node.get_clock().now().nanoseconds * 1e-9 - 0.3
    # 1 rad/s for 0.1 s, then still, read every 10 ms: the first reading on time, the rest
    # held up 0.25 s and delivered within a millisecond of one another
    readings = [(t0 + 0.01 * i, 1.0 if i <= 10 else 0.0) for i in range(21)]
    for i, (stamp, rate) in enumerate(readings):
        arrivals.now = 100.0 + (0.0 if i == 0 else 0.25 + 0.00005 * i)
        backend._on_imu(_imu(backend, stamp, rate))
    gyro = backend._gyro
    assert gyro is not None
    assert gyro.stamp == arrivals.now  # the reading is the program's as it arrived
    assert gyro.angle == pytest.approx(0.1, abs=1e-6)  # by arrivals: 0.25 rad

    # a reading stamped before the newest (out of order, or a base's clock stepping back)
    arrivals.now += 0.01
    backend._on_imu(_imu(backend, readings[5][0], 1.0))
    assert backend._gyro is not None
    assert backend._gyro.angle == pytest.approx(0.1, abs=1e-6)
    assert math.isfinite(backend._gyro.rate)
