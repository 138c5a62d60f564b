"""MobileRobots ARIA ``.map`` files (Mapper3): header, ``LINES`` and ``DATA`` sections, in mm.

The loader returns a :class:`World` in the y-up grid convention and raises
:class:`freelook.errors.WorldError` naming the file and the line on bad input.
"""

from __future__ import annotations

import dataclasses
import math
import shlex
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt

from freelook.errors import WorldError
from freelook.files import read_regular
from freelook.maps._limits import MAX_CELLS, MAX_IMAGE_BYTES
from freelook.maps._model import KeepOut, Place, World
from freelook.maps._raster import draw_points, draw_segment

__all__ = ["load_aria_map"]

_ARIA_NUMERIC = ("MinPos", "MaxPos", "LineMinPos", "LineMaxPos", "NumPoints", "NumLines")
_ARIA_PLACES: dict[str, Literal["home", "dock", "goal"]] = {
    "RobotHome": "home",
    "Dock": "dock",
    "Goal": "goal",
}


@dataclasses.dataclass
class _AriaFile:
    """What an ARIA map's lines say, in metres: the header's numbers, the line segments and
    points, the cairn types that make places, and the cairn lines still to read."""

    header: dict[str, list[float]] = dataclasses.field(default_factory=dict)
    segments: list[tuple[float, float, float, float]] = dataclasses.field(default_factory=list)
    points: list[tuple[float, float]] = dataclasses.field(default_factory=list)
    types: dict[str, Literal["home", "dock", "goal"]] = dataclasses.field(
        default_factory=lambda: dict(_ARIA_PLACES)
    )
    cairns: list[tuple[list[str], str]] = dataclasses.field(default_factory=list)


def load_aria_map(path: str | Path, resolution: float = 0.05) -> World:
    """A MobileRobots ARIA map (Mapper3): header, ``LINES`` and ``DATA`` sections, in mm.

    Cairns: ``RobotHome`` (the start), ``Dock``, ``Goal`` and the goal and dock types the
    map's ``MapInfo`` declares become places; ``ForbiddenLine`` and ``ForbiddenArea`` become
    keep-out lines and areas.
    """
    map_path = Path(path)
    try:
        lines = read_regular(map_path, MAX_IMAGE_BYTES).decode("latin-1").splitlines()
    except OSError as err:
        raise WorldError(f"{map_path}: cannot read: {err.strerror}") from None
    if not lines or not lines[0].strip().startswith("2D-Map"):
        raise WorldError(f"{map_path}: line 1: expected '2D-Map' header")
    parsed = _parse(map_path, lines)
    places: list[Place] = []
    keep_out: list[KeepOut] = []
    for tokens, where in parsed.cairns:
        item = _cairn(tokens, where, parsed.types)
        if isinstance(item, Place):
            places.append(item)
        elif isinstance(item, KeepOut):
            keep_out.append(item)
    grid, origin = _grid(map_path, parsed, resolution)
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    start_from = ""
    for kind, label in (("home", "RobotHome"), ("dock", "Dock")):
        place = next((p for p in places if p.kind == kind), None)
        if place is not None:
            start = (place.x, place.y, place.theta or 0.0)
            start_from = f"the map's {label} cairn"
            break
    return World(
        map_path.stem,
        grid,
        resolution,
        origin,
        start=start,
        start_from=start_from,
        places=tuple(places),
        keep_out=tuple(keep_out),
    )


def _parse(map_path: Path, lines: list[str]) -> _AriaFile:
    """The map's lines after the ``2D-Map`` one, section by section."""
    parsed = _AriaFile()
    section = "header"
    for number, raw in enumerate(lines[1:], start=2):
        line = raw.strip()
        if not line:
            continue
        if line == "LINES":
            section = "lines"
            continue
        if line == "DATA":
            section = "data"
            continue
        if section == "header":
            _header_line(parsed, line, f"{map_path}: line {number}")
            continue
        try:
            values = [float(v) for v in line.split()]
        except ValueError:
            raise WorldError(f"{map_path}: line {number}: expected numbers, got {line!r}") from None
        if section == "lines":
            if len(values) != 4:
                raise WorldError(f"{map_path}: line {number}: a LINES entry needs x1 y1 x2 y2")
            parsed.segments.append(
                (values[0] / 1000, values[1] / 1000, values[2] / 1000, values[3] / 1000)
            )
        else:
            if len(values) != 2:
                raise WorldError(f"{map_path}: line {number}: a DATA entry needs x y")
            parsed.points.append((values[0] / 1000, values[1] / 1000))
    return parsed


def _header_line(parsed: _AriaFile, line: str, where: str) -> None:
    """One header line: the numbers the grid's extent needs, a cairn kept for later, or a
    ``MapInfo`` declaring a goal or dock type; the rest carries nothing the grid needs."""
    key, _, rest = line.partition(":")
    if key in _ARIA_NUMERIC:
        try:
            parsed.header[key] = [float(v) for v in rest.split()]
        except ValueError:
            raise WorldError(f"{where}: bad number in {key}") from None
    elif key == "Cairn":
        parsed.cairns.append((_split(rest, where), where))
    elif key == "MapInfo":
        info = _split(rest, where)
        declared = {"GoalType": "goal", "DockType": "dock"}.get(info[0] if info else "")
        names = [t.removeprefix("Name=") for t in info[1:] if t.startswith("Name=")]
        if declared is not None and names:
            parsed.types[names[0]] = "goal" if declared == "goal" else "dock"


def _grid(
    map_path: Path, parsed: _AriaFile, resolution: float
) -> tuple[npt.NDArray[np.bool_], tuple[float, float]]:
    """The occupancy grid of the segments and points (read-only) and its origin: around them
    and the header's extents, with a margin of two cells."""
    segments, points, header = parsed.segments, parsed.points, parsed.header
    xs = [p[0] for p in points] + [s[i] for s in segments for i in (0, 2)]
    ys = [p[1] for p in points] + [s[i] for s in segments for i in (1, 3)]
    for key in ("MinPos", "MaxPos", "LineMinPos", "LineMaxPos"):
        if key in header and len(header[key]) >= 2:
            xs.append(header[key][0] / 1000)
            ys.append(header[key][1] / 1000)
    if not xs:
        raise WorldError(f"{map_path}: no LINES or DATA and no MinPos/MaxPos: nothing to load")
    margin = 2 * resolution
    origin = (min(xs) - margin, min(ys) - margin)
    cols = math.ceil((max(xs) + margin - origin[0]) / resolution)
    rows = math.ceil((max(ys) + margin - origin[1]) / resolution)
    if rows * cols > MAX_CELLS:
        raise WorldError(f"{map_path}: map of {rows}×{cols} cells exceeds {MAX_CELLS}")
    grid = np.zeros((rows, cols), dtype=bool)
    for x1, y1, x2, y2 in segments:
        draw_segment(grid, origin, resolution, x1, y1, x2, y2, resolution)
    draw_points(grid, origin, resolution, np.array(points, dtype=np.float64).reshape(-1, 2))
    grid.setflags(write=False)
    return grid, origin


def _cairn(
    tokens: list[str], where: str, types: dict[str, Literal["home", "dock", "goal"]]
) -> Place | KeepOut | None:
    """One ``Cairn:`` line: TYPE X Y TH "desc" ICON "name" [FROM_X FROM_Y TO_X TO_Y] (mm, °)."""
    if len(tokens) < 7:
        raise WorldError(f"{where}: Cairn: expected TYPE X Y TH DESC ICON NAME, got {tokens!r}")
    kind = tokens[0]
    try:
        x, y, th = (float(v) for v in tokens[1:4])
        ends = [float(v) / 1000 for v in tokens[7:11]] if len(tokens) >= 11 else None
    except ValueError:
        raise WorldError(f"{where}: Cairn {kind}: expected numbers for X Y TH") from None
    name = tokens[6]
    base = kind.removesuffix("WithHeading")
    if base in types:
        heading = math.radians(th) if kind.endswith("WithHeading") or base != "Goal" else None
        return Place(name or kind, types[base], x / 1000, y / 1000, heading)
    if kind in ("ForbiddenLine", "ForbiddenArea"):
        if ends is None:
            raise WorldError(f"{where}: Cairn {kind}: expected FROM_X FROM_Y TO_X TO_Y")
        fx, fy, tx, ty = ends
        if kind == "ForbiddenLine":
            return KeepOut(name or kind, "line", ((fx, fy), (tx, ty)))
        # ARIA's ArMapObject: the rectangle's corners turned by TH about the map's origin
        c, s = math.cos(math.radians(th)), math.sin(math.radians(th))
        corners = ((fx, fy), (tx, fy), (tx, ty), (fx, ty))
        return KeepOut(
            name or kind, "area", tuple((c * u - s * v, s * u + c * v) for u, v in corners)
        )
    return None  # sectors, labels, boundaries: nothing a robot needs


def _split(text: str, where: str) -> list[str]:
    try:
        return shlex.split(text)
    except ValueError as err:
        raise WorldError(f"{where}: {err}") from None
