"""Colour-blob vision (Kievit-Kylar's detector) on decoded camera frames, sans-I/O.

A frame's pixels are thresholded in HSV (a hue window, minimum saturation and value), the
connected blobs of at least ``min_area`` pixels are kept, and each blob is placed on the floor:
its lowest pixel in each column is where the object stands (the floor-plane assumption), so the
camera's intrinsics (width, field of view), its mounting (height, position on the chassis) and
its pan and tilt turn a row into a range and a column into a bearing. The blob's near outline
gives the object's width across the line of sight, its top row the object's height; the centre
is put half a width behind the near outline. The model is the simulator's pinhole: column ``u``
looks along ``atan((W/2 − u − ½)/f)``, the horizon sits ``f·tan(tilt)`` below the middle row.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

__all__ = [
    "Blob",
    "CameraModel",
    "ColorTarget",
    "Sighting",
    "color_mask",
    "detect_blobs",
    "hsv",
    "locate",
]

U8 = npt.NDArray[np.uint8]
F64 = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True)
class ColorTarget:
    """What a thing to look for looks like: its hue (degrees) ± ``hue_tolerance``, a minimum
    saturation and value (0…1), and the fewest pixels (at full resolution) a blob must have."""

    hue: float
    hue_tolerance: float = 12.0
    min_saturation: float = 0.45
    min_value: float = 0.12
    min_area: int = 60

    def __post_init__(self) -> None:
        for name in ("hue", "hue_tolerance", "min_saturation", "min_value"):
            if not math.isfinite(getattr(self, name)):
                raise ValueError(f"colour target {name} is {getattr(self, name)}")
        if not 0 < self.hue_tolerance <= 90:
            raise ValueError(f"hue tolerance {self.hue_tolerance} outside (0, 90] degrees")
        if self.min_area < 1:
            raise ValueError(f"blob area {self.min_area} must be at least 1 pixel")


@dataclass(frozen=True, slots=True)
class CameraModel:
    """The driving camera as the robot's config describes it."""

    width: int  # full-resolution pixels
    height: int
    fov: float  # horizontal, rad
    mount_forward: float  # m, robot frame
    mount_left: float
    mount_height: float

    @property
    def focal(self) -> float:
        return (self.width / 2) / math.tan(self.fov / 2)


@dataclass(frozen=True, slots=True)
class Blob:
    """A connected patch of a target's colour, in full-resolution pixel coordinates."""

    area: int  # pixels at full resolution
    u_min: float
    u_max: float
    v_top: float  # the blob's highest row
    bottom_u: F64  # each column's lowest pixel: column centres …
    bottom_v: F64  # … and the bottom edge of that pixel
    top_v: F64  # each column's highest pixel's top edge


@dataclass(frozen=True, slots=True)
class Sighting:
    """A blob placed on the floor, robot frame (x forward, y left), metres."""

    x: float  # the object's estimated centre
    y: float
    range: float  # from the robot's reference point to the centre
    bearing: float  # rad, robot frame
    width: float  # across the line of sight
    height: float  # estimated from the blob's top row
    area: int


def hsv(image: U8) -> tuple[F64, F64, F64]:
    """Hue (degrees, 0…360), saturation and value (0…1) of an RGB image."""
    rgb = image.astype(np.float64) / 255.0
    r, g, b = rgb[..., 0], rgb[..., 1], rgb[..., 2]
    value = rgb.max(axis=-1)
    low = rgb.min(axis=-1)
    chroma = value - low
    saturation = np.where(value > 0, chroma / np.maximum(value, 1e-12), 0.0)
    safe = np.maximum(chroma, 1e-12)
    hue = np.where(
        value == r,
        ((g - b) / safe) % 6.0,
        np.where(value == g, (b - r) / safe + 2.0, (r - g) / safe + 4.0),
    )
    return np.where(chroma > 0, hue * 60.0, 0.0), saturation, value


def color_mask(image: U8, target: ColorTarget) -> npt.NDArray[np.bool_]:
    """Pixels of ``target``'s colour (numpy; the reference for the compiled kernel)."""
    hue, sat, val = hsv(image)
    off = np.abs((hue - target.hue + 180.0) % 360.0 - 180.0)
    return np.asarray(
        (off <= target.hue_tolerance) & (sat >= target.min_saturation) & (val >= target.min_value)
    )


@numba.njit(cache=True, nogil=True)
def _mask_kernel(
    image: U8, hue: float, tolerance: float, min_s: float, min_v: float
) -> npt.NDArray[np.bool_]:
    h, w = image.shape[0], image.shape[1]
    out = np.zeros((h, w), dtype=np.bool_)
    for i in range(h):
        for j in range(w):
            r = image[i, j, 0] / 255.0
            g = image[i, j, 1] / 255.0
            b = image[i, j, 2] / 255.0
            value = max(r, g, b)
            chroma = value - min(r, g, b)
            if chroma <= 0.0 or value < min_v or chroma / value < min_s:
                continue
            if value == r:
                x = ((g - b) / chroma) % 6.0
            elif value == g:
                x = (b - r) / chroma + 2.0
            else:
                x = (r - g) / chroma + 4.0
            off = abs((x * 60.0 - hue + 180.0) % 360.0 - 180.0)
            out[i, j] = off <= tolerance
    return out


def _mask(image: U8, target: ColorTarget) -> npt.NDArray[np.bool_]:
    return _mask_kernel(
        np.ascontiguousarray(image),
        float(target.hue),
        float(target.hue_tolerance),
        float(target.min_saturation),
        float(target.min_value),
    )


def detect_blobs(
    image: U8, target: ColorTarget, full_size: tuple[int, int] | None = None
) -> list[Blob]:
    """The blobs of ``target``'s colour in ``image`` (H×W×3 RGB), largest first.

    ``full_size`` (width, height): the camera's full resolution when ``image`` was decoded
    smaller; coordinates and areas are given at full resolution either way.
    """
    if image.ndim != 3 or image.shape[2] != 3 or image.dtype != np.uint8:
        raise ValueError(f"an RGB uint8 image is needed, got {image.dtype} {image.shape}")
    h, w = image.shape[:2]
    full_w, full_h = full_size if full_size is not None else (w, h)
    sx, sy = full_w / w, full_h / h
    # imported here: scipy.ndimage costs a robot program ~15 MB it needs only once a task looks
    from scipy import ndimage

    labels, count = ndimage.label(_mask(image, target))
    if count == 0:
        return []
    areas = np.bincount(labels.ravel(), minlength=count + 1)
    blobs = []
    for k in np.flatnonzero(areas * sx * sy >= target.min_area):
        if k == 0:
            continue
        rows, cols = np.nonzero(labels == k)
        order = np.lexsort((-rows, cols))  # per column, the lowest row first
        first = np.ones(len(cols), dtype=bool)
        first[1:] = cols[order][1:] != cols[order][:-1]
        bottom_cols = cols[order][first]
        bottom_rows = rows[order][first]
        top_rows = np.minimum.reduceat(rows[order], np.flatnonzero(first))
        blobs.append(
            Blob(
                round(float(areas[k]) * sx * sy),
                float(cols.min() * sx),
                float((cols.max() + 1) * sx),
                float(rows.min() * sy),
                (bottom_cols + 0.5) * sx,
                (bottom_rows + 1.0) * sy,
                top_rows * sy,
            )
        )
    blobs.sort(key=lambda b: -b.area)
    return blobs


def locate(blob: Blob, camera: CameraModel, pan: float, tilt: float) -> Sighting | None:
    """Where a blob's object stands (robot frame), or None when its bottom is not below the
    horizon (not on the floor as far as the camera can tell) or it touches the frame's edge
    at the bottom (its foot is out of view: the range would be wrong)."""
    f = camera.focal
    horizon = camera.height / 2 + f * math.tan(tilt)
    below = blob.bottom_v - horizon
    keep = below > 1.0
    if not keep.any() or float(blob.bottom_v.max()) >= camera.height - 0.5:
        return None
    u = blob.bottom_u[keep]
    forward = f * camera.mount_height / below[keep]
    left = forward * (camera.width / 2 - u) / f
    # the near outline in the camera's frame, turned by the pan, moved to the mount
    c, s = math.cos(pan), math.sin(pan)
    px = camera.mount_forward + c * forward - s * left
    py = camera.mount_left + s * forward + c * left
    ex, ey = float(px.mean()), float(py.mean())
    # width across the line of sight, from the outline's extreme columns
    angles = np.arctan2(py - camera.mount_left, px - camera.mount_forward)
    near = float(np.hypot(ex - camera.mount_forward, ey - camera.mount_left))
    width = near * float(angles.max() - angles.min()) if len(angles) > 1 else 0.0
    ray = math.atan2(ey - camera.mount_left, ex - camera.mount_forward)
    cx = ex + math.cos(ray) * width / 2
    cy = ey + math.sin(ray) * width / 2
    # each column's height on the floor-plane range of its own foot
    heights = camera.mount_height * (blob.bottom_v - blob.top_v)[keep] / below[keep]
    height = float(np.median(heights))
    return Sighting(
        cx,
        cy,
        math.hypot(cx, cy),
        math.atan2(cy, cx),
        width,
        max(0.0, height),
        blob.area,
    )
