"""The arm's anti-collision check (TAROS 2018), last before the joint drives.

Every cycle the commanded joint velocities v are held to the joints' velocity limits (scaled as
a whole, so a Cartesian jog keeps its direction) and position limits, then the checked box
pairs are tested at the extrapolated poses q_ext = q + v·t_ext of each phase: a pair that
intersects at the slow phase's horizon (0.12 s) slows the arm, one at the stop phase's (0.03 s)
stops it. The phases are data (:class:`PhaseRule`): all are evaluated, the most restrictive
acts. A command that increases the separation of every pair offending in a phase is let through
by that phase, so an arm that stopped can always be jogged back out. Which pairs are in which
phase is reported with every decision.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass

import numba
import numpy as np
import numpy.typing as npt

from freelook.arm._model import ArmModel
from freelook.arm._sat import separations_kernel
from freelook.config import ArmConfig

__all__ = ["ArmDecision", "ArmGuard", "ArmPhase", "PhaseRule"]

F64 = npt.NDArray[np.float64]
I64 = npt.NDArray[np.int64]


class ArmPhase(enum.IntEnum):
    """How the check acted: the arm moves freely, slowed, or stopped."""

    CLEAR = 0
    SLOW = 1
    STOP = 2


@dataclass(frozen=True, slots=True)
class PhaseRule:
    """One phase: pairs intersecting ``horizon`` s ahead scale the command by ``scale``."""

    phase: ArmPhase
    horizon: float
    scale: float


@dataclass(frozen=True, slots=True)
class ArmDecision:
    """What the check let through, and why."""

    stamp: float
    velocities: F64  # per actuated joint, rad/s or m/s
    phase: ArmPhase  # the most restrictive phase that acted
    slow_pairs: tuple[tuple[str, str], ...]  # intersecting at the slow horizon
    stop_pairs: tuple[tuple[str, str], ...]  # intersecting at the stop horizon
    escaping: bool  # an offending phase let the command through: it moves its pairs apart
    limited: bool  # velocity or position limits trimmed the command
    refused: str = ""  # why the command was refused outright (the arm stands still)


@numba.njit(cache=True, nogil=True)
def _guard_kernel(
    q: F64,
    command: F64,
    lower: F64,
    upper: F64,
    vmax: F64,
    horizons: F64,
    scales: F64,
    parent: I64,
    origin: F64,
    axis: F64,
    kind: I64,
    link_q: I64,
    lscale: F64,
    offset: F64,
    box_link: I64,
    box_origin: F64,
    half: F64,
    pair_a: I64,
    pair_b: I64,
    pad: float,
    v: F64,
    seps: F64,
) -> tuple[int, bool, bool]:
    """Limits, extrapolation, separations and the phase decision in one pass. Fills ``v``
    (the limited command, before any phase scales it) and ``seps`` (poses × pairs, row 0 the
    current pose, row k the pose ``horizons[k]`` ahead); returns (index of the phase rule that
    acts or −1, whether an offending phase was escaped, whether limits trimmed the command)."""
    n = q.shape[0]
    peak = 0.0
    for j in range(n):
        peak = max(peak, abs(command[j]) / vmax[j])
    limited = peak > 1.0
    factor = 1.0 / peak if limited else 1.0
    reach = horizons.max()
    for j in range(n):
        v[j] = command[j] * factor
        ahead = q[j] + v[j] * reach
        if v[j] > 0.0 and ahead > upper[j]:
            v[j] = min(v[j], max(upper[j] - q[j], 0.0) / reach)
            limited = True
        elif v[j] < 0.0 and ahead < lower[j]:
            v[j] = max(v[j], min(lower[j] - q[j], 0.0) / reach)
            limited = True
    poses = np.empty((horizons.shape[0], n))
    for k in range(horizons.shape[0]):
        for j in range(n):
            poses[k, j] = q[j] + horizons[k] * v[j]
    separations_kernel(
        poses, parent, origin, axis, kind, link_q, lscale, offset, box_link, box_origin, half,
        pair_a, pair_b, pad, 0.0, seps,
    )  # fmt: skip
    acting = -1
    best = 1.0
    escaped = False
    for k in range(1, horizons.shape[0]):
        any_hit = False
        apart = True
        for p in range(seps.shape[1]):
            if seps[k, p] <= 0.0:
                any_hit = True
                if not seps[k, p] > seps[0, p]:
                    apart = False
        if not any_hit:
            continue
        if apart:
            escaped = True
        elif scales[k - 1] < best:
            best = scales[k - 1]
            acting = k - 1
    return acting, escaped, limited


class ArmGuard:
    """Joint limits and box anti-collision for one arm; sans-I/O, one call per control cycle."""

    def __init__(
        self,
        model: ArmModel,
        *,
        slow_time: float = 0.12,
        stop_time: float = 0.03,
        slow_factor: float = 0.25,
        padding: float = 0.01,
    ) -> None:
        self.model = model
        self.padding = padding
        self.rules = (
            PhaseRule(ArmPhase.STOP, stop_time, 0.0),
            PhaseRule(ArmPhase.SLOW, slow_time, slow_factor),
        )
        self._horizons = np.array([0.0, *(r.horizon for r in self.rules)])
        self._scales = np.array([r.scale for r in self.rules])
        self._names = model.pair_names
        self._v = np.empty(model.n_joints)
        self._seps = np.empty((len(self._horizons), model.n_pairs))

    @classmethod
    def from_config(cls, model: ArmModel, config: ArmConfig) -> ArmGuard:
        return cls(
            model,
            slow_time=config.slow_time,
            stop_time=config.stop_time,
            slow_factor=config.slow_factor,
            padding=config.padding,
        )

    def _refuse(self, stamp: float, why: str) -> ArmDecision:
        zero = np.zeros(self.model.n_joints)
        return ArmDecision(stamp, zero, ArmPhase.STOP, (), (), False, False, why)

    @property
    def separations(self) -> F64:
        """The last check's separations (poses × pairs): row 0 now, then each rule's horizon."""
        return self._seps

    def check(self, q: F64, command: F64, stamp: float) -> ArmDecision:
        """The velocities to send for measured joint positions ``q`` and the operator's (or a
        planner's) ``command``, both in ``model.joint_names`` order."""
        m = self.model
        q = np.ascontiguousarray(q, dtype=np.float64)
        command = np.ascontiguousarray(command, dtype=np.float64)
        if command.shape != (m.n_joints,) or q.shape != (m.n_joints,):
            return self._refuse(
                stamp, f"expected {m.n_joints} joint values (got {command.size} and {q.size})"
            )
        if not (np.isfinite(command).all() and np.isfinite(q).all()):
            return self._refuse(stamp, "non-finite joint velocity or position")
        v, seps = self._v, self._seps
        acting, escaped, limited = _guard_kernel(
            q, command, m.lower, m.upper, m.max_velocity, self._horizons, self._scales,
            m.link_parent, m.link_origin, m.link_axis, m.link_kind, m.link_q, m.link_scale,
            m.link_offset, m.box_link, m.box_origin, m.half_extents, m.pair_a, m.pair_b,
            self.padding, v, seps,
        )  # fmt: skip
        pairs = {
            rule.phase: tuple(self._names[p] for p in np.flatnonzero(seps[k] <= 0.0))
            for k, rule in enumerate(self.rules, start=1)
        }
        rule = self.rules[acting] if acting >= 0 else None
        out = v * rule.scale if rule is not None else v.copy()
        return ArmDecision(
            stamp,
            out,
            rule.phase if rule is not None else ArmPhase.CLEAR,
            pairs[ArmPhase.SLOW],
            pairs[ArmPhase.STOP],
            bool(escaped) and rule is None,
            bool(limited),
        )
