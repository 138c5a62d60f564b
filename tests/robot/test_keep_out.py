"""Keep-out lines and areas from an ARIA map: the robot's safety layer stops it before it
enters one, as before a wall, and lets it drive away (and out of an area it stands in)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from freelook.config import load_robot
from freelook.geometry import Pose
from freelook.hardware.sim import SimulatedRobot
from freelook.link import VelocityCommand
from freelook.maps import load_world
from freelook.safety import MapLayer

CONFIG = load_robot("pioneer3dx")
FRONT = CONFIG.footprint.center_forward + CONFIG.footprint.length / 2

# a 10 × 4 m hall: a forbidden line across it at x = 6, a forbidden area in a corner
HALL = """2D-Map
LineMinPos: 0 0
LineMaxPos: 10000 4000
NumLines: 4
Cairn: RobotHome 1500 2000 0 "" ICON "home"
Cairn: ForbiddenLine 6000 0 0.000000 "" ICON "gate" 6000 0 6000 4000
Cairn: ForbiddenArea 0 0 0.000000 "" ICON "pit" 3000 0 4500 1300
LINES
0 0 10000 0
10000 0 10000 4000
10000 4000 0 4000
0 4000 0 0
DATA
"""


@pytest.fixture(scope="module")
def hall(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("maps") / "hall.map"
    path.write_text(HALL)
    return path


def _drive(robot: SimulatedRobot, v: float, omega: float, seconds: float) -> list[Pose]:
    poses = []
    for _ in range(round(seconds / 0.05)):
        robot.send(VelocityCommand(v, omega))
        robot.run_for(0.05)
        truth = robot.sim.ground_truth
        poses.append(Pose(truth.x, truth.y, truth.theta))
    return poses


def _corners(pose: Pose) -> np.ndarray:
    fp = CONFIG.footprint
    u = np.array([-1, 1, 1, -1]) * fp.length / 2 + fp.center_forward
    w = np.array([-1, -1, 1, 1]) * fp.width / 2
    c, s = math.cos(pose.theta), math.sin(pose.theta)
    return np.column_stack((pose.x + c * u - s * w, pose.y + s * u + c * w))


def test_the_map_layer_shows_keep_out_outlines_near_the_robot(hall: Path) -> None:
    layer = MapLayer(load_world(str(hall)), reach=1.5)
    near_gate = layer.keep_out_points(Pose(5.2, 3.0, math.pi / 2))
    assert len(near_gate) > 20
    # the line 0.8 m to the right, in the robot frame, the wall at y = 4 left alone
    assert np.allclose(near_gate[:, 1], -0.8)
    assert len(layer.points(Pose(5.2, 3.0, math.pi / 2))) > len(near_gate)
    assert len(layer.keep_out_points(Pose(1.0, 3.5, 0.0))) == 0  # nothing within reach
    # standing in the pit, its outline is left out: the robot may drive out
    assert len(layer.keep_out_points(Pose(3.7, 0.6, 0.0))) == 0
    assert len(layer.keep_out_points(Pose(3.7, 2.0, 0.0))) > 0
    assert len(MapLayer(load_world("lab"), reach=2.5).keep_out_points(Pose(3, 3, 0))) == 0


def test_driven_at_a_forbidden_line_the_robot_stops_before_it_and_backs_away(hall: Path) -> None:
    robot = SimulatedRobot(CONFIG, load_world(str(hall)), seed=2, pose=(3.0, 2.5, 0.0))
    poses = _drive(robot, 1.0, 0.0, 12.0)
    assert robot.core.estimator.pose_trusted
    front = max(p.x + FRONT for p in poses)
    assert front < 6.0
    assert poses[-1].x > 4.5  # it did drive up to the line
    back = _drive(robot, -0.3, 0.0, 3.0)
    assert back[-1].x < poses[-1].x - 0.2


@pytest.mark.parametrize("seed", range(12))
def test_reckless_drives_toward_keep_out_areas_never_enter_them(hall: Path, seed: int) -> None:
    rng = np.random.default_rng(seed)
    world = load_world(str(hall))
    start = (float(rng.uniform(1.0, 2.5)), float(rng.uniform(1.0, 3.0)), 0.0)
    aim = (6.0, float(rng.uniform(0.5, 3.5))) if seed % 2 else (3.75, 0.65)
    heading = math.atan2(aim[1] - start[1], aim[0] - start[0])
    robot = SimulatedRobot(CONFIG, world, seed=seed, pose=(*start[:2], heading))
    pit = world.keep_out[1]
    poses = _drive(robot, 1.2, float(rng.uniform(-0.1, 0.1)), 8.0)
    for pose in poses:
        corners = _corners(pose)
        assert corners[:, 0].max() < 6.0, f"crossed the line at {pose}"
        assert not any(pit.contains(float(x), float(y)) for x, y in corners), pose


def test_a_robot_inside_a_forbidden_area_can_drive_out(hall: Path) -> None:
    robot = SimulatedRobot(CONFIG, load_world(str(hall)), seed=3, pose=(3.7, 0.65, math.pi / 2))
    poses = _drive(robot, 0.3, 0.0, 10.0)
    assert poses[-1].y > 1.3 + CONFIG.footprint.length / 2
