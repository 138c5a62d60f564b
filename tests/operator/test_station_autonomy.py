"""The cockpit's "dispose": the station asks the robot for its autonomy mode and then sends
only heartbeats (a command would be the operator taking over); the page sees the task."""

from __future__ import annotations

from typing import Any

from freelook.config import load_robot
from freelook.link import (
    AutonomyTelemetry,
    Heartbeat,
    LinkSession,
    ModeChange,
    NativeCodec,
    Telemetry,
    ThesisCodec,
)
from freelook.operator import StationCore, StickScales, parse_browser_message
from freelook.types import Mode, TaskPhase

KEY = bytes(range(32))


def test_dispose_asks_for_the_autonomy_mode_then_sends_heartbeats_only() -> None:
    session = LinkSession(NativeCodec(KEY, sender=1), spacing=0.047)
    core = StationCore(load_robot("m2p2"), None, session)
    request = parse_browser_message({"type": "mode", "mode": "autonomy"}, core.scales)
    assert request is not None
    assert list(core.handle(request, 0.0, wall_time=1.8e9)) == [ModeChange(Mode.AUTONOMY)]
    assert core.drive_command is None
    assert all(isinstance(m, Heartbeat) for m in core.periodic(0.1)[:1])


def test_a_thesis_station_cannot_ask_for_autonomy() -> None:
    session = LinkSession(ThesisCodec(), spacing=0.047)
    core = StationCore(load_robot("m2p2"), None, session, native=False)
    request = parse_browser_message({"type": "mode", "mode": "autonomy"}, core.scales)
    assert request is not None
    assert list(core.handle(request, 0.0, wall_time=1.8e9)) == []


def test_hostile_mode_names_are_refused() -> None:
    for mode in ("AUTONOMY", "autonomy ", 9, None):
        message: dict[str, Any] = {"type": "mode", "mode": mode}
        assert parse_browser_message(message, StickScales.of(load_robot("m2p2"))) is None


def test_the_task_reaches_the_page() -> None:
    from freelook.operator._view import _telemetry_fields

    config = load_robot("m2p2")
    session = LinkSession(NativeCodec(KEY, sender=1), spacing=0.047)
    core = StationCore(config, None, session)
    core.telemetry = Telemetry(
        1.0, (0.0, 0.0, 0.0), (0.0, 0.0, 0.0), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0,
        autonomy=AutonomyTelemetry(TaskPhase.APPROACH_RECEPTACLE, 0.7, True, 2),
    )  # fmt: skip
    fields = _telemetry_fields(config, core)
    assert fields["autonomy"] == {
        "phase": "approach_receptacle", "progress": 0.7, "paused": True, "recoveries": 2,
    }  # fmt: skip
