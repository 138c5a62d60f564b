"""Robot-side safety: zones, approach check, obstacle memory, link watchdog, e-stop, bumpers,
the speed that fits the link's delay, and the obstacle points they judge by (range sensors,
memory, the map layer)."""

from freelook.safety._filter import SafetyDecision, SafetyEvent, SafetyFilter, limit_ratio
from freelook.safety._kernels import beyond_beams, in_cones
from freelook.safety._map_layer import MapLayer
from freelook.safety._memory import ObstacleMemory, in_sonar_cones, seen_through
from freelook.safety._point_sources import PointSources, RangePoints
from freelook.safety._rule import Cycle, Judgement, Rule, RuleSetting, build_rules, register_rule
from freelook.safety._rule_delay import DelaySpeedRule, delay_speed_cap

__all__ = [
    "Cycle",
    "DelaySpeedRule",
    "Judgement",
    "MapLayer",
    "ObstacleMemory",
    "PointSources",
    "RangePoints",
    "Rule",
    "RuleSetting",
    "SafetyDecision",
    "SafetyEvent",
    "SafetyFilter",
    "beyond_beams",
    "build_rules",
    "delay_speed_cap",
    "in_cones",
    "in_sonar_cones",
    "limit_ratio",
    "register_rule",
    "seen_through",
]
