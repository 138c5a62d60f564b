"""Robot-side safety, last before the actuators (docs/design.md §3, the thesis §5.2).

Three checks, each ratio-preserving (the robot keeps its arc, only slower):

* **Zones** (the thesis's three zones, innermost tested first — the thesis's Algorithm 5.1
  tests the outermost first and returns, so its inner zones never act): the nearest reading
  all around picks the zone (the thesis's rule; ``zone_rule = "direction"`` counts only the
  readings on the side the robot moves towards), and (v, ω) are capped to its limits.
* **Approach**: the commanded arc is simulated over a short horizon against the range points;
  the command is scaled so the footprint (plus a margin) stops before contact at the
  deceleration limit. Motion that does not deepen an existing contact — reversing away,
  turning out — is always allowed, so the robot can be driven out of any stop.
* **Watchdog**: with no valid command for ``watchdog_timeout``, a controlled stop (ramp at the
  deceleration limit), latched until a fresh command arrives.

Plus the latching e-stop and the bumpers. Every change of state is published as an event.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import DriveConfig, FootprintConfig, SafetyConfig
from freelook.safety._footprint import approach_hits, compile_kernels, max_depths, nearest_squared
from freelook.types import SafetyFlags

__all__ = ["SafetyDecision", "SafetyEvent", "SafetyFilter", "limit_ratio"]

_Array = npt.NDArray[np.float64]
#: (x, y, cos, sin) of the robot's pose at each sample of an arc
_Arc = tuple[_Array, _Array, _Array, _Array]
_NO_POINTS: _Array = np.zeros((0, 2))


@dataclass(frozen=True, slots=True)
class SafetyEvent:
    stamp: float
    kind: str  # "zone", "approach", "watchdog", "estop", "bumper", "hardware", "clear"
    detail: str


class SafetyDecision(NamedTuple):
    """The command the actuators may execute now, and why (a named tuple: one a cycle)."""

    v: float
    omega: float
    scale: float  # factor applied to the command (1 = untouched)
    zone: int  # acting zone index (0 innermost), −1 none
    flags: SafetyFlags
    clearance: float  # nearest obstacle distance from the centre, m
    events: tuple[SafetyEvent, ...] = ()


def limit_ratio(v: float, omega: float, v_max: float, omega_max: float) -> float:
    """The largest factor s ≤ 1 with |s·v| ≤ v_max and |s·ω| ≤ ω_max."""
    s = 1.0
    if abs(v) > v_max:
        s = v_max / abs(v)
    if abs(omega) * s > omega_max:
        s = omega_max / abs(omega)
    return s


# the flags as plain ints: a cycle combines them as ints and makes one SafetyFlags at the
# end (each operation on an enum flag builds an enum member)
_ZONE = int(SafetyFlags.ZONE)
_APPROACH = int(SafetyFlags.APPROACH)
_WATCHDOG = int(SafetyFlags.WATCHDOG)
_ESTOP = int(SafetyFlags.ESTOP)
_BUMPER = int(SafetyFlags.BUMPER)
# every combination of the flags as the enum, made once rather than every cycle
_AS_FLAGS = tuple(SafetyFlags(bits) for bits in range(2 * max(SafetyFlags)))

# the flags whose change is an event of its own, and its name
_FLAG_EVENTS = (
    (_ESTOP, "estop"),
    (_WATCHDOG, "watchdog"),
    (_BUMPER, "bumper"),
    (_APPROACH, "approach"),
)


class SafetyFilter:
    """Zones, approach check, watchdog, e-stop and bumpers for one robot."""

    def __init__(
        self,
        safety: SafetyConfig,
        footprint: FootprintConfig,
        drive: DriveConfig,
        *,
        latency: float = 0.04,
        samples: int = 24,
    ) -> None:
        compile_kernels()  # now, not in the first control cycle
        self.config = safety
        self.footprint = footprint
        self.drive = drive
        self.latency = latency
        self._zones = [
            (z.boundary, z.max_speed, math.radians(z.max_turn_rate_deg)) for z in safety.zones
        ]
        self._t = np.linspace(0.0, safety.approach_horizon, samples)[1:]
        self._half_l = footprint.length / 2 + safety.approach_margin
        self._half_w = footprint.width / 2 + safety.approach_margin
        self._cx = footprint.center_forward
        # the sampled arcs of the last commands: an operator's command repeats for many cycles
        self._arcs: dict[tuple[float, float, float, float], _Arc] = {}
        self.last_command_time: float | None = None
        self.command_until: float | None = None  # the last command's expiry (None: none)
        # per group of points (0: the live sensors, 1: memory and map)
        self._recent_depth: tuple[deque[float], deque[float]] = (deque(maxlen=15), deque(maxlen=15))
        self.estop = False
        self._watchdog_tripped = False
        self._state: tuple[int, int] = (-1, 0)  # (acting zone, flags) of the last cycle
        self._last_v = 0.0
        self._last_omega = 0.0
        self._last_time: float | None = None

    # -- inputs ------------------------------------------------------------------------------

    def command_received(self, now: float, until: float | None = None) -> None:
        """A valid command arrived: feeds the watchdog (and releases a tripped one).
        ``until``: the command's expiry, after which the watchdog stops the robot however
        recent the command is."""
        self.last_command_time = now
        self.command_until = until

    def command_lapsed(self) -> None:
        """The sender can no longer stand by its command (its operator cannot see): the
        watchdog's controlled stop starts now, and the next valid command releases it."""
        self.last_command_time = None

    def set_estop(self, engaged: bool) -> None:
        self.estop = engaged

    # -- checks ------------------------------------------------------------------------------

    def approach_scale(
        self,
        v: float,
        omega: float,
        points: npt.NDArray[np.float64],
        prior: npt.NDArray[np.float64] | None = None,
    ) -> float:
        """Scale for (v, ω) so the footprint can stop before any point (1 = no limit).

        ``points`` come from the sensors now; ``prior`` points (remembered readings, the map)
        are checked on their own, so a stale point deep in the margin cannot license an
        approach to a live one, nor the reverse.
        """
        live_scale, prior_scale = self._scales(v, omega, points, prior)
        return live_scale if prior is None else min(live_scale, prior_scale)

    def _scales(
        self,
        v: float,
        omega: float,
        live: npt.NDArray[np.float64] | None,
        prior: npt.NDArray[np.float64] | None,
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

    def zone_of(self, v: float, points: npt.NDArray[np.float64]) -> tuple[int, float]:
        """(zone index or −1, clearance) from the points that matter for this motion."""
        return self._zone(v, points, None)

    def _zone(self, v: float, points: _Array, prior: _Array | None) -> tuple[int, float]:
        """:meth:`zone_of` the points and the prior ones together, without stacking them (the
        nearest of both is the nearest of the stack, each row's norm rounded alike)."""
        if len(points) == 0 and (prior is None or len(prior) == 0):
            return -1, math.inf
        side = 0
        if self.config.zone_rule == "direction" and abs(v) > 1e-3:
            side = 1 if v > 0 else -1
        rear = self._cx - self.footprint.length / 2
        front = self._cx + self.footprint.length / 2
        squared = nearest_squared(
            np.ascontiguousarray(points, dtype=np.float64),
            _NO_POINTS if prior is None else np.ascontiguousarray(prior, dtype=np.float64),
            side,
            rear,
            front,
        )
        if squared == math.inf:  # nothing counted (or only points at infinity, the same)
            return -1, math.inf
        clearance = math.sqrt(squared)
        for index, (boundary, _, _) in enumerate(self._zones):  # innermost first
            if clearance < boundary:
                return index, clearance
        return -1, clearance

    # -- the filter --------------------------------------------------------------------------

    def filter(
        self,
        v: float,
        omega: float,
        points: npt.NDArray[np.float64],
        now: float,
        bumper_front: bool = False,
        bumper_rear: bool = False,
        measured: tuple[float, float] | None = None,
        prior: npt.NDArray[np.float64] | None = None,
    ) -> SafetyDecision:
        """The command the actuators may execute now, from the sensors' ``points`` and the
        ``prior`` ones (remembered readings, the map), robot frame."""
        dt = 0.0 if self._last_time is None else max(0.0, now - self._last_time)
        self._last_time = now
        flags = 0
        in_v, in_omega = v, omega
        zone, clearance = self._zone(v, points, prior)
        if self.estop:
            flags |= _ESTOP
            v = omega = 0.0
        else:
            silent = (
                self.last_command_time is None
                or now - self.last_command_time > self.config.watchdog_timeout
                or (self.command_until is not None and now > self.command_until)
            )
            if silent:
                # controlled stop: ramp what the robot was last told down at the limit, or
                # zero at once where the base brakes itself
                flags |= _WATCHDOG
                last_v, last_omega = self._last_v, self._last_omega
                if not self._watchdog_tripped and measured is not None:
                    # brake from what the robot is doing, if that is slower than its command
                    if abs(measured[0]) < abs(last_v):
                        last_v = math.copysign(abs(measured[0]), last_v)
                    if abs(measured[1]) < abs(last_omega):
                        last_omega = math.copysign(abs(measured[1]), last_omega)
                self._watchdog_tripped = True
                if self.config.watchdog_stop == "zero":
                    r = 0.0  # the base's own controller brakes at its limit
                elif abs(last_v) > 1e-9:
                    r = max(0.0, abs(last_v) - self.drive.max_deceleration * dt) / abs(last_v)
                elif abs(last_omega) > 1e-9:
                    alpha = 2.0 * self.drive.max_deceleration / self.drive.track_width
                    r = max(0.0, abs(last_omega) - alpha * dt) / abs(last_omega)
                else:
                    r = 0.0
                v, omega = last_v * r, last_omega * r
            else:
                self._watchdog_tripped = False
            if (bumper_front and v > 0) or (bumper_rear and v < 0):
                flags |= _BUMPER
                v = 0.0
            obstacles = self.config.zones_enabled
            if zone >= 0 and obstacles:
                _, v_max, w_max = self._zones[zone]
                s = limit_ratio(v, omega, v_max, w_max)
                if s < 1.0:
                    flags |= _ZONE
                    v, omega = v * s, omega * s
            if obstacles and self.config.approach_check:
                s = self.approach_scale(v, omega, points, prior)
                if s < 1.0:
                    flags |= _APPROACH
                    v, omega = v * s, omega * s
        self._last_v, self._last_omega = v, omega
        scale = 1.0
        if abs(in_v) > 1e-12:
            scale = abs(v) / abs(in_v)
        elif abs(in_omega) > 1e-12:
            scale = abs(omega) / abs(in_omega)
        events = self._events(now, zone, flags, clearance)
        acting = zone if flags & _ZONE else -1
        return SafetyDecision(
            v, omega, min(1.0, scale), acting, _AS_FLAGS[flags], clearance, events
        )

    def _events(
        self, now: float, zone: int, flags: int, clearance: float
    ) -> tuple[SafetyEvent, ...]:
        previous_zone, previous_flags = self._state
        acting_zone = zone if flags & _ZONE else -1
        if flags == previous_flags and acting_zone == previous_zone:
            return ()  # most cycles: nothing changed
        self._state = (acting_zone, flags)
        events = []
        for flag, kind in _FLAG_EVENTS if flags != previous_flags else ():
            if flags & flag and not previous_flags & flag:
                events.append(SafetyEvent(now, kind, f"{kind} engaged"))
            elif previous_flags & flag and not flags & flag:
                events.append(SafetyEvent(now, "clear", f"{kind} released"))
        if acting_zone != previous_zone:
            detail = (
                f"zone {acting_zone} (clearance {clearance:.2f} m)"
                if acting_zone >= 0
                else "left the zones"
            )
            events.append(SafetyEvent(now, "zone" if acting_zone >= 0 else "clear", detail))
        return tuple(events)
