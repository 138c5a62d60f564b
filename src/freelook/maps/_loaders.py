"""World loaders: freelook's TOML worlds, ROS ``map_server`` YAML + PGM, MobileRobots ARIA ``.map``.

Every loader returns a :class:`World` in the y-up grid convention and raises
:class:`freelook.errors.WorldError` naming the file and the line or field on bad input.
"""

from __future__ import annotations

import dataclasses
import math
import re
import tomllib
from importlib import resources
from pathlib import Path
from typing import Literal

import numpy as np
import numpy.typing as npt
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from freelook.errors import WorldError
from freelook.maps._model import World, WorldObject
from freelook.maps._raster import draw_points, draw_segment

__all__ = ["builtin_worlds", "load_aria_map", "load_ros_map", "load_toml_world", "load_world"]

_BUILTIN = "freelook.maps.builtin"
MAX_CELLS = 50_000_000


# ------------------------------------------------------------------------------ TOML worlds


class _ObjectSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    shape: Literal["box", "cylinder"]
    x: float
    y: float
    height: float = Field(gt=0)
    color: tuple[int, int, int]
    size: tuple[float, float] | None = None
    radius: float | None = Field(default=None, gt=0)
    yaw_deg: float = 0.0


class _WorldSpec(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    resolution: float = Field(ge=0.01, le=0.2)
    origin: tuple[float, float] = (0.0, 0.0)
    size: tuple[float, float]
    wall_height: float = Field(default=2.0, gt=0)
    wall_thickness: float = Field(default=0.1, gt=0)
    start: tuple[float, float, float] = (0.0, 0.0, 0.0)
    walls: list[tuple[float, float, float, float]] = []
    objects: list[_ObjectSpec] = []


def _toml_world(spec: _WorldSpec, source: str) -> World:
    cols = math.ceil(spec.size[0] / spec.resolution)
    rows = math.ceil(spec.size[1] / spec.resolution)
    if rows * cols > MAX_CELLS:
        raise WorldError(f"{source}: size: grid of {rows}×{cols} cells exceeds {MAX_CELLS}")
    grid = np.zeros((rows, cols), dtype=bool)
    for x1, y1, x2, y2 in spec.walls:
        draw_segment(grid, spec.origin, spec.resolution, x1, y1, x2, y2, spec.wall_thickness)
    objects = []
    for i, obj in enumerate(spec.objects):
        if obj.shape == "box" and obj.size is None:
            raise WorldError(f"{source}: objects.{i}.size: a box needs size = [x, y]")
        if obj.shape == "cylinder" and obj.radius is None:
            raise WorldError(f"{source}: objects.{i}.radius: a cylinder needs a radius")
        sx, sy = obj.size or (0.0, 0.0)
        objects.append(
            WorldObject(
                obj.name,
                obj.shape,
                obj.x,
                obj.y,
                obj.height,
                obj.color,
                sx,
                sy,
                math.radians(obj.yaw_deg),
                obj.radius or 0.0,
            )
        )
    start = (spec.start[0], spec.start[1], math.radians(spec.start[2]))
    grid.setflags(write=False)
    return World(
        spec.name, grid, spec.resolution, spec.origin, tuple(objects), spec.wall_height, start
    )


def load_toml_world(path: str | Path, source: str | None = None) -> World:
    """A freelook world: walls as segments plus objects, rasterised at load."""
    name = source or str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as err:
        raise WorldError(f"{name}: cannot read: {err.strerror}") from None
    except tomllib.TOMLDecodeError as err:
        raise WorldError(f"{name}: not valid TOML: {err}") from None
    try:
        spec = _WorldSpec.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise WorldError(f"{name}: {field}: {first['msg']}") from None
    return _toml_world(spec, name)


# ------------------------------------------------------------------------------ ROS map_server


def _read_pgm(path: Path) -> npt.NDArray[np.float64]:
    """A PGM image (P5 binary or P2 ASCII) as values scaled to 0…1 (0 black, 1 white)."""
    try:
        data = path.read_bytes()
    except OSError as err:
        raise WorldError(f"{path}: cannot read image: {err.strerror}") from None
    # header tokens: magic, width, height, maxval — comments start with '#'
    tokens: list[bytes] = []
    pos = 0
    while len(tokens) < 4:
        match = re.compile(rb"\s*(#[^\n]*\n\s*)*([^\s#]+)").match(data, pos)
        if match is None:
            raise WorldError(f"{path}: not a PGM image (truncated header)")
        tokens.append(match.group(2))
        pos = match.end()
    magic = tokens[0]
    try:
        width, height, maxval = (int(t) for t in tokens[1:4])
    except ValueError:
        raise WorldError(f"{path}: PGM header has a non-integer size or maxval") from None
    if magic not in (b"P5", b"P2") or width <= 0 or height <= 0 or not 0 < maxval < 65536:
        raise WorldError(f"{path}: not a PGM image (magic {magic!r}, {width}×{height}, {maxval})")
    if width * height > MAX_CELLS:
        raise WorldError(f"{path}: image of {width}×{height} exceeds {MAX_CELLS} cells")
    count = width * height
    if magic == b"P5":
        dtype = np.dtype(">u2") if maxval > 255 else np.dtype(np.uint8)
        body = data[pos + 1 : pos + 1 + count * dtype.itemsize]
        if len(body) < count * dtype.itemsize:
            raise WorldError(f"{path}: image data truncated ({len(body)} bytes for {count} pixels)")
        pixels = np.frombuffer(body, dtype=dtype).astype(np.float64)
    else:
        try:
            values = [int(v) for v in data[pos:].split()[:count]]
        except ValueError:
            raise WorldError(f"{path}: ASCII PGM has a non-integer pixel") from None
        if len(values) < count:
            raise WorldError(f"{path}: image data truncated ({len(values)} of {count} pixels)")
        pixels = np.array(values, dtype=np.float64)
    return pixels.reshape(height, width) / maxval


def load_ros_map(path: str | Path) -> World:
    """A ROS ``map_server`` map: YAML (image, resolution, origin, negate, thresholds) + PGM."""
    yaml_path = Path(path)
    try:
        meta = yaml.safe_load(yaml_path.read_text(encoding="utf-8"))
    except OSError as err:
        raise WorldError(f"{yaml_path}: cannot read: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise WorldError(f"{yaml_path}: not valid YAML: {err}") from None
    if not isinstance(meta, dict):
        raise WorldError(f"{yaml_path}: expected a mapping of map_server keys")
    for key in ("image", "resolution", "origin"):
        if key not in meta:
            raise WorldError(f"{yaml_path}: {key}: missing required key")
    try:
        resolution = float(meta["resolution"])
        origin = [float(v) for v in meta["origin"]]
        negate = int(meta.get("negate", 0))
        occupied = float(meta.get("occupied_thresh", 0.65))
    except (TypeError, ValueError) as err:
        raise WorldError(f"{yaml_path}: bad value: {err}") from None
    if resolution <= 0 or len(origin) < 2:
        raise WorldError(f"{yaml_path}: resolution must be > 0 and origin [x, y, yaw]")
    image = _read_pgm(yaml_path.parent / str(meta["image"]))
    # map_server: p = (255 − v)/255 unless negated; occupied when p > occupied_thresh
    probability = image if negate else 1.0 - image
    grid = np.flipud(probability > occupied).copy()
    grid.setflags(write=False)
    return World(yaml_path.stem, grid, resolution, (origin[0], origin[1]))


# ------------------------------------------------------------------------------ ARIA .map


def load_aria_map(path: str | Path, resolution: float = 0.05) -> World:
    """A MobileRobots ARIA map (Mapper3): header, ``LINES`` and ``DATA`` sections, in mm."""
    map_path = Path(path)
    try:
        lines = map_path.read_text(encoding="latin-1").splitlines()
    except OSError as err:
        raise WorldError(f"{map_path}: cannot read: {err.strerror}") from None
    if not lines or not lines[0].strip().startswith("2D-Map"):
        raise WorldError(f"{map_path}: line 1: expected '2D-Map' header")
    header: dict[str, list[float]] = {}
    segments: list[tuple[float, float, float, float]] = []
    points: list[tuple[float, float]] = []
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
            key, _, rest = line.partition(":")
            if key in (
                "MinPos",
                "MaxPos",
                "LineMinPos",
                "LineMaxPos",
                "NumPoints",
                "NumLines",
                "Resolution",
            ):
                try:
                    header[key] = [float(v) for v in rest.split()]
                except ValueError:
                    raise WorldError(f"{map_path}: line {number}: bad number in {key}") from None
            continue  # Cairn:, MapInfo:, etc. carry nothing the grid needs
        try:
            values = [float(v) for v in line.split()]
        except ValueError:
            raise WorldError(f"{map_path}: line {number}: expected numbers, got {line!r}") from None
        if section == "lines":
            if len(values) != 4:
                raise WorldError(f"{map_path}: line {number}: a LINES entry needs x1 y1 x2 y2")
            segments.append(
                (values[0] / 1000, values[1] / 1000, values[2] / 1000, values[3] / 1000)
            )
        else:
            if len(values) != 2:
                raise WorldError(f"{map_path}: line {number}: a DATA entry needs x y")
            points.append((values[0] / 1000, values[1] / 1000))
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
    return World(map_path.stem, grid, resolution, origin)


# ------------------------------------------------------------------------------ dispatch


def builtin_worlds() -> list[str]:
    """Names of the worlds shipped with freelook."""
    folder = resources.files(_BUILTIN)
    return sorted(
        p.name.removesuffix(".toml") for p in folder.iterdir() if p.name.endswith(".toml")
    )


def load_world(name_or_path: str | Path) -> World:
    """A built-in world by name (``lab``, ``square``, ``eod``) or a file by its extension."""
    text = str(name_or_path)
    return dataclasses.replace(_load(text), source=text)


def _load(text: str) -> World:
    if text in builtin_worlds():
        resource = resources.files(_BUILTIN) / f"{text}.toml"
        with resources.as_file(resource) as path:
            return load_toml_world(path, source=f"built-in world {text}")
    path = Path(text)
    if not path.exists():
        raise WorldError(
            f"{text}: no such file and no built-in world ({', '.join(builtin_worlds())})"
        )
    suffix = path.suffix.lower()
    if suffix in (".yaml", ".yml"):
        return load_ros_map(path)
    if suffix == ".map":
        return load_aria_map(path)
    if suffix == ".toml":
        return load_toml_world(path)
    raise WorldError(f"{path}: unknown world format {suffix!r} (use .toml, .yaml or .map)")
