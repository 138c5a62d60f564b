"""Robot-side safety, last before the actuators (docs/design.md §3, the thesis §5.2).

The filter applies an ordered list of rules (:mod:`._rule`), built from ``[safety] rules``:
by default the hardware fault, the latching e-stop, the link watchdog, the bumpers, the zones
and the approach check, each in its own module. The zones and the approach check are
ratio-preserving (the robot keeps its arc, only slower). The decision says which rules acted
(their names, and their flags for the telemetry); every change of a rule's state is an event.
"""

from __future__ import annotations

from typing import NamedTuple, TypeVar

import numpy as np
import numpy.typing as npt

from freelook.config import DriveConfig, FootprintConfig, SafetyConfig
from freelook.safety._footprint import compile_kernels
from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, SafetyEvent, build_rules
from freelook.safety._rule_approach import ApproachRule
from freelook.safety._rule_bumper import BumperRule
from freelook.safety._rule_estop import EstopRule
from freelook.safety._rule_hardware import HardwareRule
from freelook.safety._rule_watchdog import WatchdogRule
from freelook.safety._rule_zone import ZoneRule, limit_ratio
from freelook.types import SafetyFlags

__all__ = ["SafetyDecision", "SafetyEvent", "SafetyFilter", "limit_ratio"]

_Array = npt.NDArray[np.float64]
# every combination of the flags as the enum, made once rather than every cycle
_AS_FLAGS = tuple(SafetyFlags(bits) for bits in range(2 * max(SafetyFlags)))
# the built-in rules (importing them registers them)
_BUILT_IN = (HardwareRule, EstopRule, WatchdogRule, BumperRule, ZoneRule, ApproachRule)


class SafetyDecision(NamedTuple):
    """The command the actuators may execute now, and why (a named tuple: one a cycle)."""

    v: float
    omega: float
    scale: float  # factor applied to the command (1 = untouched, 0 with nothing commanded)
    zone: int  # acting zone index (0 innermost), −1 none
    flags: SafetyFlags
    clearance: float  # nearest obstacle distance from the centre, m (inf: none measured)
    events: tuple[SafetyEvent, ...] = ()
    rules: tuple[str, ...] = ()  # the names of the rules that acted, in their order


_R = TypeVar("_R", bound=Rule)


def _only(rules: list[Rule], kind: type[_R]) -> _R | None:
    found = [rule for rule in rules if isinstance(rule, kind)]
    return found[0] if found else None


class SafetyFilter:
    """One robot's safety rules, applied in order once a cycle."""

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
        self.rules = build_rules(RuleSetting(safety, footprint, drive, latency, samples))
        estop = _only(self.rules, EstopRule)
        watchdog = _only(self.rules, WatchdogRule)
        if estop is None or watchdog is None:  # the names were kept, their rules replaced
            raise TypeError("the estop and watchdog rules must be freelook's own")
        self._estop: EstopRule = estop
        self.watchdog: WatchdogRule = watchdog
        #: the zone and approach rules (None: left off by the configuration)
        self.zones = _only(self.rules, ZoneRule)
        self.approach = _only(self.rules, ApproachRule)
        self._states = [0] * len(self.rules)  # each rule's state at the last cycle
        # (index, judge, judges always, flag) of each rule, looked up once
        self._steps = tuple(
            (index, rule.judge, rule.always, rule.flag) for index, rule in enumerate(self.rules)
        )
        # the rules that keep something of each cycle
        self._settling = tuple(r.settled for r in self.rules if type(r).settled is not Rule.settled)
        self._names: dict[int, tuple[str, ...]] = {}  # acting rules (bit i: rule i) → names

    # -- inputs ------------------------------------------------------------------------------

    def command_received(self, now: float, until: float | None = None) -> None:
        """A valid command arrived: feeds the watchdog (and releases a tripped one).
        ``until``: the command's expiry, after which the watchdog stops the robot however
        recent the command is."""
        self.watchdog.command_received(now, until)

    def command_lapsed(self) -> None:
        """The sender can no longer stand by its command (its operator cannot see): the
        watchdog's controlled stop starts now, and the next valid command releases it."""
        self.watchdog.command_lapsed()

    @property
    def estop(self) -> bool:
        return self._estop.engaged

    def set_estop(self, engaged: bool) -> None:
        self._estop.engaged = engaged

    # -- checks ------------------------------------------------------------------------------

    def approach_scale(
        self,
        v: float,
        omega: float,
        points: npt.NDArray[np.float64],
        prior: npt.NDArray[np.float64] | None = None,
    ) -> float:
        """Scale for (v, ω) so the footprint can stop before any point (1 = no limit; also
        without the approach rule). ``points`` come from the sensors now; ``prior`` points
        (remembered readings, the map) are checked on their own."""
        return 1.0 if self.approach is None else self.approach.scale(v, omega, points, prior)

    def zone_of(self, v: float, points: npt.NDArray[np.float64]) -> tuple[int, float]:
        """(zone index or −1, clearance) from the points that matter for this motion."""
        return (-1, float("inf")) if self.zones is None else self.zones.classify(v, points, None)

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
        hardware_fault: str | None = None,
    ) -> SafetyDecision:
        """The command the actuators may execute now, from the sensors' ``points`` and the
        ``prior`` ones (remembered readings, the map), robot frame; ``hardware_fault``: why
        the hardware does not answer (None: it does)."""
        cycle = Cycle(
            v, omega, now, points, prior, bumper_front, bumper_rear, measured, hardware_fault
        )
        judgement = Judgement(v, omega)
        states = self._states
        flags = acting = 0
        events: list[SafetyEvent] | None = None
        for index, judge, always, flag in self._steps:
            if judgement.stopped and not always:
                state = 0
            else:
                state = judge(cycle, judgement)
                if state:
                    flags |= flag
                    acting |= 1 << index
            previous = states[index]
            if state != previous:  # most cycles: nothing changed
                states[index] = state
                if events is None:
                    events = []
                events += self.rules[index].events(cycle, judgement, previous, state)
        for settled in self._settling:
            settled(cycle, judgement)
        names = self._names.get(acting)
        if names is None:
            names = self._names[acting] = tuple(
                rule.name for index, rule in enumerate(self.rules) if acting >> index & 1
            )
        out_v, out_omega = judgement.v, judgement.omega
        if judgement.cut:  # commands cannot reach the robot: nothing old may be replayed
            out_v = out_omega = scale = 0.0
        else:
            scale = 1.0
            if abs(v) > 1e-12:
                scale = abs(out_v) / abs(v)
            elif abs(omega) > 1e-12:
                scale = abs(out_omega) / abs(omega)
            scale = min(1.0, scale)
        return SafetyDecision(
            out_v,
            out_omega,
            scale,
            judgement.zone,
            _AS_FLAGS[flags],
            judgement.clearance,
            () if events is None else tuple(events),
            names,
        )
