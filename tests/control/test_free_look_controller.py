"""The Free Look controller on its own: camera commands in, a drive command (tracks and the
chassis twist they give) and the pan rate out (sans-I/O)."""

from __future__ import annotations

import math

import pytest

from freelook.config import load_robot
from freelook.control import CameraCommand, FreeLookController
from freelook.geometry import Pose

CONFIG = load_robot("foi-ugv")


def controller() -> FreeLookController:
    pan_tilt = CONFIG.pan_tilt
    assert pan_tilt is not None
    return FreeLookController(CONFIG.free_look, CONFIG.drive, pan_tilt, CONFIG.limits)


def test_a_turn_commanded_over_uneven_arrivals_is_integrated_over_the_time_each_was_in_force() -> (
    None
):
    fl = controller()
    fl.command(CameraCommand(0.0, 0.0, math.pi / 2), 0.0)
    fl.step(Pose(0.0, 0.0, 0.0), 0.0, 0.0, True, 0.0)  # the reference starts at the camera
    # the same turn again at uneven arrivals, then released after one second in all
    for t in (0.13, 0.21, 0.5, 0.77):
        fl.command(CameraCommand(0.0, 0.0, math.pi / 2), t)
    fl.command(CameraCommand(0.0, 0.0, 0.0), 1.0)
    fl.step(Pose(0.0, 0.0, 0.0), 0.0, 0.0, True, 1.5)
    assert fl.reference is not None
    assert fl.reference.psi == pytest.approx(math.pi / 2, abs=1e-12)


def test_a_held_camera_has_nothing_to_catch_up_when_released() -> None:
    fl = controller()
    fl.command(CameraCommand(0.3, 0.0, 0.0), 0.0)
    fl.step(Pose(0.0, 0.0, 0.0), 0.0, 0.0, True, 0.0)
    start = fl.reference
    assert start is not None
    fl.hold()  # the e-stop: the actuators carry out nothing from now on
    fl.command(CameraCommand(0.3, 0.0, 0.0), 2.0)
    ref = fl.reference
    assert ref is not None
    assert (ref.x, ref.y) == (start.x, start.y)
    fl.carried_out = 1.0  # released, the camera where it was
    drive, _ = fl.step(Pose(0.0, 0.0, 0.0), 0.0, 0.0, True, 2.0)
    # only the command itself drives it on: no correction towards a reference run ahead
    assert drive.v == pytest.approx(0.3, rel=0.05)
    fl.reset()
    assert fl.reference is None
