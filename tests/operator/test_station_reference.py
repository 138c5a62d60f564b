"""The reference a station records beside a robot-side trajectory."""

from __future__ import annotations

import dataclasses

import pytest

from freelook.config import load_robot
from freelook.link import LinkSession, NativeCodec, Telemetry, TrajectoryStart
from freelook.operator import StationCore, parse_browser_message
from freelook.types import Mode

CONFIG = load_robot("pioneer3dx")
AT_REST = Telemetry(
    stamp=0.0,
    odom=(0.0, 0.0, 0.0),
    pose=(0.0, 0.0, 0.0),
    v=0.0,
    omega=0.0,
    cmd_v=0.0,
    cmd_omega=0.0,
    pan=0.0,
    tilt=0.0,
)


def _started() -> tuple[StationCore, TrajectoryStart]:
    core = StationCore(CONFIG, None, LinkSession(NativeCodec(bytes(32), sender=1), spacing=0.05))
    request = parse_browser_message(
        {"type": "trajectory", "action": "start", "preset": "ellipse"}, core.scales
    )
    assert request is not None
    (upload,) = core.handle(request, 10.0, 1.8e9)
    assert isinstance(upload, TrajectoryStart)
    return core, upload


def test_the_reference_runs_from_the_upload_once_the_robot_tracks_it() -> None:
    core, upload = _started()
    assert core.reference_now(10.5) is None  # the robot has not said it tracks it
    core.on_link_message(dataclasses.replace(AT_REST, mode=Mode.TRAJECTORY), 10.05)
    reference = core.reference_now(10.0 + upload.t[50])
    assert reference is not None
    assert reference[:2] == pytest.approx((upload.x[50], upload.y[50]), abs=1e-6)
    assert core.reference_now(10.0 + upload.t[-1] + 1.0) is None  # over
    core.on_link_message(dataclasses.replace(AT_REST, mode=Mode.KEYBOARD), 12.0)
    assert core.reference_now(12.0) is None  # the operator took over


def test_a_trajectory_the_robot_never_took_up_records_no_reference() -> None:
    core, _ = _started()
    core.on_link_message(AT_REST, 10.5)
    core.on_link_message(AT_REST, 12.5)
    core.on_link_message(dataclasses.replace(AT_REST, mode=Mode.TRAJECTORY), 13.0)
    assert core.robot_path is None
    assert core.reference_now(13.0) is None
