"""Starting on any map from the command line: ``--start``, the map's own start, and a clear
error (exit 2, no traceback) when the robot would stand on an obstacle."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.maps import load_world

# a 6 × 4 m room whose lower-left corner (the map's origin) is on its walls, no RobotHome
ROOM = """2D-Map
LineMinPos: 0 0
LineMaxPos: 6000 4000
NumLines: 5
LINES
0 0 6000 0
6000 0 6000 4000
6000 4000 0 4000
0 4000 0 0
3000 0 3000 2500
DATA
"""


@pytest.fixture
def room(tmp_path: Path) -> Path:
    path = tmp_path / "room.map"
    path.write_text(ROOM)
    return path


def test_a_robot_starts_on_a_map_whose_origin_is_a_wall(room: Path) -> None:
    robot = SimulatedRobot(load_robot("pioneer3dx"), load_world(str(room)), seed=1)
    truth = robot.sim.ground_truth
    assert 0.4 < truth.x < 2.6
    assert 0.4 < truth.y < 3.6
    assert robot.core.estimator.pose[:2] == pytest.approx((truth.x, truth.y))


def test_world_show_names_the_start_it_would_use(room: Path, tmp_path: Path) -> None:
    out = tmp_path / "room.png"
    result = CliRunner().invoke(app, ["world", "show", str(room), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "start 0.5" in result.output
    given = CliRunner().invoke(
        app, ["world", "show", str(room), "-o", str(out), "--start", "4.5,2,90"]
    )
    assert given.exit_code == 0
    assert "start 4.50,2.00,90" in given.output


@pytest.mark.parametrize(
    ("start", "message"),
    [
        ("3,1,0", r"start pose \(3\.00 m, 1\.00 m, 0°\) from the requested start"),
        ("1,2", r"--start '1,2': expected X,Y,THETA"),
        ("a,b,c", r"expected X,Y,THETA"),
    ],
)
@pytest.mark.parametrize("command", ["sim", "robot", "world"])
def test_a_bad_start_exits_2_with_the_reason(
    room: Path, tmp_path: Path, command: str, start: str, message: str
) -> None:
    args = {
        "sim": ["sim", "--world", str(room), "--no-browser", "--no-record"],
        "robot": ["robot", "--world", str(room), "--insecure", "--listen", "udp://127.0.0.1:0"],
        "world": ["world", "show", str(room), "-o", str(tmp_path / "x.png")],
    }[command]
    result = CliRunner().invoke(app, [*args, "--start", start])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert re.search(message, result.output), result.output
    assert "Traceback" not in result.output
