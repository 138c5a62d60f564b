"""What the hardware reads: scans and samples, each stamped with the time it was taken.

Readings carry the time they were taken, in the robot's clock, so estimation never guesses. They
are named tuples: a control cycle reads several of them, made afresh at each new reading, and a
named tuple costs a third to a half of a frozen dataclass to make.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import numpy.typing as npt

__all__ = [
    "BumperState",
    "EncoderSample",
    "GyroSample",
    "OdometrySample",
    "PanTiltState",
    "PoseSample",
    "RangeScan",
]


class RangeScan(NamedTuple):
    """One sweep of a range sensor in the robot frame (x forward, y left, origin at z)."""

    stamp: float
    ranges: npt.NDArray[np.float64]  # m; range_max where nothing was hit
    bearings: npt.NDArray[np.float64]  # rad, robot frame
    origin_x: npt.NDArray[np.float64]  # where each beam starts, robot frame, m
    origin_y: npt.NDArray[np.float64]
    range_max: float
    #: a scan of several lasers merged: its first this many beams are one laser's sweep
    #: (bearings evenly spaced and rising, from one origin), the rest the others' (None: one
    #: laser's, all its sweep)
    sweep: int | None = None

    @property
    def sweep_beams(self) -> int:
        """How many of the first beams are one laser's sweep (:attr:`sweep`)."""
        n = min(len(self.bearings), len(self.ranges))
        return n if self.sweep is None else min(n, self.sweep)

    def points(self) -> npt.NDArray[np.float64]:
        """Hit points (N×2, robot frame) of the beams that returned something."""
        hit = self.ranges < self.range_max
        r = self.ranges[hit]
        b = self.bearings[hit]
        return np.column_stack(
            (self.origin_x[hit] + r * np.cos(b), self.origin_y[hit] + r * np.sin(b))
        )


class GyroSample(NamedTuple):
    stamp: float
    rate: float  # rad/s, counter-clockwise positive
    # the sum of every sample's rate × period since start (the delta-angle output most IMUs
    # give): a reader slower than the gyro, or one that stalled, loses no rotation
    angle: float | None = None


class EncoderSample(NamedTuple):
    stamp: float
    left: int  # cumulative counts
    right: int


class OdometrySample(NamedTuple):
    """A base's own dead reckoning (as a Pioneer's controller reports it in every SIP)."""

    stamp: float
    x: float  # m, in the base's odometry frame (where it was switched on or reset)
    y: float
    theta: float  # rad
    v_left: float  # m/s, measured wheel speeds
    v_right: float


class PoseSample(NamedTuple):
    """A pose from the robot's own localization (a ROS robot's AMCL), in the map's frame."""

    stamp: float  # when the robot stood there (its scan's time), on the robot's clock
    x: float  # m
    y: float
    theta: float  # rad
    std_xy: float  # m, the larger of its position's two standard deviations
    std_theta: float  # rad


class PanTiltState(NamedTuple):
    stamp: float
    pan: float  # rad, relative to the chassis
    tilt: float  # rad


class BumperState(NamedTuple):
    stamp: float
    front: bool
    rear: bool
