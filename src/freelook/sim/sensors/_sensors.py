"""Simulated sensors: laser, sonar rings, rate gyro, wheel encoders. Noise from injected RNGs."""

from __future__ import annotations

import math
import struct

import numba
import numpy as np
import numpy.typing as npt

from freelook.config import GyroConfig, LaserConfig, PhysicalTruth, SonarConfig
from freelook.maps import (
    World,
    cast_beams_from,
    cast_fan,
    clearance_of,
    enclosed_of,
    unit_vectors,
)

__all__ = [
    "Laser",
    "NormalsAhead",
    "RateGyro",
    "SonarRing",
    "WheelEncoders",
    "laser_params",
    "laser_scan",
]

_POSE = struct.Struct("3d")


class NormalsAhead:
    """Standard normals drawn ahead from one generator per row, read in order by a kernel.

    Drawing a generator's normals in blocks gives the numbers one-at-a-time draws would, so a
    kernel reading a row in order sees what drawing as it goes would have given. :meth:`fit`
    (one thread) makes room; :meth:`top_up` (one thread per disjoint set of rows) draws.
    """

    def __init__(self, rngs: list[np.random.Generator], active: bool) -> None:
        self.rngs = rngs
        self.active = active
        self.rows = np.zeros((len(rngs), 0))
        #: where each row's next unread number is (the kernels advance it)
        self.at = np.zeros(len(rngs), dtype=np.int64)

    def fit(self, need: int) -> None:
        """Room for ``need`` unread numbers in every row (kept unread numbers move along)."""
        if not self.active or self.rows.shape[1] >= need:
            return
        grown = np.empty((len(self.rngs), max(4 * need, 4096)))
        for i, at in enumerate(self.at.tolist()):
            kept = self.rows.shape[1] - at
            grown[i, :kept] = self.rows[i, at:]
            self.at[i] = 0
            self.rngs[i].standard_normal(out=grown[i, kept:])
        self.rows = grown

    def top_up(self, rows: range, need: int) -> None:
        """Every row of ``rows`` with ``need`` unread numbers (its unread ones first)."""
        if not self.active:
            return
        width = self.rows.shape[1]
        for i in rows:
            at = int(self.at[i])
            if width - at < need:
                kept = width - at
                self.rows[i, :kept] = self.rows[i, at:]
                self.at[i] = 0
                self.rngs[i].standard_normal(out=self.rows[i, kept:])

    def ready(self, need: int) -> tuple[npt.NDArray[np.float64], int]:
        """One stream's row with ``need`` unread numbers, and where they start (a sensor's
        kernel reads from there and its caller stores where it stopped in ``at[0]``)."""
        at: int = self.at.item(0)
        if self.active and self.rows.shape[1] - at < need:
            self.fit(need)
            self.top_up(range(1), need)
            at = self.at.item(0)
        return self.rows[0], at


class _LastCast:
    """A sensor's exact returns from the last pose it cast from.

    A robot standing still (held at a wall, stopped by its watchdog: a third of the scans of
    a reckless trial) is cast from once; each scan draws its noise afresh, so the readings
    are those of casting every time.
    """

    def __init__(self, size: int) -> None:
        self.ranges = np.empty(size)
        self._pose = b""

    def stale(self, pose: tuple[float, float, float]) -> bool:
        """Whether ``pose`` differs from the last one asked about (then it becomes that one
        and ``ranges`` must be cast again). Compared as bytes: −0.0 is not 0.0 here."""
        key = _POSE.pack(*pose)
        if key == self._pose:
            return False
        self._pose = key
        return True


def laser_params(config: LaserConfig) -> tuple[float, float, float, float, float]:
    """What :func:`laser_scan` reads of a laser's description, in its order."""
    return (
        config.mount_forward,
        config.mount_left,
        config.range_min,
        config.range_max,
        config.noise_std,
    )


def laser_origin(
    pose: tuple[float, float, float], laser: tuple[float, float, float, float, float]
) -> tuple[float, float]:
    """Where the laser's beams start: its mount (``laser``, see :func:`laser_scan`) on the
    robot at ``pose`` (x, y, θ). Compiled callers inline it; Python gets the same numbers."""
    x, y, theta = pose
    mount_forward, mount_left = laser[0], laser[1]
    c = math.cos(theta)
    s = math.sin(theta)
    return x + c * mount_forward - s * mount_left, y + s * mount_forward + c * mount_left


_laser_origin = numba.njit(cache=True, nogil=True)(laser_origin)


@numba.njit(cache=True, nogil=True)
def _laser_noise(
    cast: npt.NDArray[np.float64],
    laser: tuple[float, float, float, float, float],
    normals: npt.NDArray[np.float64],
    at: int,
    out: npt.NDArray[np.float64],
) -> int:
    """The exact returns ``cast`` as the laser reads them, into ``out`` (may be ``cast``):
    each return plus ``noise_std`` times the next of ``normals`` from ``at``, clipped to
    [range_min, range_max] (``laser``: see :func:`laser_scan`). Returns the next unread
    normal."""
    _, _, range_min, range_max, noise_std = laser
    for k in range(out.shape[0]):
        r = cast[k]
        if noise_std > 0 and r < range_max:
            r = r + noise_std * normals[at]
            at += 1
        out[k] = min(max(r, range_min), range_max)
    return at


@numba.njit(cache=True, nogil=True)
def laser_scan(
    clearance: npt.NDArray[np.float32],
    world: tuple[float, float, float],
    pose: tuple[float, float, float],
    laser: tuple[float, float, float, float, float],
    units: npt.NDArray[np.float64],
    normals: npt.NDArray[np.float64],
    at: int,
    out: npt.NDArray[np.float64],
) -> int:
    """One scan into ``out``: the beams (their unit vectors ``units`` in the robot's frame)
    from the laser's mount on the robot at ``pose`` (x, y, θ) in the ``world`` grid (origin x,
    y, resolution; ``clearance`` its :func:`~freelook.maps.clearance_of`), each return plus
    ``noise_std`` times the next of ``normals`` from ``at``, clipped to [range_min, range_max]
    (``laser``: mount forward, mount left, range_min, range_max, noise_std). Returns the next
    unread normal. Compiled, so a fleet's kernel scans with it; :class:`Laser` makes the same
    numbers from :func:`~freelook.maps.cast_fan` and :func:`_laser_noise`."""
    lx, ly = _laser_origin(pose, laser)
    cast_fan(clearance, world, (lx, ly, pose[2]), units, laser[3], out)
    return _laser_noise(out, laser, normals, at, out)


#: the most an outlier of the error model reads short of the true return, as a share of it
OUTLIER_SHORTFALL = 0.2


@numba.njit(cache=True, nogil=True)
def _spoil(
    ranges: npt.NDArray[np.float64],
    u: npt.NDArray[np.float64],
    rates: tuple[float, float],
    bounds: tuple[float, float],
) -> None:
    """:func:`spoil_returns` on its uniforms ``u`` (2 × beams) in one compiled pass: the
    outlier and dropout ``rates``, the laser's range ``bounds`` (min, max)."""
    outlier_rate, dropout_rate = rates
    range_min, range_max = bounds
    dropout_end = outlier_rate + dropout_rate
    for k in range(ranges.shape[0]):
        p = u[0, k]
        if p < outlier_rate:
            short = ranges[k] * (1.0 - OUTLIER_SHORTFALL * u[1, k])
            ranges[k] = range_min if short < range_min else short  # NaN stays, as np.maximum
        elif p < dropout_end:
            ranges[k] = range_max


def spoil_returns(
    ranges: npt.NDArray[np.float64],
    truth: PhysicalTruth,
    config: LaserConfig,
    rng: np.random.Generator,
) -> None:
    """The error model's bad returns, in place: a dropout reads ``range_max`` (nothing came
    back), an outlier up to a fifth short of the true return (a mixed pixel at an edge, dust:
    never nearer than what is there by more than that). Each beam takes two uniforms of
    ``rng``, drawn as one 2 × beams block (the first row says which it is, the second how
    short an outlier reads)."""
    u = rng.random((2, ranges.shape[0]))
    rates = (float(truth.outlier_rate), float(truth.dropout_rate))
    _spoil(ranges, u, rates, (float(config.range_min), float(config.range_max)))


class Laser:
    """A planar scanner at its mount offset: ``beams`` evenly over ``fov`` centred on its
    mount's yaw (ahead by default)."""

    def __init__(
        self,
        config: LaserConfig,
        world: World,
        rng: np.random.Generator,
        yaw_offset: float = 0.0,
    ) -> None:
        """``yaw_offset`` (rad) turns the scanner on its mount: its beams leave that far from
        the bearings :attr:`angles` it reports."""
        self.config = config
        self.world = world
        self.rng = rng
        half = math.radians(config.fov_deg) / 2
        fan = np.linspace(-half, half, config.beams)
        self.angles = fan + config.yaw if config.yaw_deg else fan  # centred on the mount's yaw
        self._units = unit_vectors(self.angles + yaw_offset if yaw_offset else self.angles)
        grid = world.obstacles()
        self._clearance = clearance_of(grid)
        self._world = (world.origin[0], world.origin[1], world.resolution)
        self._laser = laser_params(config)
        # a return's noise is the next normal of the laser's own stream, as drawing one per
        # return would give
        self._normals = NormalsAhead([rng], config.noise_std > 0)
        self._cast = _LastCast(config.beams)
        rows, cols = grid.shape
        # every beam from a walled-in cell returns (and draws its noise) when no beam inside
        # the grid can run out of range: the grid's diagonal (and a cell) is within it
        within_reach = math.hypot(rows + 1, cols + 1) * world.resolution < config.range_max
        self._enclosed = enclosed_of(grid) if within_reach else None

    @property
    def angle_increment(self) -> float:
        return float(self.angles[1] - self.angles[0])

    def scan(self, x: float, y: float, theta: float) -> npt.NDArray[np.float64]:
        """Ranges for the robot at (x, y, θ); ``range_max`` where nothing is hit.

        The fan is cast by :func:`~freelook.maps.cast_fan` itself, the one compiled cast the
        robot's map layer runs too (each kernel holding a cast of its own costs the process
        about half a megabyte)."""
        pose = (float(x), float(y), float(theta))
        if self._cast.stale(pose):
            lx, ly = laser_origin(pose, self._laser)
            mount = (lx, ly, pose[2])
            cast_fan(
                self._clearance, self._world, mount, self._units, self._laser[3], self._cast.ranges
            )
        beams = self.angles.shape[0]
        normals, at = self._normals.ready(beams)
        ranges = np.empty(beams)
        self._normals.at[0] = _laser_noise(self._cast.ranges, self._laser, normals, at, ranges)
        return ranges

    def skip(self, x: float, y: float, theta: float) -> bool:
        """Pass over a scan no one will read: draw its noise as :meth:`scan` would, without
        casting, and return True, when every beam surely returns (from a cell walled off from
        the grid's edge, on a grid within the laser's reach); False, drawing nothing, when
        that cannot be told without the cast (the caller scans)."""
        if self._enclosed is None:
            return False
        lx, ly = laser_origin((float(x), float(y), float(theta)), self._laser)
        ox, oy, resolution = self._world
        gx, gy = (lx - ox) / resolution, (ly - oy) / resolution
        rows, cols = self._enclosed.shape
        # the cell the cast starts in, as it finds it (a start off the grid, or not a number,
        # returns nothing)
        if not (0.0 <= gy < rows and 0.0 <= gx < cols) or not self._enclosed[int(gy), int(gx)]:
            return False
        if self._normals.active:
            beams = self.angles.shape[0]
            _, at = self._normals.ready(beams)
            self._normals.at[0] = at + beams
        return True


@numba.njit(cache=True, nogil=True)
def _sonar_read(
    clearance: npt.NDArray[np.float32],
    world: tuple[float, float, float],
    pose: tuple[float, float, float],
    mounts: npt.NDArray[np.float64],
    bearings: npt.NDArray[np.float64],
    offsets: npt.NDArray[np.float64],
    noise: tuple[float, float],
    cast_again: bool,
    cast: npt.NDArray[np.float64],
    normals: npt.NDArray[np.float64],
    at: int,
    out: npt.NDArray[np.float64],
) -> int:
    """Each transducer's nearest echo over its cone's rays into ``out``: from its mount
    (``mounts[k]``: x, y on the robot), ``offsets`` about its bearing, plus ``noise_std`` times
    the next of ``normals`` when something echoes, clipped to [0, range_max] (``noise``:
    range_max, noise_std). Returns the next unread normal. The exact echoes are cast into
    ``cast`` when ``cast_again`` (else they are there from the same pose before)."""
    range_max, noise_std = noise
    if cast_again:  # every cone's rays in one cast, each from its transducer
        ox, oy, resolution = world
        x, y, theta = pose
        c = math.cos(theta)
        s = math.sin(theta)
        transducers, rays = bearings.shape[0], offsets.shape[0]
        xs = np.empty(transducers * rays)
        ys = np.empty(transducers * rays)
        angles = np.empty(transducers * rays)
        for k in range(transducers):
            sx = x + c * mounts[k, 0] - s * mounts[k, 1]
            sy = y + s * mounts[k, 0] + c * mounts[k, 1]
            bearing = theta + bearings[k]
            for j in range(rays):
                xs[k * rays + j] = sx
                ys[k * rays + j] = sy
                angles[k * rays + j] = bearing + offsets[j]
        ranges = np.empty(transducers * rays)
        cast_beams_from(clearance, ox, oy, resolution, xs, ys, angles, range_max, ranges)
        for k in range(transducers):
            cast[k] = ranges[k * rays : (k + 1) * rays].min()
    for k in range(out.shape[0]):
        r = cast[k]
        if noise_std > 0 and r < range_max:
            r = r + noise_std * normals[at]
            at += 1
        out[k] = min(max(r, 0.0), range_max)
    return at


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
        self._mounts = np.column_stack((self.mount_x, self.mount_y))
        half = math.radians(config.cone_deg) / 2
        self._offsets = np.linspace(-half, half, self.RAYS_PER_CONE)
        self._clearance = clearance_of(world.obstacles())
        self._world = (world.origin[0], world.origin[1], world.resolution)
        self._noise = (config.range_max, config.noise_std)
        # an echo's noise is the next normal of the ring's own stream, as drawing one per echo
        # would give
        self._normals = NormalsAhead([rng], config.noise_std > 0)
        self._cast = _LastCast(len(self.bearings))

    def read(self, x: float, y: float, theta: float) -> npt.NDArray[np.float64]:
        """Range per transducer (front ring first), ``range_max`` when nothing echoes."""
        pose = (float(x), float(y), float(theta))
        transducers = self.bearings.shape[0]
        normals, at = self._normals.ready(transducers)
        out = np.empty(transducers)
        self._normals.at[0] = _sonar_read(
            self._clearance,
            self._world,
            pose,
            self._mounts,
            self.bearings,
            self._offsets,
            self._noise,
            self._cast.stale(pose),
            self._cast.ranges,
            normals,
            at,
            out,
        )
        return out


class RateGyro:
    """MEMS rate gyro: turn-on bias, bias random walk, angle random walk, scale-factor error."""

    def __init__(
        self, config: GyroConfig, rng: np.random.Generator, scale_error: float | None = None
    ) -> None:
        """``scale_error``: the part's true scale-factor error (an error model's draw); None
        draws it within the datasheet's bound."""
        self.config = config
        self.rng = rng
        self.bias = math.radians(rng.uniform(-config.turn_on_bias_deg_s, config.turn_on_bias_deg_s))
        self.scale = 1.0 + rng.uniform(-config.scale_factor_error, config.scale_factor_error)
        if scale_error is not None:
            self.scale = 1.0 + scale_error
        # ARW in rad/√s and bias random-walk intensity chosen so the bias drifts by about the
        # bias-instability figure over an hour
        self._arw = math.radians(config.angle_random_walk_deg_sqrt_h) / 60.0
        self._bias_walk = math.radians(config.bias_instability_deg_h) / 3600.0 / math.sqrt(3600.0)
        # each sample's two normals (bias step, then noise) are the next of ``rng``'s stream,
        # drawn ahead in blocks (a block gives the numbers one draw at a time would)
        self._normals: list[float] = []
        self._next = 0
        # the factors of the last period (samples come at a fixed rate)
        self._dt = math.nan
        self._bias_factor = self._noise_factor = math.nan

    def measure(self, true_rate: float, dt: float) -> float:
        """One sample averaged over ``dt`` seconds (rad/s); advances the bias state."""
        if dt <= 0:
            raise ValueError(f"gyro sample period must be > 0, got {dt}")
        normals, at = self._normals, self._next
        if len(normals) - at < 2:
            normals = self._normals = normals[at:] + self.rng.standard_normal(512).tolist()
            at = 0
        self._next = at + 2
        if dt != self._dt:
            self._dt = dt
            self._bias_factor = self._bias_walk * math.sqrt(dt)
            self._noise_factor = self._arw / math.sqrt(dt)
        self.bias += self._bias_factor * normals[at]
        noise = self._noise_factor * normals[at + 1]
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
