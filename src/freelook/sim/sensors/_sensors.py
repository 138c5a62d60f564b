"""Simulated sensors: laser, sonar rings, rate gyro, wheel encoders. Noise from injected RNGs."""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

from freelook.config import GyroConfig, LaserConfig, SonarConfig
from freelook.maps import World, cast_rays, cast_rays_from

__all__ = ["Laser", "RateGyro", "SonarRing", "WheelEncoders"]

_NO_NOISE = np.zeros(0)


@numba.njit(cache=True, nogil=True)
def _count_below(ranges: npt.NDArray[np.float64], limit: float) -> int:
    """How many readings are below ``limit`` (returned something)."""
    count = 0
    for r in ranges:
        if r < limit:
            count += 1
    return count


@numba.njit(cache=True, nogil=True)
def _noisy_clip(
    ranges: npt.NDArray[np.float64],
    limit: float,
    noise: npt.NDArray[np.float64],
    lo: float,
    hi: float,
) -> None:
    """Add ``noise`` in order to the readings below ``limit`` (none when it is empty), then
    clip every reading to [lo, hi]: the arithmetic of a masked add and ``np.clip``."""
    k = 0
    for i in range(ranges.shape[0]):
        r = ranges[i]
        if noise.shape[0] > 0 and r < limit:
            r = r + noise[k]
            k += 1
        ranges[i] = min(max(r, lo), hi)


class Laser:
    """A planar scanner at its mount offset: ``beams`` evenly over ``fov`` centred ahead."""

    def __init__(self, config: LaserConfig, world: World, rng: np.random.Generator) -> None:
        self.config = config
        self.world = world
        self.rng = rng
        half = math.radians(config.fov_deg) / 2
        self.angles = np.linspace(-half, half, config.beams)
        self._grid = world.obstacles()
        self._world_angles = np.empty(config.beams)

    @property
    def angle_increment(self) -> float:
        return float(self.angles[1] - self.angles[0])

    def scan(self, x: float, y: float, theta: float) -> npt.NDArray[np.float64]:
        """Ranges for the robot at (x, y, θ); ``range_max`` where nothing is hit."""
        cfg = self.config
        c, s = math.cos(theta), math.sin(theta)
        lx = x + c * cfg.mount_forward - s * cfg.mount_left
        ly = y + s * cfg.mount_forward + c * cfg.mount_left
        np.add(self.angles, theta, out=self._world_angles)
        ranges = cast_rays(
            self._grid,
            self.world.origin,
            self.world.resolution,
            lx,
            ly,
            self._world_angles,
            cfg.range_max,
            np.empty(self.angles.shape[0]),
        )
        noise = _NO_NOISE
        if cfg.noise_std > 0:
            noise = self.rng.normal(0.0, cfg.noise_std, _count_below(ranges, cfg.range_max))
        _noisy_clip(ranges, cfg.range_max, noise, cfg.range_min, cfg.range_max)
        return ranges


class SonarRing:
    """Front and rear rings; each transducer returns the nearest echo within its cone."""

    RAYS_PER_CONE = 5

    def __init__(self, config: SonarConfig, world: World, rng: np.random.Generator) -> None:
        self.config = config
        self.world = world
        self.rng = rng
        self.bearings = np.radians(np.array(config.front_deg + config.rear_deg, dtype=np.float64))
        # transducers sit on a ring of the configured radius around the centre
        self.mount_x = config.ring_radius * np.cos(self.bearings)
        self.mount_y = config.ring_radius * np.sin(self.bearings)
        half = math.radians(config.cone_deg) / 2
        self._offsets = np.linspace(-half, half, self.RAYS_PER_CONE)
        self._grid = world.obstacles()

    def read(self, x: float, y: float, theta: float) -> npt.NDArray[np.float64]:
        """Range per transducer (front ring first), ``range_max`` when nothing echoes."""
        cfg = self.config
        c, s = math.cos(theta), math.sin(theta)
        n, m = len(self.bearings), self.RAYS_PER_CONE
        sx = np.repeat(x + c * self.mount_x - s * self.mount_y, m)
        sy = np.repeat(y + s * self.mount_x + c * self.mount_y, m)
        angles = (theta + self.bearings)[:, None] + self._offsets[None, :]
        rays = cast_rays_from(
            self._grid,
            self.world.origin,
            self.world.resolution,
            sx,
            sy,
            angles.ravel(),
            cfg.range_max,
        )
        out: npt.NDArray[np.float64] = rays.reshape(n, m).min(axis=1)
        noise = _NO_NOISE
        if cfg.noise_std > 0:
            noise = self.rng.normal(0.0, cfg.noise_std, _count_below(out, cfg.range_max))
        _noisy_clip(out, cfg.range_max, noise, 0.0, cfg.range_max)
        return out


class RateGyro:
    """MEMS rate gyro: turn-on bias, bias random walk, angle random walk, scale-factor error."""

    def __init__(self, config: GyroConfig, rng: np.random.Generator) -> None:
        self.config = config
        self.rng = rng
        self.bias = math.radians(rng.uniform(-config.turn_on_bias_deg_s, config.turn_on_bias_deg_s))
        self.scale = 1.0 + rng.uniform(-config.scale_factor_error, config.scale_factor_error)
        # ARW in rad/√s and bias random-walk intensity chosen so the bias drifts by about the
        # bias-instability figure over an hour
        self._arw = math.radians(config.angle_random_walk_deg_sqrt_h) / 60.0
        self._bias_walk = math.radians(config.bias_instability_deg_h) / 3600.0 / math.sqrt(3600.0)

    def measure(self, true_rate: float, dt: float) -> float:
        """One sample averaged over ``dt`` seconds (rad/s); advances the bias state."""
        if dt <= 0:
            raise ValueError(f"gyro sample period must be > 0, got {dt}")
        self.bias += self._bias_walk * math.sqrt(dt) * float(self.rng.standard_normal())
        noise = self._arw / math.sqrt(dt) * float(self.rng.standard_normal())
        return self.scale * true_rate + self.bias + noise


class WheelEncoders:
    """Quadrature encoders: cumulative wheel-surface distance → integer counts."""

    def __init__(self, counts_per_rev: int, wheel_diameter: float) -> None:
        self.counts_per_rev = counts_per_rev
        self.wheel_diameter = wheel_diameter
        self.metres_per_count = math.pi * wheel_diameter / counts_per_rev

    def update(self, left_distance: float, right_distance: float) -> tuple[int, int]:
        """Counts for cumulative distances (m), truncated toward zero like a counter."""
        return (
            int(left_distance / self.metres_per_count),
            int(right_distance / self.metres_per_count),
        )
