"""The simulated pan(-tilt) camera: first-person frames, projection of world points, JPEG."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from freelook.config import CameraConfig, PanTiltConfig
from freelook.maps import World
from freelook.sim.camera._render import render_frame

__all__ = ["Camera"]


def _object_table(world: World) -> npt.NDArray[np.float64]:
    rows = [
        (
            1.0 if o.shape == "cylinder" else 0.0,
            o.x,
            o.y,
            o.size_x,
            o.size_y,
            o.yaw,
            o.radius,
            o.height,
            *o.color,
        )
        for o in world.objects
    ]
    return np.array(rows, dtype=np.float64).reshape(-1, 11)


class Camera:
    """Renders what the camera on the pan-tilt unit sees, from the robot's pose."""

    def __init__(self, config: CameraConfig, pan_tilt: PanTiltConfig, world: World) -> None:
        self.config = config
        self.pan_tilt = pan_tilt
        self.world = world
        self.fov = math.radians(config.fov_deg)
        self.focal = (config.width / 2) / math.tan(self.fov / 2)
        self._walls = np.ascontiguousarray(world.occupancy)
        self._objects = _object_table(world)
        self._frame = np.zeros((config.height, config.width, 3), dtype=np.uint8)
        #: the scene's light: every pixel's colour is scaled by it (1: as modelled)
        self.brightness = 1.0
        #: the light's colour against the camera's fixed white balance, a gain per channel
        #: (red, green, blue): a warm or cold light shifts every colour's hue
        self.tint = (1.0, 1.0, 1.0)
        #: the sensor's noise, σ in 8-bit levels per pixel and channel (0: none)
        self.noise = 0.0
        #: where the noise comes from (seeded by the simulator)
        self.rng = np.random.default_rng(0)
        self._gains = (1.0, 1.0, 1.0)
        self._luts = np.tile(np.arange(256, dtype=np.uint8), (3, 1))

    def move_object(self, index: int, x: float, y: float, yaw: float, shown: bool) -> None:
        """Draw object ``index`` (the world's order) at (x, y, yaw) from now on; a hidden one
        (lifted off the floor, which the renderer cannot draw) is given no height."""
        row = self._objects[index]
        row[1], row[2], row[5] = x, y, yaw
        row[7] = self.world.objects[index].height if shown else 0.0

    def camera_pose(
        self, x: float, y: float, theta: float, pan: float, lateral: float = 0.0
    ) -> tuple[float, float, float]:
        """Camera (x, y, heading) for the robot at (x, y, θ) and pan φ; ``lateral`` shifts left."""
        pt = self.pan_tilt
        c, s = math.cos(theta), math.sin(theta)
        cx = x + c * pt.mount_forward - s * pt.mount_left
        cy = y + s * pt.mount_forward + c * pt.mount_left
        psi = theta + pan
        return cx - math.sin(psi) * lateral, cy + math.cos(psi) * lateral, psi

    def render(
        self, x: float, y: float, theta: float, pan: float = 0.0, tilt: float = 0.0
    ) -> npt.NDArray[np.uint8]:
        """An RGB frame (H×W×3, uint8) for the robot pose, pan and tilt. Returns a new array."""
        cx, cy, psi = self.camera_pose(x, y, theta, pan)
        self._render_into(self._frame, cx, cy, psi, tilt)
        return self._frame.copy()

    def render_stereo(
        self, x: float, y: float, theta: float, pan: float = 0.0, tilt: float = 0.0
    ) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint8]]:
        """Left and right frames of a stereo pair (``stereo_baseline``, default 65 mm)."""
        baseline = self.config.stereo_baseline or 0.065
        frames = []
        for side in (0.5, -0.5):
            cx, cy, psi = self.camera_pose(x, y, theta, pan, side * baseline)
            frame = np.empty_like(self._frame)
            self._render_into(frame, cx, cy, psi, tilt)
            frames.append(frame)
        return frames[0], frames[1]

    def _render_into(
        self, out: npt.NDArray[np.uint8], cx: float, cy: float, psi: float, tilt: float
    ) -> None:
        w = self.world
        render_frame(
            out,
            self._walls,
            w.origin[0],
            w.origin[1],
            w.resolution,
            w.wall_height,
            cx,
            cy,
            self.pan_tilt.mount_height,
            psi,
            tilt,
            self.fov,
            self._objects,
        )
        self._light(out)

    def _light(self, out: npt.NDArray[np.uint8]) -> None:
        """The scene's light (brightness times the tint, per channel) and the sensor's noise
        on a rendered frame, in place."""
        gains = tuple(min(max(self.brightness * t, 0.0), 4.0) for t in self.tint)
        if gains != (1.0, 1.0, 1.0):
            if gains != self._gains:
                self._gains = (gains[0], gains[1], gains[2])
                levels = np.arange(256, dtype=np.float64)
                self._luts = np.stack(
                    [np.minimum(levels * g, 255.0).astype(np.uint8) for g in gains]
                )
            for c in range(3):
                out[..., c] = self._luts[c][out[..., c]]
        if self.noise > 0.0:
            noisy = out + self.rng.normal(0.0, self.noise, out.shape)
            np.clip(np.rint(noisy), 0, 255, out=noisy)
            out[...] = noisy.astype(np.uint8)

    def project(
        self,
        px: float,
        py: float,
        pz: float,
        x: float,
        y: float,
        theta: float,
        pan: float = 0.0,
        tilt: float = 0.0,
    ) -> tuple[float, float] | None:
        """Pixel (u, v) where world point (px, py, pz) appears, or None if behind or outside."""
        cx, cy, psi = self.camera_pose(x, y, theta, pan)
        dx, dy = px - cx, py - cy
        forward = math.cos(psi) * dx + math.sin(psi) * dy
        left = -math.sin(psi) * dx + math.cos(psi) * dy
        if forward <= 1e-6:
            return None
        width, height = self.config.width, self.config.height
        # the renderer maps column u to the ray angle atan((W/2 − u − 0.5)/f)
        u = width / 2 - 0.5 - self.focal * left / forward
        perp = forward
        horizon = height / 2 + self.focal * math.tan(tilt)
        v = horizon - self.focal * (pz - self.pan_tilt.mount_height) / perp - 0.5
        if not (0 <= u < width and 0 <= v < height):
            return None
        return u, v
