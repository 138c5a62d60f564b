"""freelook's state for ROS tools: ``diagnostic_msgs/DiagnosticArray`` on ``/diagnostics``
(what ``rqt_robot_monitor`` and the diagnostic aggregator read) and small std_msgs under
``[ros2.topics] state`` (``freelook/mode``, ``estop``, ``safety_zone``, ``safety_scale``,
``link_ok``), each reliable and transient local so a tool started later hears the newest.

:func:`state_report` is sans-I/O: the program's telemetry and the robot's connection in, one
:class:`StateReport` out; :class:`StatePublisher` turns it into messages.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from freelook.hardware.ros2._localization import latched_qos
from freelook.link import Telemetry
from freelook.types import SafetyFlags

__all__ = ["StatePublisher", "StateReport", "state_report"]

#: diagnostic_msgs/DiagnosticStatus levels
OK, WARN, ERROR = 0, 1, 2


@dataclass(frozen=True, slots=True)
class StateReport:
    """What freelook tells ROS of itself at one moment."""

    level: int  # OK, WARN or ERROR
    message: str  # one line: the most serious thing first
    mode: str  # the drive mode, lower case ("tank", "free_look", "idle")
    estop: bool  # the e-stop is engaged (the cockpit's, or an external one latched)
    safety_zone: int  # the acting zone, innermost 0; −1 none
    safety_scale: float  # the share of the command safety let through (0…1)
    link_ok: bool  # a station holds control and its commands arrive (the watchdog is not tripped)
    values: tuple[tuple[str, str], ...]  # the diagnostic's key-value pairs


def state_report(telemetry: Telemetry, connected: bool, status: str) -> StateReport:
    """The report of ``telemetry`` (the program's newest), with the robot's connection
    (``connected`` and its ``status`` line): an error while the e-stop holds or the hardware
    does not answer, a warning while the watchdog holds the robot for a station in control
    (its commands stopped coming) or the pose is not trusted; a robot no one drives is OK."""
    t = telemetry
    flags = t.safety_flags
    mode = t.mode.name.lower()
    link_ok = not flags & SafetyFlags.WATCHDOG and t.controller != 0
    reasons = [f.name.lower() for f in SafetyFlags if f and f in flags and f.name]
    if t.estop:
        level, message = ERROR, "e-stop engaged: commanding nothing"
    elif flags & SafetyFlags.HARDWARE or not connected:
        level, message = ERROR, status
    elif flags & SafetyFlags.WATCHDOG and t.controller != 0:
        level, message = WARN, "the link is quiet: the watchdog stopped the robot"
    elif t.localizing:
        level, message = WARN, "the pose is not trusted: the map's walls do not act"
    elif t.safety_scale < 1.0:
        zone = f" (zone {t.safety_zone})" if t.safety_zone >= 0 else ""
        level, message = OK, f"safety lets {t.safety_scale:.0%} of the command through{zone}"
    else:
        level, message = OK, f"{mode}" + ("" if link_ok else ", no operator in control")
    link = t.link
    values = (
        ("mode", mode),
        ("estop", str(t.estop).lower()),
        ("safety_zone", str(t.safety_zone)),
        ("safety_scale", f"{t.safety_scale:.3f}"),
        ("safety_reasons", ",".join(reasons)),
        ("link_ok", str(link_ok).lower()),
        ("controller", str(t.controller)),
        ("link_rx_hz", f"{link.rx_rate_hz:.1f}"),
        ("link_drop_percent", f"{link.drop_percent:.1f}"),
        ("link_latency_s", f"{link.latency_s:.3f}"),
        ("pose_trusted", str(not t.localizing).lower()),
        ("pose", f"{t.pose[0]:.3f} {t.pose[1]:.3f} {t.pose[2]:.4f}"),
        ("hardware", status),
    )
    return StateReport(
        level, message, mode, t.estop, t.safety_zone, t.safety_scale, link_ok, values
    )


class StatePublisher:
    """The publishers of freelook's state on ``node`` (``r``: the ROS namespace of
    :func:`freelook.hardware.ros2.ros`), named as ``[ros2.topics] diagnostics`` and
    ``state`` say ("": none); ``name`` is the diagnostic's (``freelook: NODE``)."""

    def __init__(self, node: Any, r: Any, diagnostics: str, state: str, name: str) -> None:
        self._node = node
        self._r = r
        self._name = name
        self._diagnostics = (
            node.create_publisher(r.DiagnosticArray, diagnostics, 10) if diagnostics else None
        )
        latched = latched_qos(r)
        base = state.rstrip("/")
        self._state = (
            {
                key: (node.create_publisher(kind, f"{base}/{key}", latched), kind)
                for key, kind in (
                    ("mode", r.String),
                    ("estop", r.Bool),
                    ("safety_zone", r.Int32),
                    ("safety_scale", r.Float64),
                    ("link_ok", r.Bool),
                )
            }
            if state
            else {}
        )

    def publish(self, report: StateReport) -> None:
        r = self._r
        if self._diagnostics is not None:
            status = r.DiagnosticStatus()
            status.level = bytes([report.level])
            status.name = self._name
            status.message = report.message
            status.hardware_id = self._name.removeprefix("freelook: ")
            status.values = [r.KeyValue(key=k, value=v) for k, v in report.values]
            array = r.DiagnosticArray()
            array.header.stamp = self._node.get_clock().now().to_msg()
            array.status = [status]
            self._diagnostics.publish(array)
        values: dict[str, Any] = {
            "mode": report.mode,
            "estop": report.estop,
            "safety_zone": report.safety_zone,
            "safety_scale": float(report.safety_scale),
            "link_ok": report.link_ok,
        }
        for key, (publisher, kind) in self._state.items():
            publisher.publish(kind(data=values[key]))
