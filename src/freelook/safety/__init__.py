"""Robot-side safety: zones, direction-aware approach check, link watchdog, e-stop, bumpers."""

from freelook.safety._filter import SafetyDecision, SafetyEvent, SafetyFilter, limit_ratio

__all__ = ["SafetyDecision", "SafetyEvent", "SafetyFilter", "limit_ratio"]
