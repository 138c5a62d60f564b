"""The robot's e-stop latches: however often an "engaged" message comes (a key held down, a
station repeating it, a replay of a fresh one), it never releases or toggles anything; only an
explicit release does, and motion needs a new command after it."""

from __future__ import annotations

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import EStop, TankCommand
from freelook.maps import load_world

CONFIG = load_robot("pioneer3dx")
WORLD = load_world("lab")


def moving(robot: SimulatedRobot) -> bool:
    out = robot.core.control.last_output
    return abs(out.v_left) + abs(out.v_right) > 1e-3


def test_repeated_engage_messages_keep_the_robot_stopped_until_a_release() -> None:
    robot = SimulatedRobot(CONFIG, WORLD, seed=3, use_localization=False)
    turn = TankCommand(0.0, 0.5)  # on the spot: nothing blocks it
    robot.send(turn)
    robot.run_for(0.2)
    assert moving(robot)
    for k in range(7):  # engaged again and again, the drive command still arriving between
        robot.send(EStop(True))
        robot.send(turn)
        robot.run_for(0.05 * (1 + k % 3))
        assert robot.core.safety.estop
        assert not moving(robot), f"moving after engage message {k + 1}"
    robot.send(EStop(False))
    robot.run_for(0.1)
    assert not robot.core.safety.estop
    robot.send(turn)
    robot.run_for(0.2)
    assert moving(robot)
