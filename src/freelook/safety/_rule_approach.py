"""Rule: the approach check, freelook's own (the thesis's zones only cap the speed).

The commanded arc is simulated over a short horizon against the range points; the command is
scaled, ratio kept, so the footprint (plus a margin) stops before contact at the deceleration
limit. Motion that does not deepen an existing contact — reversing away, turning out — is
always allowed, so the robot can be driven out of any stop. The points the sensors see now and
the prior ones (remembered readings, the map's walls and keep-outs) are checked each on their
own, so a stale point deep in the margin cannot license an approach to a live one, nor the
reverse; the nearer stop of the two counts.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import numpy.typing as npt

from freelook.safety._footprint import approach_hits, max_depths
from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, register_rule
from freelook.types import SafetyFlags

__all__ = ["ApproachRule"]

_Array = npt.NDArray[np.float64]
#: (x, y, cos, sin) of the robot's pose at each sample of an arc
_Arc = tuple[_Array, _Array, _Array, _Array]
_NO_POINTS: _Array = np.zeros((0, 2))


class ApproachRule(Rule):
    name = "approach"
    flag = int(SafetyFlags.APPROACH)

    def __init__(self, setting: RuleSetting) -> None:
        safety, footprint = setting.safety, setting.footprint
        self.config = safety
        self.drive = setting.drive
        self.latency = setting.latency
        self._t = np.linspace(0.0, safety.approach_horizon, setting.samples)[1:]
        self._half_l = footprint.length / 2 + safety.approach_margin
        self._half_w = footprint.width / 2 + safety.approach_margin
        self._cx = footprint.center_forward
        # the sampled arcs of the last commands: an operator's command repeats for many cycles
        self._arcs: dict[tuple[float, float, float, float], _Arc] = {}
        # per group of points (0: the live sensors, 1: memory and map)
        self._recent_depth: tuple[deque[float], deque[float]] = (deque(maxlen=15), deque(maxlen=15))

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        v, omega = judgement.v, judgement.omega
        s = self.scale(v, omega, cycle.live, cycle.prior)
        if s >= 1.0:
            return 0
        judgement.v, judgement.omega = v * s, omega * s
        return 1

    def scale(self, v: float, omega: float, points: _Array, prior: _Array | None = None) -> float:
        """Scale for (v, ω) so the footprint can stop before any point (1 = no limit)."""
        live_scale, prior_scale = self._scales(v, omega, points, prior)
        return live_scale if prior is None else min(live_scale, prior_scale)

    def _scales(
        self, v: float, omega: float, live: _Array | None, prior: _Array | None
    ) -> tuple[float, float]:
        """Each group's scale (1.0 for a group without points, or without motion): both
        groups' depths in one compiled call, then both groups' first hits along the arc in
        another."""
        moving = not (v == 0.0 and omega == 0.0)
        use_live = moving and live is not None and len(live) > 0
        use_prior = moving and prior is not None and len(prior) > 0
        if not (use_live or use_prior):
            return 1.0, 1.0
        x, y, c, s = self._arc(v, omega)
        live_points = np.ascontiguousarray(live, dtype=np.float64) if use_live else _NO_POINTS
        prior_points = np.ascontiguousarray(prior, dtype=np.float64) if use_prior else _NO_POINTS
        half_l, half_w, cx = self._half_l, self._half_w, self._cx
        live_deepest, prior_deepest = max_depths(live_points, prior_points, half_l, half_w, cx)
        live_base = self._base(0, live_deepest) if use_live else 0.0
        prior_base = self._base(1, prior_deepest) if use_prior else 0.0
        # the first sample whose pose takes a point deeper than allowed
        live_hit, prior_hit = approach_hits(
            live_points, prior_points, x, y, c, s, live_base, prior_base, half_l, half_w, cx
        )
        return (
            self._scale_at(live_hit, v, omega) if use_live else 1.0,
            self._scale_at(prior_hit, v, omega) if use_prior else 1.0,
        )

    def _base(self, group: int, deepest: float) -> float:
        """How deep into the margin the group's points may be taken: no deeper than the
        deepest one is now.

        Motion may not take any point deeper into the margin than the deepest one is now:
        that blocks approaching, and allows backing away or sliding along a close wall;
        measured against the smallest contact depth of the last cycles, so range noise that
        momentarily shows a point deeper cannot ratchet the robot closer, cycle by cycle;
        and a point that noise shows deep now blocks only motion that takes it deeper still.
        No point licenses more than half the margin: a sonar echo at its shortest range,
        spread over its cone, lands inside the body, and must not let others come that close.
        """
        recent = self._recent_depth[group]
        recent.append(float(deepest))
        return min(max(min(recent), 0.0), self.config.approach_margin / 2)

    def _scale_at(self, k: int, v: float, omega: float) -> float:
        """The scale that stops (v, ω) before the ``k``-th sample of the arc (1.0: no hit)."""
        if k < 0:
            return 1.0
        t_hit = float(self._t[k - 1]) if k > 0 else 0.0
        # distance (or angle) available before contact, minus what latency eats
        a_lin = self.drive.max_deceleration
        a_ang = 2.0 * a_lin / self.drive.track_width
        scale = 0.0
        if abs(v) > 1e-6:
            room = max(0.0, abs(v) * t_hit - abs(v) * self.latency)
            scale = max(scale, min(1.0, math.sqrt(2.0 * a_lin * room) / abs(v)))
        else:
            room = max(0.0, abs(omega) * t_hit - abs(omega) * self.latency)
            scale = max(scale, min(1.0, math.sqrt(2.0 * a_ang * room) / abs(omega)))
        return scale

    def _arc(self, v: float, omega: float) -> _Arc:
        """The robot's pose at each sample time along the arc of (v, ω), in the current robot
        frame (exact arcs); kept for the next cycles, keyed by the values with their signs
        (−0.0 and 0.0 are equal keys, not equal arcs)."""
        key = (v, omega, math.copysign(1.0, v), math.copysign(1.0, omega))
        arc = self._arcs.get(key)
        if arc is None:
            t = self._t
            theta = omega * t
            if abs(omega) < 1e-9:
                x = v * t
                y = np.zeros_like(t)
            else:
                x = v / omega * np.sin(theta)
                y = v / omega * (1.0 - np.cos(theta))
            arc = (x, y, np.cos(theta), np.sin(theta))
            if len(self._arcs) >= 32:  # a ramp's every speed once: keep only the recent ones
                self._arcs.clear()
            self._arcs[key] = arc
        return arc


def _build(setting: RuleSetting) -> ApproachRule | None:
    safety = setting.safety
    return ApproachRule(setting) if safety.zones_enabled and safety.approach_check else None


register_rule(ApproachRule.name, _build)
