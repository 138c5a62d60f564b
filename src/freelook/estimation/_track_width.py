"""The effective track width of a base's own odometry, learnt from the gyro while it turns.

A skid-steer or tracked base computes its odometry's turn from its wheels' speed difference
over a track width; its wheels skid, so the body turns less than that says (Martinez et al.'s
ICR spread: a Husky's own controller multiplies its wheel separation by 1.875 for it, a base
that does not over-reports its turns by as much). Over a window of turning, the gyro's turn g
and the odometry's u give the ratio: g = k·u with k = nominal / effective width. The wheels
drive the body and random slip is in what the body does, so u is the regressor and g what it
predicts (as :mod:`._heading` compares the encoders with the gyro); k is a scalar Kalman
filter's state with a slow random walk (the ground changes), its variance widened again after a
run of refused windows (the robot drove onto other ground).

The gyro is taken as the reference: its scale error (a datasheet's fraction of a percent) is far
below a skid's tens of percent, and the two are not separately observable without an absolute
heading. Everything is bounded: k stays within [1/4, 2] (the width within a half and four
times the nominal), windows far outside the model are refused and counted, and samples with a
non-finite number, a step not forward in time or no turn at all are ignored and counted.
Sans-I/O: the caller gives every sample its interval.
"""

from __future__ import annotations

import math

__all__ = ["TrackWidthLearner"]


class TrackWidthLearner:
    """Effective over nominal track width (``ratio``) of a base's own odometry, from the gyro."""

    #: the ratio is kept within these (effective / nominal width)
    RATIO_BOUNDS = (0.5, 4.0)
    #: consecutive refused windows after which the estimate is opened up again
    RELEARN_AFTER = 5

    def __init__(
        self,
        ratio: float = 1.0,
        *,
        ratio_std: float = 0.5,  # prior spread of 1/ratio, wide: a skid is not known ahead
        min_turn: float = math.radians(15.0),  # rad of odometry turn a window gathers
        min_rate: float = 0.1,  # rad/s of odometry turn rate below which nothing is turning
        max_window: float = 5.0,  # s a window may take to gather its turn
        slip_noise: float = 0.05,  # relative std of a window's body turn (random slip)
        gyro_noise: float = math.radians(0.5),  # rad: the gyro's error over a window
        walk: float = 0.003,  # std of 1/ratio's change per window (the ground changes)
        gate: float = 4.0,  # windows beyond this many σ are refused
    ) -> None:
        low, high = self.RATIO_BOUNDS
        if not (math.isfinite(ratio) and low <= ratio <= high):
            raise ValueError(f"ratio must lie within {low}…{high}, got {ratio!r}")
        if not (math.isfinite(ratio_std) and ratio_std > 0):
            raise ValueError(f"ratio_std must be > 0, got {ratio_std!r}")
        self.k = 1.0 / ratio  # nominal / effective: the gyro's turn per odometry turn
        self.prior_variance = ratio_std**2
        self.variance = self.prior_variance
        self.min_turn = min_turn
        self.min_rate = min_rate
        self.max_window = max_window
        self.slip_noise = slip_noise
        self.gyro_noise = gyro_noise
        self.walk = walk
        self.gate = gate
        self.windows = 0  # windows that updated the estimate
        self.refused = 0  # windows beyond the gate or the bounds
        self.ignored = 0  # samples with a non-finite number or a bad interval
        self._streak = 0  # refused windows in a row
        self._odometry = self._gyro = self._time = 0.0

    @property
    def ratio(self) -> float:
        """Effective over nominal track width: how many times the odometry's turn the true."""
        return 1.0 / self.k

    @property
    def ratio_std(self) -> float:
        """The ratio's standard deviation (from 1/ratio's, to first order)."""
        return math.sqrt(self.variance) / self.k**2

    def corrected(self, odometry_turn: float) -> float:
        """The body's turn for a turn the odometry reports, by the learnt width."""
        return odometry_turn * self.k

    def observe(self, odometry_turn: float, gyro_turn: float, dt: float) -> bool:
        """One interval's turn by the odometry and by the gyro (rad, over ``dt`` s); returns
        whether it closed a window that updated the estimate.

        Only turning counts: an interval turning slower than ``min_rate``, or the other way
        than the window so far, ends the window (standing still teaches nothing)."""
        if not (
            math.isfinite(odometry_turn) and math.isfinite(gyro_turn) and math.isfinite(dt)
        ) or not (0.0 < dt <= self.max_window):
            self.ignored += 1
            self._clear()
            return False
        if abs(odometry_turn) < self.min_rate * dt or (
            self._odometry != 0.0 and (odometry_turn > 0.0) != (self._odometry > 0.0)
        ):
            self._clear()
            if abs(odometry_turn) < self.min_rate * dt:
                return False
        self._odometry += odometry_turn
        self._gyro += gyro_turn
        self._time += dt
        if self._time > self.max_window:
            self._clear()
            return False
        if abs(self._odometry) < self.min_turn:
            return False
        u, g = self._odometry, self._gyro
        self._clear()
        return self._update(u, g)

    def _update(self, u: float, g: float) -> bool:
        low, high = self.RATIO_BOUNDS
        ratio = g / u
        if not 1.0 / high <= ratio <= 1.0 / low:  # the other way, or a stall or a spin
            return self._refuse()
        self.variance += self.walk**2
        noise = (self.slip_noise * g) ** 2 + self.gyro_noise**2
        s = u * u * self.variance + noise
        innovation = g - self.k * u
        if innovation * innovation > self.gate**2 * s:
            return self._refuse()
        gain = self.variance * u / s
        self.k = min(max(self.k + gain * innovation, 1.0 / high), 1.0 / low)
        self.variance *= 1.0 - gain * u
        self.windows += 1
        self._streak = 0
        return True

    def _refuse(self) -> bool:
        self.refused += 1
        self._streak += 1
        if self._streak >= self.RELEARN_AFTER:  # other ground: learn afresh from here
            self.variance = self.prior_variance
            self._streak = 0
        return False

    def _clear(self) -> None:
        self._odometry = self._gyro = self._time = 0.0
