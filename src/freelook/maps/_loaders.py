"""World loaders: freelook's TOML worlds, ROS ``map_server`` YAML + PGM, and the choice by name
or extension among them and MobileRobots ARIA ``.map`` (:mod:`._aria`).

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
from freelook.files import ensure_regular, read_regular
from freelook.maps._aria import load_aria_map
from freelook.maps._limits import MAX_CELLS, MAX_IMAGE_BYTES, MAX_TEXT_BYTES
from freelook.maps._model import World, WorldObject
from freelook.maps._raster import draw_segment

__all__ = [
    "builtin_worlds",
    "load_aria_map",
    "load_ros_map",
    "load_toml_world",
    "load_world",
    "world_of_occupancy",
]

_BUILTIN = "freelook.maps.builtin"


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
    temperature: float | None = Field(default=None, ge=-273.15, le=3000.0, allow_inf_nan=False)


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
                temperature=obj.temperature,
            )
        )
    start = (spec.start[0], spec.start[1], math.radians(spec.start[2]))
    grid.setflags(write=False)
    return World(
        spec.name,
        grid,
        spec.resolution,
        spec.origin,
        tuple(objects),
        spec.wall_height,
        start,
        start_from="the world's start" if "start" in spec.model_fields_set else "",
    )


def load_toml_world(path: str | Path, source: str | None = None) -> World:
    """A freelook world: walls as segments plus objects, rasterised at load."""
    name = source or str(path)
    try:
        data = tomllib.loads(read_regular(path, MAX_TEXT_BYTES).decode("utf-8"))
    except OSError as err:
        raise WorldError(f"{name}: cannot read: {err.strerror}") from None
    except UnicodeDecodeError:
        raise WorldError(f"{name}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as err:
        raise WorldError(f"{name}: not valid TOML: {err}") from None
    except RecursionError:
        raise WorldError(f"{name}: nested too deep") from None
    try:
        spec = _WorldSpec.model_validate(data)
    except ValidationError as err:
        first = err.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        raise WorldError(f"{name}: {field}: {first['msg']}") from None
    return _toml_world(spec, name)


# ------------------------------------------------------------------------------ ROS map_server

_MAP_MODES = ("trinary", "scale", "raw")


def _read_pgm(path: Path) -> npt.NDArray[np.float64]:
    """A PGM image (P5 binary or P2 ASCII) as values scaled to 0…1 (0 black, 1 white)."""
    try:
        data = read_regular(path, MAX_IMAGE_BYTES)
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


def _read_image(
    path: Path,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64] | None]:
    """(mean of the colour channels, alpha or None), both 0…1, in image row order."""
    if path.suffix.lower() == ".pgm":
        return _read_pgm(path), None
    from PIL import Image, UnidentifiedImageError

    try:
        ensure_regular(path)
        with Image.open(path) as image:
            width, height = image.size
            if width * height > MAX_CELLS:
                raise WorldError(f"{path}: image of {width}×{height} exceeds {MAX_CELLS} cells")
            has_alpha = "A" in image.getbands() or "transparency" in image.info
            pixels = np.asarray(image.convert("RGBA" if has_alpha else "RGB"), dtype=np.float64)
    except FileNotFoundError:
        raise WorldError(f"{path}: cannot read image: no such file") from None
    except (OSError, UnidentifiedImageError) as err:
        raise WorldError(f"{path}: cannot read image: {err}") from None
    shade = pixels[..., :3].mean(axis=2) / 255.0
    alpha = pixels[..., 3] / 255.0 if has_alpha else None
    return shade, alpha


def _map_values(
    shade: npt.NDArray[np.float64],
    alpha: npt.NDArray[np.float64] | None,
    mode: str,
    negate: bool,
    free_thresh: float,
    occupied_thresh: float,
) -> npt.NDArray[np.int8]:
    """The occupancy values map_server publishes: 100 occupied, 0 free, −1 unknown, 1…99 the
    scale mode's in-between (Nav2's ``nav2_map_server`` map_io, ROS 1 ``map_server``)."""
    values = np.full(shade.shape, -1, dtype=np.int8)
    if mode == "raw":  # the shade itself, before negation; above 100 is unknown
        raw = np.round(shade * 255.0)
        inside = raw <= 100
        values[inside] = raw[inside].astype(np.int8)
        return values
    if mode == "trinary" and alpha is not None:  # alpha averaged in with the colours
        shade = (3.0 * shade + alpha) / 4.0
    occ = shade if negate else 1.0 - shade
    occupied = occ > occupied_thresh
    free = occ < free_thresh
    if mode == "scale":
        between = ~occupied & ~free
        ratio = (occ - free_thresh) / max(occupied_thresh - free_thresh, 1e-12)
        values[between] = np.rint(ratio[between] * 100.0).astype(np.int8)
        if alpha is not None:
            opaque = alpha >= 1.0
            occupied &= opaque
            free &= opaque
            values[~opaque] = -1
    values[occupied] = 100
    values[free] = 0
    return values


def _rotated(
    values: npt.NDArray[np.int8], resolution: float, origin: tuple[float, float], yaw: float
) -> tuple[npt.NDArray[np.int8], tuple[float, float]]:
    """A grid (y-up) whose lower-left corner sits at ``origin`` turned by ``yaw``, resampled
    onto world axes (nearest cell; outside the turned grid is unknown)."""
    rows, cols = values.shape
    c, s = math.cos(yaw), math.sin(yaw)
    w, h = cols * resolution, rows * resolution
    cx = [origin[0] + c * u - s * v for u, v in ((0, 0), (w, 0), (0, h), (w, h))]
    cy = [origin[1] + s * u + c * v for u, v in ((0, 0), (w, 0), (0, h), (w, h))]
    x0, y0 = min(cx), min(cy)
    out_cols = math.ceil((max(cx) - x0) / resolution - 1e-9)
    out_rows = math.ceil((max(cy) - y0) / resolution - 1e-9)
    if out_rows * out_cols > MAX_CELLS:
        raise WorldError(f"turned map of {out_rows}×{out_cols} cells exceeds {MAX_CELLS}")
    xs = x0 + (np.arange(out_cols) + 0.5) * resolution - origin[0]
    ys = y0 + (np.arange(out_rows) + 0.5) * resolution - origin[1]
    gx, gy = np.meshgrid(xs, ys)
    j = np.floor((c * gx + s * gy) / resolution).astype(np.int64)
    i = np.floor((-s * gx + c * gy) / resolution).astype(np.int64)
    inside = (i >= 0) & (i < rows) & (j >= 0) & (j < cols)
    out = np.full((out_rows, out_cols), -1, dtype=np.int8)
    out[inside] = values[i[inside], j[inside]]
    return out, (x0, y0)


def load_ros_map(path: str | Path) -> World:
    """A ROS ``map_server`` map: YAML (image, resolution, origin [x, y, yaw], negate,
    occupied_thresh, free_thresh, mode) and its image, read as map_server reads them.

    Cells map_server publishes as occupied (100) are walls; unknown (−1) and the scale mode's
    in-between values are neither free nor walls (``World.unknown``). A turned origin (yaw ≠ 0)
    is resampled onto the world's axes.
    """
    yaml_path = Path(path)
    try:
        meta = yaml.safe_load(read_regular(yaml_path, MAX_TEXT_BYTES).decode("utf-8"))
    except UnicodeDecodeError:
        raise WorldError(f"{yaml_path}: not UTF-8 text") from None
    except RecursionError:
        raise WorldError(f"{yaml_path}: nested too deep") from None
    except OSError as err:
        raise WorldError(f"{yaml_path}: cannot read: {err.strerror}") from None
    except yaml.YAMLError as err:
        raise WorldError(f"{yaml_path}: not valid YAML: {err}") from None
    if not isinstance(meta, dict):
        raise WorldError(f"{yaml_path}: expected a mapping of map_server keys")
    for key in ("image", "resolution", "origin", "negate", "occupied_thresh", "free_thresh"):
        if key not in meta:
            raise WorldError(f"{yaml_path}: {key}: missing required key (map_server needs it)")
    resolution = _number(yaml_path, meta, "resolution")
    occupied = _number(yaml_path, meta, "occupied_thresh")
    free = _number(yaml_path, meta, "free_thresh")
    origin = meta["origin"]
    if (
        not isinstance(origin, list)
        or len(origin) != 3
        or not all(isinstance(v, int | float) and not isinstance(v, bool) for v in origin)
    ):
        raise WorldError(f"{yaml_path}: origin: expected [x, y, yaw], got {origin!r}")
    negate = meta["negate"]
    if negate not in (0, 1) or not isinstance(negate, int | bool):
        raise WorldError(f"{yaml_path}: negate: expected 0 or 1, got {negate!r}")
    mode = str(meta.get("mode", "trinary")).lower()
    if mode not in _MAP_MODES:
        raise WorldError(f"{yaml_path}: mode: expected trinary, scale or raw, got {mode!r}")
    if resolution <= 0:
        raise WorldError(f"{yaml_path}: resolution: expected > 0, got {resolution}")
    if not 0.0 <= free <= occupied <= 1.0:
        raise WorldError(
            f"{yaml_path}: free_thresh {free} and occupied_thresh {occupied}: expected "
            "0 ≤ free_thresh ≤ occupied_thresh ≤ 1"
        )
    image = Path(str(meta["image"]))
    shade, alpha = _read_image(image if image.is_absolute() else yaml_path.parent / image)
    values = np.flipud(_map_values(shade, alpha, mode, bool(negate), free, occupied))
    corner = (float(origin[0]), float(origin[1]))
    if float(origin[2]) != 0.0:
        try:
            values, corner = _rotated(values, resolution, corner, float(origin[2]))
        except WorldError as err:
            raise WorldError(f"{yaml_path}: {err}") from None
    grid = np.ascontiguousarray(values == 100)
    unknown = np.ascontiguousarray((values != 0) & (values != 100))
    grid.setflags(write=False)
    unknown.setflags(write=False)
    return World(yaml_path.stem, grid, resolution, corner, unknown=unknown)


#: a ``nav_msgs/OccupancyGrid`` cell at or above this is a wall, at or below FREE_AT free (as
#: map_server's default thresholds 0.65 and 0.25 make of a probability), between: unknown
OCCUPIED_AT, FREE_AT = 65, 25


def world_of_occupancy(
    name: str,
    values: npt.NDArray[np.int8],
    resolution: float,
    origin: tuple[float, float, float],
) -> World:
    """A ROS occupancy grid as a world: ``values`` (rows, cols) as ``OccupancyGrid.data``
    lays them (row 0 at the origin, rows along its y), −1 unknown, 0…100 the chance of a
    wall; ``origin`` the corner of cell (0, 0) and the grid's yaw (a turned grid is resampled
    onto the world's axes). Raises :class:`WorldError` on a resolution, origin or cell value
    that is no map's, before anything is allocated from them."""
    if not (math.isfinite(resolution) and 1e-4 <= resolution <= 100.0):
        raise WorldError(f"{name}: resolution {resolution} m: expected 0.0001…100")
    if not all(math.isfinite(v) and abs(v) <= 1e6 for v in origin):
        raise WorldError(f"{name}: origin {origin}: expected finite numbers within ±1e6 m")
    rows, cols = values.shape
    if rows < 1 or cols < 1 or rows * cols > MAX_CELLS:
        raise WorldError(f"{name}: {rows}×{cols} cells: expected 1…{MAX_CELLS}")
    if values.size and (int(values.min()) < -1 or int(values.max()) > 100):
        raise WorldError(f"{name}: cell values {values.min()}…{values.max()}: expected −1…100")
    trinary = np.where(values >= OCCUPIED_AT, 100, np.where(values >= 0, 0, -1)).astype(np.int8)
    trinary[(values > FREE_AT) & (values < OCCUPIED_AT)] = -1
    corner = (float(origin[0]), float(origin[1]))
    if origin[2] != 0.0:
        try:
            trinary, corner = _rotated(trinary, resolution, corner, float(origin[2]))
        except WorldError as err:
            raise WorldError(f"{name}: {err}") from None
    grid = np.ascontiguousarray(trinary == 100)
    unknown = np.ascontiguousarray(trinary == -1)
    grid.setflags(write=False)
    unknown.setflags(write=False)
    return World(name, grid, resolution, corner, unknown=unknown, source=name)


def _number(path: Path, meta: dict[str, object], key: str) -> float:
    value = meta[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise WorldError(f"{path}: {key}: expected a number, got {value!r}")
    return float(value)


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
