"""A global search draws its poses only where the robot can stand: room enough from every
obstacle, on known free cells, inside the building (not on the ground an ARIA map's grid
covers around it)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from freelook.config import load_robot
from freelook.estimation import MonteCarloLocalization
from freelook.maps import load_world

BUILDING = """2D-Map
LineMinPos: 0 0
LineMaxPos: 8000 5000
LINES
0 0 8000 0
8000 0 8000 5000
8000 5000 0 5000
0 5000 0 0
4000 0 4000 3000
DATA
-6000 -4000
14000 9000
"""


def test_search_poses_lie_inside_with_room(tmp_path: Path) -> None:
    path = tmp_path / "building.map"
    path.write_text(BUILDING)
    world = load_world(str(path))
    config = load_robot("pioneer3dx")
    mcl = MonteCarloLocalization.for_robot(world, config, seed=4)
    mcl.global_init()
    x, y = mcl.particles[:, 0], mcl.particles[:, 1]
    fp = config.footprint
    room = min(fp.width / 2, fp.length / 2 - abs(fp.center_forward))
    assert len(x) >= 10_000
    assert np.all((x > room) & (x < 8.0 - room) & (y > room) & (y < 5.0 - room))
    assert not np.any((np.abs(x - 4.0) < room - 0.05) & (y < 3.0))  # the inner wall's band
    # the outside ground is more than half the grid's free area, and no pose went there
    outside = (~world.obstacles()).sum() - 8.0 * 5.0 / world.resolution**2
    assert outside > 0.5 * (~world.obstacles()).sum()
