"""Robot-side safety: zones, approach check, obstacle memory, link watchdog, e-stop, bumpers."""

from freelook.safety._filter import SafetyDecision, SafetyEvent, SafetyFilter, limit_ratio
from freelook.safety._kernels import beyond_beams, in_cones
from freelook.safety._memory import ObstacleMemory, in_sonar_cones, seen_through

__all__ = [
    "ObstacleMemory",
    "SafetyDecision",
    "SafetyEvent",
    "SafetyFilter",
    "beyond_beams",
    "in_cones",
    "in_sonar_cones",
    "limit_ratio",
    "seen_through",
]
