"""A camera fixed to a link of the arm (an arm camera, TAROS's stereo pair near the gripper).

Its pose is the link's, from the forward kinematics of the arm's current joints, composed with
the camera's mount offset and orientation from the config. The renderer casts one ray per
column from (x, y, height, heading, tilt): the camera's optical axis gives the heading and the
tilt (its elevation); roll about the optical axis is not rendered (the image stays level), and
the tilt is held within ±60° (the renderer shears the image for tilt rather than rotating it).
A stereo pair renders both eyes, ``stereo_baseline`` apart along the camera's left axis, from
the same joint state, into one side-by-side frame (left eye in the left half).
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.config import StreamCameraConfig
from freelook.maps import World
from freelook.sim.camera._camera import _object_table
from freelook.sim.camera._render import render_frame

__all__ = ["MAX_TILT", "LinkCamera", "mount_transform"]

F64 = npt.NDArray[np.float64]
MAX_TILT = math.radians(60.0)
_MIN_HEIGHT = 0.01  # m: a camera at or below the floor renders from just above it


def mount_transform(offset: tuple[float, float, float], rpy_deg: tuple[float, float, float]) -> F64:
    """Link frame → camera frame (4×4): URDF's fixed-axis roll, pitch, yaw, then the offset."""
    r, p, y = (math.radians(a) for a in rpy_deg)
    cr, sr, cp, sp, cy, sy = (
        math.cos(r),
        math.sin(r),
        math.cos(p),
        math.sin(p),
        math.cos(y),
        math.sin(y),
    )
    out = np.eye(4)
    out[:3, :3] = [
        [cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr],
        [sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr],
        [-sp, cp * sr, cp * cr],
    ]
    out[:3, 3] = offset
    return out


class LinkCamera:
    """Renders what a camera fixed to an arm link sees, given that link's frame in the world."""

    def __init__(self, config: StreamCameraConfig, world: World) -> None:
        self.config = config
        self.world = world
        self.fov = math.radians(config.fov_deg)
        self.focal = (config.width / 2) / math.tan(self.fov / 2)
        self.mount = mount_transform(config.offset, config.rpy_deg)
        self._walls = np.ascontiguousarray(world.occupancy)
        self._objects = _object_table(world)
        self._frame = np.zeros((config.height, config.frame_width, 3), dtype=np.uint8)
        # each eye is drawn into a contiguous buffer (one compiled kernel for every camera)
        self._eye = np.zeros((config.height, config.width, 3), dtype=np.uint8)

    def move_object(self, index: int, x: float, y: float, yaw: float, shown: bool) -> None:
        """Draw object ``index`` (the world's order) at (x, y, yaw) from now on; a hidden one
        (lifted off the floor: the renderer draws only what stands on it) gets no height."""
        row = self._objects[index]
        row[1], row[2], row[5] = x, y, yaw
        row[7] = self.world.objects[index].height if shown else 0.0

    def eyes(self, link_in_world: F64) -> list[tuple[float, float, float, float, float]]:
        """Each eye's (x, y, z, heading, tilt) in the world for the link's 4×4 frame: one for a
        mono camera, left then right for a stereo pair."""
        cam = np.asarray(link_in_world, dtype=np.float64) @ self.mount
        axis = cam[:3, 0]
        heading = math.atan2(axis[1], axis[0])
        tilt = math.atan2(axis[2], math.hypot(axis[0], axis[1]))
        tilt = min(max(tilt, -MAX_TILT), MAX_TILT)
        baseline = self.config.stereo_baseline
        sides = (0.0,) if baseline is None else (0.5 * baseline, -0.5 * baseline)
        left = cam[:3, 1]
        return [
            (*(float(c) for c in cam[:3, 3] + side * left), heading, tilt)  # type: ignore[misc]
            for side in sides
        ]

    def render(self, link_in_world: F64) -> npt.NDArray[np.uint8]:
        """The frame (H×W×3, both eyes side by side for a pair) at this link pose; a new array."""
        width = self.config.width
        w = self.world
        for i, (x, y, z, heading, tilt) in enumerate(self.eyes(link_in_world)):
            render_frame(
                self._eye,
                self._walls,
                w.origin[0],
                w.origin[1],
                w.resolution,
                w.wall_height,
                x,
                y,
                min(max(z, _MIN_HEIGHT), w.wall_height - _MIN_HEIGHT),
                heading,
                tilt,
                self.fov,
                self._objects,
            )
            self._frame[:, i * width : (i + 1) * width] = self._eye
        return self._frame.copy()

    def project(
        self, point: tuple[float, float, float], link_in_world: F64, eye: int = 0
    ) -> tuple[float, float] | None:
        """Pixel (u, v) in ``eye``'s image (0 mono or left, 1 right) where a world point
        appears, as the renderer draws it; None if behind the camera or outside the image."""
        x, y, z, heading, tilt = self.eyes(link_in_world)[eye]
        dx, dy = point[0] - x, point[1] - y
        forward = math.cos(heading) * dx + math.sin(heading) * dy
        left = -math.sin(heading) * dx + math.cos(heading) * dy
        if forward <= 1e-6:
            return None
        width, height = self.config.width, self.config.height
        u = width / 2 - 0.5 - self.focal * left / forward
        horizon = height / 2 + self.focal * math.tan(tilt)
        v = horizon - self.focal * (point[2] - z) / forward - 0.5
        if not (0 <= u < width and 0 <= v < height):
            return None
        return u, v
