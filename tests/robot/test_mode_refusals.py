"""The robot says which modes it refuses and why: up front (standing: what it is) and in
answer to what a station asked for, once a second at most while the station keeps asking."""

from __future__ import annotations

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    ControlRequest,
    FreeLookCommand,
    LinearDriveStart,
    ModeChange,
    ModeRefusal,
    TankCommand,
)
from freelook.maps import load_world
from freelook.types import Mode

WORLD = load_world("square")
NO_PAN = "Free Look refused: the camera cannot pan (no pan joint)"


def robot(name: str) -> SimulatedRobot:
    config = load_robot(name)
    return SimulatedRobot(config, WORLD, seed=1, pose=(7.0, 7.0, 0.0), use_localization=False)


def test_a_robot_without_a_pan_joint_says_so_up_front() -> None:
    r = robot("ros2-diff-base")
    standing = r.program.core.standing_refusals()
    assert ModeRefusal(0, Mode.FREE_LOOK, NO_PAN, standing=True) in standing
    assert ModeRefusal(0, Mode.ARM, "Arm refused: this robot has no arm", standing=True) in standing
    assert {m.mode for m in standing} == {Mode.FREE_LOOK, Mode.ARM, Mode.AUTONOMY}
    assert NO_PAN in r.program.core.unavailable()


def test_a_robot_with_a_pan_unit_refuses_neither_free_look_nor_tank() -> None:
    modes = {m.mode for m in robot("pioneer3dx").program.core.standing_refusals()}
    assert Mode.FREE_LOOK not in modes
    assert Mode.TANK not in modes


def test_the_station_that_asked_hears_why_once_a_second_while_it_asks() -> None:
    r = robot("ros2-diff-base")
    r.send(ControlRequest(1, 10), 1)
    answers = []
    for _ in range(40):  # 2 s of a station repeating its Free Look command
        answers += r.send(FreeLookCommand(0.3, 0.0, 0.0), 1)
        r.run_for(0.05)
    assert answers == [ModeRefusal(1, Mode.FREE_LOOK, NO_PAN)] * 2
    assert r.core.modes.mode == Mode.IDLE
    assert r.send(TankCommand(0.2, 0.0), 1) == []  # a mode it has: no refusal
    r.run_for(0.05)
    assert r.core.modes.mode == Mode.TANK


def test_a_mode_change_the_robot_cannot_make_is_answered_too() -> None:
    r = robot("ros2-diff-base")
    r.send(ControlRequest(1, 10), 1)
    assert r.send(ModeChange(Mode.ARM), 1) == [
        ModeRefusal(1, Mode.ARM, "Arm refused: this robot has no arm")
    ]
    (refusal,) = r.send(LinearDriveStart(7.0, 7.0, 0.3), 1)
    assert refusal.mode == Mode.LINEAR
    assert "two different points" in refusal.reason
