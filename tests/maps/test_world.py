"""World loaders: TOML, ROS map_server YAML + PGM, ARIA .map — and their errors."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from freelook.cli import app
from freelook.errors import WorldError
from freelook.maps import builtin_worlds, load_world

# A 4 × 3 m room with 5 cm cells, its walls on the cell rows/columns at the edges.
RES = 0.05
W, H = 80, 60


def _room_grid() -> np.ndarray:
    grid = np.zeros((H, W), dtype=bool)
    grid[0, :] = grid[-1, :] = True
    grid[:, 0] = grid[:, -1] = True
    grid[20:30, 40] = True  # a short interior wall, 0.5 m long at x = 2.0
    return grid


def _write_ros(tmp_path: Path, ascii_pgm: bool = False) -> Path:
    grid = _room_grid()
    image = np.where(np.flipud(grid), 0, 254).astype(np.uint8)  # black = occupied, row 0 = top
    pgm = tmp_path / "room.pgm"
    if ascii_pgm:
        body = "\n".join(" ".join(str(v) for v in row) for row in image)
        pgm.write_text(f"P2\n# made by a test\n{W} {H}\n255\n{body}\n")
    else:
        pgm.write_bytes(f"P5\n# made by a test\n{W} {H}\n255\n".encode() + image.tobytes())
    yaml_path = tmp_path / "room.yaml"
    yaml_path.write_text(
        "image: room.pgm\nresolution: 0.05\norigin: [0.0, 0.0, 0.0]\nnegate: 0\n"
        "occupied_thresh: 0.65\nfree_thresh: 0.196\n"
    )
    return yaml_path


def _write_aria(tmp_path: Path) -> Path:
    # Cell centres of the wall rows/columns, in mm, as LINES; the interior wall as DATA points.
    c = RES * 1000 / 2
    x_max, y_max = (W - 1) * 50 + c, (H - 1) * 50 + c
    lines = [(c, c, x_max, c), (x_max, c, x_max, y_max), (x_max, y_max, c, y_max), (c, y_max, c, c)]
    points = [(40 * 50 + c, i * 50 + c) for i in range(20, 30)]
    text = [
        "2D-Map",
        f"MinPos: {c:.0f} {c:.0f}",
        f"MaxPos: {x_max:.0f} {y_max:.0f}",
        f"NumPoints: {len(points)}",
        f"NumLines: {len(lines)}",
        'Cairn: GoalWithHeading 1000 1000 0 "" ICON "goal"',
        "LINES",
    ]
    text += [" ".join(f"{v:.0f}" for v in line) for line in lines]
    text.append("DATA")
    text += [f"{x:.0f} {y:.0f}" for x, y in points]
    path = tmp_path / "room.map"
    path.write_text("\n".join(text) + "\n")
    return path


def _obstacle_points(world) -> set[tuple[int, int]]:  # type: ignore[no-untyped-def]
    i, j = np.nonzero(world.occupancy)
    xs = world.origin[0] + (j + 0.5) * world.resolution
    ys = world.origin[1] + (i + 0.5) * world.resolution
    return {(int(x // RES), int(y // RES)) for x, y in zip(xs, ys, strict=True)}


@pytest.mark.parametrize("ascii_pgm", [False, True])
def test_ros_and_aria_maps_load_to_the_same_obstacles(tmp_path: Path, ascii_pgm: bool) -> None:
    ros = load_world(_write_ros(tmp_path, ascii_pgm))
    aria = load_world(_write_aria(tmp_path))
    assert ros.resolution == aria.resolution == RES
    assert np.array_equal(ros.occupancy, _room_grid())  # rows flipped to y-up
    a, b = _obstacle_points(ros), _obstacle_points(aria)
    assert len(a) == int(_room_grid().sum())
    # same obstacle cells, allowing one cell at the edges of lines
    missing = {
        p
        for p in a
        if not any((p[0] + dx, p[1] + dy) in b for dx in (-1, 0, 1) for dy in (-1, 0, 1))
    }
    extra = {
        p
        for p in b
        if not any((p[0] + dx, p[1] + dy) in a for dx in (-1, 0, 1) for dy in (-1, 0, 1))
    }
    assert not missing
    assert not extra


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("bad.map", "3D-Map\n", r"bad\.map: line 1: expected '2D-Map'"),
        ("bad.map", "2D-Map\nMinPos: 0 zero\n", r"bad\.map: line 2: bad number in MinPos"),
        ("bad.map", "2D-Map\nLINES\n0 0 100\n", r"bad\.map: line 3: a LINES entry needs"),
        ("bad.map", "2D-Map\nDATA\n1 2\nx y\n", r"bad\.map: line 4: expected numbers"),
        ("bad.yaml", "resolution: 0.05\norigin: [0, 0, 0]\n", r"bad\.yaml: image: missing"),
        (
            "bad.yaml",
            "image: nope.pgm\nresolution: 0.05\norigin: [0, 0, 0]\nnegate: 0\n"
            "occupied_thresh: 0.65\nfree_thresh: 0.196\n",
            r"nope\.pgm: cannot read image",
        ),
        ("bad.yaml", "image: [1\n", r"bad\.yaml: not valid YAML"),
        ("bad.toml", 'name = "x"\nresolution = 0.05\n', r"bad\.toml: size: Field required"),
        (
            "bad.toml",
            'name = "x"\nresolution = 0.05\nsize = [1, 1]\ncolour = 1\n',
            r"bad\.toml: colour: Extra inputs",
        ),
        ("bad.png", "", r"unknown world format"),
    ],
)
def test_malformed_files_name_file_and_line(
    tmp_path: Path, name: str, content: str, message: str
) -> None:
    path = tmp_path / name
    path.write_text(content)
    with pytest.raises(WorldError, match=message):
        load_world(path)


def test_truncated_pgm(tmp_path: Path) -> None:
    yaml_path = _write_ros(tmp_path)
    pgm = tmp_path / "room.pgm"
    pgm.write_bytes(pgm.read_bytes()[:200])
    with pytest.raises(WorldError, match="image data truncated"):
        load_world(yaml_path)


def test_builtin_worlds() -> None:
    assert set(builtin_worlds()) == {"lab", "square", "eod"}
    lab = load_world("lab")
    x0, x1, y0, y1 = lab.extent
    assert (x1 - x0) * (y1 - y0) == pytest.approx(243, rel=0.05)
    # the narrow passage in the hall wall is under 1 m wide and passable
    column = lab.obstacles()[: round(11.5 / lab.resolution), round(11.0 / lab.resolution)]
    gaps = np.diff(np.flatnonzero(column)) - 1
    assert 0.6 < gaps.max() * lab.resolution < 1.0
    square = load_world("square")
    assert square.extent[1] - square.extent[0] >= 12
    assert square.extent[3] - square.extent[2] >= 12
    eod = load_world("eod")
    colours = {o.name: o.color for o in eod.objects}
    assert colours["suspicious object"][0] > 200
    assert colours["receptacle"][1] > 150
    for world in (lab, square, eod):
        assert world.is_free(world.start[0], world.start[1])


def test_world_show_cli(tmp_path: Path) -> None:
    out = tmp_path / "lab.png"
    result = CliRunner().invoke(app, ["world", "show", "lab", "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:4] == b"\x89PNG"
    bad = CliRunner().invoke(app, ["world", "show", "nowhere", "-o", str(out)])
    assert bad.exit_code == 2
