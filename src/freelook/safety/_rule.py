"""Safety as an ordered list of rules, built from the configuration by name.

Nav2's collision monitor keeps its polygons and their actions as data and loops over its
sources; here each rule is a small class with one job (:mod:`._rule_estop`,
:mod:`._rule_watchdog`, …) and the filter applies them in the order ``[safety] rules`` names
them, over the cycle's point groups (what the sensors see now, and what is remembered or
mapped). Each rule judges the command the rules before it left, and says whether it acted: the
decision carries the names of those that did, and their flags go out in the telemetry.

A rule is registered under its name with :func:`register_rule`; a rule named in the
configuration and registered anywhere (a test, a plugin) joins the list with no other change.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import numpy.typing as npt

from freelook.config import DriveConfig, FootprintConfig, SafetyConfig
from freelook.errors import ConfigError

__all__ = [
    "REQUIRED_RULES",
    "Cycle",
    "Judgement",
    "Rule",
    "RuleFactory",
    "RuleSetting",
    "SafetyEvent",
    "build_rules",
    "register_rule",
]

_Array = npt.NDArray[np.float64]

#: the rules no configuration may leave out: without them the robot could not be stopped
REQUIRED_RULES = ("hardware", "estop", "watchdog")


@dataclass(frozen=True, slots=True)
class SafetyEvent:
    stamp: float
    kind: str  # a rule's name ("zone", "approach", "watchdog", "estop", "bumper", …) or "clear"
    detail: str


class Cycle(NamedTuple):
    """What the rules judge in one cycle (robot frame)."""

    v: float  # the command as it came to safety, m/s
    omega: float  # rad/s
    now: float
    live: _Array  # N×2 points the range sensors see now
    prior: _Array | None  # N×2 points remembered, and the map's walls and keep-outs
    bumper_front: bool = False
    bumper_rear: bool = False
    measured: tuple[float, float] | None = None  # (v, ω) the robot is doing
    hardware_fault: str | None = None  # why the hardware does not answer (None: it does)


class Judgement:
    """The command as the rules so far left it, and what they found (one a cycle)."""

    __slots__ = ("clearance", "cut", "omega", "stopped", "v", "zone")

    def __init__(self, v: float, omega: float) -> None:
        self.v = v
        self.omega = omega
        #: a rule stopped the robot for good this cycle: the rules after it do not judge,
        #: unless they judge always (and then must not move it)
        self.stopped = False
        #: nothing may be commanded (the hardware does not answer): the actuators get zero
        self.cut = False
        self.zone = -1  # the acting zone, innermost 0 (−1: none)
        self.clearance = float("inf")  # nearest obstacle from the centre, m (as measured)


class Rule:
    """One safety rule: its name, its flag in the telemetry, and its judgement."""

    #: the name the configuration lists it by, and its events' kind
    name: str = ""
    #: the :class:`~freelook.types.SafetyFlags` bit it raises when it acts
    flag: int = 0
    #: judges even after a rule before it stopped the robot (it may not move it then)
    always: bool = False

    def judge(self, cycle: Cycle, judgement: Judgement) -> int:
        """Change ``judgement`` if the rule acts; return its state: 0 when it did not act,
        otherwise a number of its own (a change of state is an event)."""
        raise NotImplementedError

    def settled(self, cycle: Cycle, judgement: Judgement) -> None:
        """Every cycle, once every rule has judged: what the rule keeps of it."""

    def events(
        self, cycle: Cycle, judgement: Judgement, previous: int, state: int
    ) -> tuple[SafetyEvent, ...]:
        """The events of a change from ``previous`` to ``state``."""
        if state and not previous:
            return (SafetyEvent(cycle.now, self.name, f"{self.name} engaged"),)
        if previous and not state:
            return (SafetyEvent(cycle.now, "clear", f"{self.name} released"),)
        return ()


class RuleSetting(NamedTuple):
    """What a rule is built from."""

    safety: SafetyConfig
    footprint: FootprintConfig
    drive: DriveConfig
    latency: float  # s from a command to the wheels, eaten before braking starts
    samples: int  # samples along a commanded arc


#: builds a rule from the setting, or None when the configuration leaves it off
RuleFactory = Callable[[RuleSetting], Rule | None]
_FACTORIES: dict[str, RuleFactory] = {}


def register_rule(name: str, factory: RuleFactory) -> None:
    """Make ``name`` a rule the configuration may list (a name registered again is replaced:
    the newest definition counts)."""
    _FACTORIES[name] = factory


def build_rules(setting: RuleSetting) -> list[Rule]:
    """The rules ``[safety] rules`` names, in its order (those it leaves off omitted)."""
    names = setting.safety.rules
    missing = [name for name in REQUIRED_RULES if name not in names]
    if missing:
        raise ConfigError(f"safety.rules must name {', '.join(missing)}")
    if len(set(names)) != len(names):
        raise ConfigError(f"safety.rules names a rule twice: {list(names)}")
    unknown = [name for name in names if name not in _FACTORIES]
    if unknown:
        raise ConfigError(f"unknown safety rule {unknown[0]!r} (known: {sorted(_FACTORIES)})")
    rules = []
    for name in names:
        rule = _FACTORIES[name](setting)
        if rule is not None:
            rules.append(rule)
    return rules
