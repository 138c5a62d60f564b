"""What the station offers the page and what it refuses: the thesis profile's modes, the
robot's standing refusals (forgotten once no longer said), a refusal's reason for the page,
and this station's e-stop, which holds back every input that moves until it is released."""

from __future__ import annotations

from typing import Any

from freelook.config import load_robot
from freelook.link import (
    EStop,
    LinkSession,
    ModeRefusal,
    NativeCodec,
    ThesisCodec,
    VelocityCommand,
)
from freelook.operator import StationCore, parse_browser_message
from freelook.operator._view import state_message
from freelook.types import Mode

CONFIG = load_robot("pioneer3dx")
NO_PAN = "Free Look refused: the camera cannot pan (no pan joint)"


def station(native: bool = True) -> StationCore:
    codec = NativeCodec(bytes(range(32)), sender=1) if native else ThesisCodec()
    session = LinkSession(codec, spacing=CONFIG.link.operator_tx_spacing)
    core = StationCore(CONFIG, None, session, native=native)
    session.periodic = core.periodic
    return core


def press(core: StationCore, message: dict[str, Any], now: float = 0.0) -> list[object]:
    request = parse_browser_message(message, core.scales)
    assert request is not None, message
    return list(core.handle(request, now, wall_time=1.8e9 + now))


def test_the_thesis_profile_offers_keyboard_and_operator_side_trajectories_only() -> None:
    core = station(native=False)
    unoffered = core.unoffered(0.0)
    assert set(unoffered) == {"tank", "free_look", "linear", "arm", "autonomy", "goal"}
    assert "thesis profile" in unoffered["free_look"]
    assert press(core, {"type": "mode", "mode": "free_look"}) == []
    assert core.refusal_shown(0.5) == {
        "mode": "free_look",
        "reason": unoffered["free_look"],
        "age": 0.5,
    }
    assert core.drive_command is None  # nothing held from before drives on
    assert press(core, {"type": "axes", "mode": "tank", "forward": 1.0}) == []
    assert press(core, {"type": "linear", "action": "start", "x0": 0, "x1": 2}) == []
    robot_side = {"type": "trajectory", "action": "start", "preset": "ellipse", "side": "robot"}
    assert press(core, robot_side) == []
    assert "operator-side" in core.refusal_shown(0.0)["reason"]  # type: ignore[index]
    assert press(core, {"type": "mode", "mode": "keyboard"}) == [VelocityCommand(0.0, 0.0)]
    assert press(core, {"type": "key", "key": "up"}) != []


def test_the_robots_standing_refusals_are_offered_to_the_page_while_it_says_them() -> None:
    core = station()
    assert "free_look" not in core.unoffered(0.0)
    core.on_link_message(ModeRefusal(0, Mode.FREE_LOOK, NO_PAN, standing=True), 1.0)
    assert core.unoffered(2.0)["free_look"] == NO_PAN
    assert state_message(CONFIG, core, 2.0)["modes"]["unoffered"]["free_look"] == NO_PAN
    assert press(core, {"type": "mode", "mode": "free_look"}, 2.0) == []
    assert "free_look" not in core.unoffered(6.5)  # not said for 5 s: the robot enters it again


def test_a_refusal_for_another_station_is_not_this_ones() -> None:
    core = station()
    core.on_link_message(ModeRefusal(2, Mode.LINEAR, "linear drive refused: equal points"), 1.0)
    assert core.refusal_shown(1.0) is None
    core.on_link_message(ModeRefusal(1, Mode.LINEAR, "linear drive refused: equal points"), 1.0)
    assert core.refusal_shown(1.0) == {
        "mode": "linear",
        "reason": "linear drive refused: equal points",
        "age": 0.0,
    }
    assert core.refusal_shown(12.0) is None  # said for a while, then no longer


def test_the_estop_holds_back_every_moving_input_until_it_is_released() -> None:
    for native in (True, False):
        core = station(native)
        press(core, {"type": "mode", "mode": "keyboard"})
        press(core, {"type": "key", "key": "up"})
        sent = press(core, {"type": "estop", "engaged": True})
        # the thesis profile carries no e-stop: the station sends the stop itself
        assert sent == ([EStop(True)] if native else [VelocityCommand(0.0, 0.0)])
        assert press(core, {"type": "key", "key": "up"}) == []
        assert press(core, {"type": "axes", "mode": "tank", "forward": 1.0}) == []
        assert press(core, {"type": "trajectory", "action": "start", "preset": "ellipse",
                            "side": "operator"}) == []  # fmt: skip
        assert core.inputs_held_by_estop == 3
        press(core, {"type": "estop", "engaged": False})
        # released at rest: the keyboard's next step is from zero
        assert press(core, {"type": "key", "key": "up"}) == [
            VelocityCommand(CONFIG.limits.keyboard_speed_step, 0.0)
        ]
