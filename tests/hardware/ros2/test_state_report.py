"""What freelook tells ROS of itself (sans-I/O): the diagnostic's level and line from the
program's telemetry, the most serious thing first."""

from __future__ import annotations

import dataclasses

import pytest

from freelook.hardware.ros2._state import ERROR, OK, WARN, state_report
from freelook.link import LinkStatsReport, Telemetry
from freelook.types import Mode, SafetyFlags

DRIVING = Telemetry(
    stamp=1.0,
    odom=(0.0, 0.0, 0.0),
    pose=(1.0, 2.0, 0.5),
    v=0.3,
    omega=0.0,
    cmd_v=0.3,
    cmd_omega=0.0,
    pan=0.0,
    tilt=0.0,
    mode=Mode.TANK,
    controller=3,
    link=LinkStatsReport(rx_rate_hz=21.0, drop_percent=2.5, latency_s=0.012),
)


@pytest.mark.parametrize(
    ("change", "connected", "level", "line"),
    [
        ({}, True, OK, "tank"),
        ({"controller": 0}, True, OK, "tank, no operator in control"),
        (
            {"safety_scale": 0.4, "safety_zone": 1},
            True,
            OK,
            "lets 40% of the command through (zone 1)",
        ),
        ({"localizing": True}, True, WARN, "the pose is not trusted"),
        ({"safety_flags": SafetyFlags.WATCHDOG}, True, WARN, "the link is quiet"),
        ({"safety_flags": SafetyFlags.WATCHDOG, "controller": 0}, True, OK, "no operator"),
        ({"safety_flags": SafetyFlags.HARDWARE}, False, ERROR, "hardware fault: /odom quiet"),
        ({"estop": True, "safety_flags": SafetyFlags.HARDWARE}, False, ERROR, "e-stop engaged"),
    ],
    ids=["driving", "no one", "slowed", "pose", "quiet link", "idle", "hardware", "e-stop"],
)
def test_the_level_and_line_say_the_most_serious_thing(
    change: dict[str, object], connected: bool, level: int, line: str
) -> None:
    telemetry = dataclasses.replace(DRIVING, **change)  # type: ignore[arg-type]
    report = state_report(telemetry, connected, "hardware fault: /odom quiet for 0.60 s")
    assert report.level == level
    assert line in report.message


def test_the_values_carry_the_state_and_the_link() -> None:
    slowed = dataclasses.replace(
        DRIVING,
        safety_scale=0.25,
        safety_zone=0,
        safety_flags=SafetyFlags.ZONE | SafetyFlags.APPROACH,
    )
    report = state_report(slowed, True, "a ROS 2 robot")
    values = dict(report.values)
    assert (report.mode, report.estop, report.safety_zone, report.link_ok) == (
        "tank",
        False,
        0,
        True,
    )
    assert report.safety_scale == 0.25
    assert values["safety_reasons"] == "zone,approach"
    assert (values["link_rx_hz"], values["link_drop_percent"]) == ("21.0", "2.5")
    assert values["pose"] == "1.000 2.000 0.5000"
    assert values["controller"] == "3"
