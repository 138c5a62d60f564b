"""Click-to-go at the station core: a page's goal becomes a GoalStart, the station then feeds
the robot's watchdog with heartbeats only (no held command takes over), sticks at rest take
nothing over, a moved stick, a key or the e-stop does and the page is told; the robot's
reports say driving, reached, stopped short or refused; malformed goals are refused."""

from __future__ import annotations

import math
from typing import Any

from freelook.config import load_robot
from freelook.link import (
    EStop,
    FreeLookCommand,
    GoalStart,
    GoalStop,
    Heartbeat,
    LinkSession,
    ModeRefusal,
    NativeCodec,
    Telemetry,
    ThesisCodec,
    VelocityCommand,
)
from freelook.maps import load_world
from freelook.operator import StationCore, parse_browser_message
from freelook.types import Mode

CONFIG = load_robot("pioneer3dx")


def station(native: bool = True, world: str | None = None) -> StationCore:
    codec = NativeCodec(bytes(range(32)), sender=1) if native else ThesisCodec()
    session = LinkSession(codec, spacing=CONFIG.link.operator_tx_spacing)
    core = StationCore(CONFIG, load_world(world) if world else None, session, native=native)
    session.periodic = core.periodic
    return core


def press(core: StationCore, message: dict[str, Any], now: float = 0.0) -> list[object]:
    request = parse_browser_message(message, core.scales)
    assert request is not None, message
    return list(core.handle(request, now, wall_time=1.8e9 + now))


def report(core: StationCore, mode: Mode, x: float, now: float) -> None:
    core.on_link_message(
        Telemetry(now, (x, 0.0, 0.0), (x, 0.0, 0.0), 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, mode=mode), now
    )


def test_a_goal_is_sent_driven_and_reached_on_heartbeats_alone() -> None:
    core = station()
    press(core, {"type": "mode", "mode": "free_look"})  # a zero Free Look command held
    assert press(core, {"type": "goal", "x": 2.5, "y": 0.0}, 0.1) == [GoalStart(2.5, 0.0)]
    assert core.periodic(0.15)[0] == Heartbeat()  # nothing held would take over
    # sticks at rest (a blur, a lost pointer lock) take nothing over
    assert press(core, {"type": "axes", "mode": "free_look"}, 0.2) == []
    report(core, Mode.GOAL, 0.5, 0.3)
    assert core.goal.view(0.3)["state"] == "driving"
    report(core, Mode.IDLE, 2.45, 9.0)
    view = core.goal.view(9.5)
    assert view is not None
    assert (view["state"], view["age"]) == ("reached", 0.5)


def test_a_moved_stick_a_key_or_the_estop_takes_over_and_the_page_is_told() -> None:
    for take_over, sent in [
        ({"type": "axes", "mode": "free_look", "forward": 0.5}, FreeLookCommand),
        ({"type": "key", "key": "up"}, VelocityCommand),
        ({"type": "estop", "engaged": True}, EStop),
        ({"type": "goal", "action": "stop"}, GoalStop),
    ]:
        core = station()
        press(core, {"type": "goal", "x": 2.0, "y": 1.0})
        report(core, Mode.GOAL, 0.2, 0.5)
        out = press(core, take_over, 1.0)
        assert [type(m) for m in out] == [sent]
        view = core.goal.view(1.0)
        assert view is not None
        assert view["state"] == ("cancelled" if sent is GoalStop else "taken over")
        report(core, Mode.VELOCITY, 0.3, 1.5)  # what the robot then says changes nothing
        assert core.goal.view(1.5)["state"] == view["state"]  # type: ignore[index]


def test_the_robot_stopping_short_or_refusing_is_said_with_its_reason() -> None:
    core = station()
    press(core, {"type": "goal", "x": 4.0, "y": 0.0})
    report(core, Mode.GOAL, 0.5, 0.5)
    report(core, Mode.IDLE, 1.0, 40.0)  # gave up, 3 m short
    assert core.goal.view(40.0)["state"] == "stopped short"  # type: ignore[index]
    press(core, {"type": "goal", "x": 40.0, "y": 0.0}, 41.0)
    why = "click-to-go refused: the goal is 39.0 m away, farther than max_distance 30 m"
    core.on_link_message(ModeRefusal(1, Mode.GOAL, why), 41.2)
    view = core.goal.view(41.2)
    assert view is not None
    assert (view["state"], view["reason"]) == ("refused", why)
    press(core, {"type": "goal", "x": 1.0, "y": 0.0}, 42.0)
    report(core, Mode.IDLE, 0.0, 42.5)  # not taken up yet: a report from before it landed
    assert core.goal.view(42.5)["state"] == "sent"  # type: ignore[index]
    report(core, Mode.IDLE, 0.0, 45.0)
    assert core.goal.view(45.0)["state"] == "refused"  # type: ignore[index]


def test_the_thesis_profile_offers_no_goal_and_malformed_goals_are_refused() -> None:
    core = station(native=False)
    assert press(core, {"type": "goal", "x": 1.0, "y": 0.0}) == []
    assert "thesis profile carries no goals" in core.unoffered(0.0)["goal"]
    scales = station().scales
    for bad in (
        {"type": "goal", "x": math.nan, "y": 0.0},
        {"type": "goal", "x": "1", "y": 0.0},
        {"type": "goal", "x": 1.0},
        {"type": "goal", "x": 2e6, "y": 0.0},
        {"type": "goal", "x": True, "y": 0.0},
    ):
        assert parse_browser_message(bad, scales) is None, bad


def test_a_goal_is_held_back_while_this_stations_estop_is_engaged() -> None:
    core = station()
    press(core, {"type": "estop", "engaged": True})
    assert press(core, {"type": "goal", "x": 1.0, "y": 0.0}) == []
    assert core.inputs_held_by_estop == 1


def test_a_goal_in_or_against_a_wall_of_the_map_is_refused_at_the_station() -> None:
    core = station(world="lab")
    world = core.clearance.world
    assert world is not None
    rows, cols = world.shape
    walls = world.obstacles()
    i, j = next((i, j) for i in range(rows) for j in range(cols) if walls[i, j])
    x = world.origin[0] + (j + 0.5) * world.resolution
    y = world.origin[1] + (i + 0.5) * world.resolution
    assert press(core, {"type": "goal", "x": x, "y": y}) == []
    view = core.goal.view(0.0)
    assert view is not None
    assert view["state"] == "refused"
    assert "0.00 m from an obstacle on the map" in view["reason"]
    assert core.refusal_shown(0.0)["mode"] == "goal"  # type: ignore[index]
    sx, sy, _ = world.start  # where a robot fits
    assert press(core, {"type": "goal", "x": sx, "y": sy}, 1.0) == [GoalStart(sx, sy)]
