"""Truth-side measures of an ellipse lap (the thesis Table 7.2): the angle swept round the
ellipse's centre, the distance to the curve once on it, and detours with a known cause (a
localization stall, the thesis station's 360°→0° jump) measured apart."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.spatial import cKDTree

__all__ = ["JOINED", "NEAR", "Detour", "Distances", "EllipseProgress", "Measure"]

#: m: how near the true path must pass to every stretch of the curve for it to count as driven
NEAR = 0.10
#: the share of the lap, swept from where the robot joined the curve, after which the distance
#: to the curve counts (the start's offset is the controller's to close before)
JOINED = 0.1


class EllipseProgress:
    """Distance to the thesis's ellipse (sampled densely) and the angle swept round it.

    Progress is the ellipse's own parameter angle of the robot's position, unwrapped as it
    goes (a robot that reverses unwinds it), from the angle of the first position it is given
    (0 at the first point: a robot first given beyond it has swept that much already)."""

    def __init__(
        self, centre: tuple[float, float], a: float = 1.8, b: float = 1.0, samples: int = 20_000
    ) -> None:
        phi = np.linspace(0.0, 2 * math.pi, samples, endpoint=False)
        self.centre, self.a, self.b = centre, a, b
        points = np.column_stack((centre[0] + a * np.cos(phi), centre[1] + b * np.sin(phi)))
        self._tree = cKDTree(points)
        self._angle: float | None = None
        self.swept = 0.0

    def distance(self, x: float, y: float) -> float:
        """Distance from (x, y) to the curve, m."""
        return float(self._tree.query((x, y))[0])

    def advance(self, x: float, y: float) -> float:
        """The angle swept so far (rad), after the robot has moved to (x, y)."""
        angle = math.atan2((y - self.centre[1]) / self.b, (x - self.centre[0]) / self.a)
        if self._angle is not None:
            self.swept += math.remainder(angle - self._angle, 2 * math.pi)
        else:
            self.swept = angle
        self._angle = angle
        return self.swept


@dataclass(frozen=True)
class Distances:
    """The distances to the curve once on it, m: the worst, the 95th percentile, the mean."""

    worst: float
    p95: float
    mean: float


class Detour:
    """Time off the curve for a known cause: from its start until the robot is back within
    ``NEAR`` of the curve once the cause is over (it may recur; each adds its time)."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.worst = 0.0
        self._from: float | None = None
        self._cause_until = -math.inf

    @property
    def open(self) -> bool:
        return self._from is not None

    def cause(self, now: float, until: float) -> None:
        """The cause holds from ``now`` until ``until`` (a detour opens if none is)."""
        if self._from is None:
            self._from = now
        self._cause_until = max(self._cause_until, until)

    def update(self, now: float, d: float) -> None:
        if self._from is None:
            return
        self.worst = max(self.worst, d)
        if now >= self._cause_until and d <= NEAR:
            self.seconds += now - self._from
            self._from = None


class Measure:
    """Truth-side measures of one run: the lap, its completion, distances once on the curve.

    The lap starts where the robot first comes within :data:`NEAR` of the curve: the angle
    round the centre means nothing near the centre (the thesis's start), where a few
    millimetres of motion swing it by a radian. Distances count from :data:`JOINED` of the
    way round from there on, wherever the robot is then.
    Detours with a known cause are measured apart (their worst distance and their length): a
    localization stall's, and the thesis station's 360°→0° jumps (its Fig. 7.6 shows their
    gaps apart from its ±30 mm tracking)."""

    def __init__(self, centre: tuple[float, float]) -> None:
        self.progress = EllipseProgress(centre)
        self.on_curve = False
        self.joined = False  # the robot has come within NEAR of the curve: the lap has begun
        self._joined_at = 0.0  # the angle swept when it did
        self.distances: list[float] = []
        self.finished = False
        self.stall = Detour()
        self.crossing = Detour()

    def update(self, now: float, x: float, y: float) -> None:
        d = self.progress.distance(x, y)
        self.on_curve = self.on_curve or (
            self.joined and self.progress.swept - self._joined_at >= JOINED * 2 * math.pi
        )
        detoured = self.stall.open or self.crossing.open
        self.stall.update(now, d)
        self.crossing.update(now, d)
        if self.on_curve and not detoured:
            self.distances.append(d)
        if not self.joined and d > NEAR:
            return
        swept = self.progress.advance(x, y)
        if not self.joined:
            self.joined, self._joined_at = True, swept
        a, b = self.progress.a, self.progress.b
        cx, cy = self.progress.centre
        at_end = math.hypot(x - cx - a, y - cy) <= NEAR
        # the last point is the first: round within NEAR of it (NEAR/b of angle short at most)
        self.finished = swept >= 2 * math.pi - NEAR / b and at_end

    def stats(self) -> Distances:
        if not self.distances:
            return Distances(math.inf, math.inf, math.inf)
        a = np.array(self.distances)
        return Distances(float(a.max()), float(np.percentile(a, 95)), float(a.mean()))
