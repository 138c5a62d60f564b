"""The operator station's core without sockets or a browser: browser messages in, link
messages out, on a clock the test sets."""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import (
    MAX_AGE,
    Accepted,
    ControlGrant,
    ControlReject,
    ControlRequest,
    EStop,
    FreeLookCommand,
    Heartbeat,
    LinkSession,
    ModeChange,
    NativeCodec,
    ReceptionReport,
    RejectReason,
    SetTransmissionSpacing,
    TankCommand,
    ThesisCodec,
    TrajectoryStart,
    VelocityCommand,
)
from freelook.maps import load_world
from freelook.operator import RefusedInputError, StationCore, StickScales, parse_browser_message
from freelook.types import Mode

KEY = bytes(range(32))
CONFIG = load_robot("pioneer3dx")
SCALES = StickScales.of(CONFIG)


def station(native: bool = True) -> StationCore:
    codec = NativeCodec(KEY, sender=1) if native else ThesisCodec()
    session = LinkSession(codec, spacing=CONFIG.link.operator_tx_spacing)
    core = StationCore(CONFIG, None, session, native=native)
    session.periodic = core.periodic
    return core


def press(core: StationCore, message: dict[str, Any], now: float = 0.0) -> list[object]:
    request = parse_browser_message(message, core.scales)
    assert request is not None, message
    return list(core.handle(request, now, wall_time=1.8e9 + now))


def test_w_in_free_look_is_sent_at_once_and_repeated_until_released() -> None:
    core = station()
    assert press(core, {"type": "mode", "mode": "free_look"}) == [FreeLookCommand(0.0, 0.0, 0.0)]
    sent = press(core, {"type": "axes", "mode": "free_look", "forward": 0.6})
    v_max = CONFIG.limits.max_speed
    assert sent == [FreeLookCommand(0.6 * v_max, 0.0, 0.0, 0.0)]
    assert core.periodic(0.047)[0] == FreeLookCommand(0.6 * v_max, 0.0, 0.0, 0.0)
    assert press(core, {"type": "axes", "mode": "free_look"}) == [FreeLookCommand(0, 0, 0, 0)]
    assert core.periodic(0.094)[0] == FreeLookCommand(0.0, 0.0, 0.0, 0.0)


def test_tank_axes_carry_the_camera_pan_separately() -> None:
    core = station()
    (command,) = press(core, {"type": "axes", "mode": "tank", "forward": 1, "turn": -1, "pan": 1})
    assert isinstance(command, TankCommand)
    assert command.v == CONFIG.limits.max_speed
    assert command.omega == pytest.approx(-math.radians(CONFIG.limits.max_turn_rate_deg))
    assert CONFIG.pan_tilt is not None
    assert command.pan_rate == pytest.approx(CONFIG.pan_tilt.max_pan_rate)


def test_keyboard_mode_is_announced_to_the_robot_and_keys_step_the_thesis_increments() -> None:
    core = station()
    assert press(core, {"type": "mode", "mode": "keyboard"}) == [
        ModeChange(Mode.KEYBOARD),
        VelocityCommand(0.0, 0.0),
    ]
    for _ in range(3):
        (command,) = press(core, {"type": "key", "key": "up"})
    assert command == VelocityCommand(pytest.approx(0.06), 0.0)
    (command,) = press(core, {"type": "key", "key": "space"})
    assert command == VelocityCommand(0.0, 0.0)
    # the thesis profile cannot carry a mode change: the station does not ask for one
    assert press(station(native=False), {"type": "mode", "mode": "keyboard"}) == [
        VelocityCommand(0.0, 0.0)
    ]


def test_estop_drops_the_drive_command_and_heartbeats_keep_the_link() -> None:
    core = station()
    press(core, {"type": "axes", "mode": "tank", "forward": 1})
    assert press(core, {"type": "estop", "engaged": True}) == [EStop(True)]
    assert core.periodic(0.05) == [Heartbeat()]


def test_control_is_renewed_about_once_a_second() -> None:
    core = station()
    assert core.start() == [ControlRequest(1, 10)]
    sent = [m for k in range(40) for m in core.periodic(k * 0.047)]
    assert sent.count(ControlRequest(1, 10)) == 2


def test_a_driving_station_reports_what_it_sees_five_times_a_second() -> None:
    core = station()
    core.start()

    def reports(t0: float) -> list[ReceptionReport]:
        sent = [m for k in range(40) for m in core.periodic(t0 + k * 0.047)]
        return [m for m in sent if isinstance(m, ReceptionReport)]

    first = reports(0.0)
    assert len(first) == 10
    assert first[0] == ReceptionReport(MAX_AGE, MAX_AGE, 0.0)  # never heard anything: blind
    robot = SimulatedRobot(CONFIG, load_world("square"), seed=3, pose=(7.0, 7.0, 0.0))
    core.on_link_message(robot.core.telemetry(0.0), 2.0)
    spacing = core.robot_tx_spacing
    assert core.reception(2.0 + spacing / 2).telemetry_overdue == 0.0  # the next is not due yet
    assert core.reception(2.7 + spacing).telemetry_overdue == pytest.approx(0.7)
    core.robot_tx_enabled = False  # the operator turned the robot's transmission off
    assert reports(3.0) == []


def test_a_refusal_stands_while_the_robot_grants_other_stations() -> None:
    core = station()
    core.start()
    core.drive()
    core.on_link_message(ControlReject(1, RejectReason.NOT_HOLDER), 1.0)
    assert core.refused_control
    assert not core.in_control
    core.on_link_message(ControlGrant(2, 10), 1.5)  # station 2 renews its hold, heard on the bus
    assert core.refused_control
    assert not core.in_control
    core.on_link_message(ControlReject(2, RejectReason.NOT_HOLDER), 1.6)  # not ours
    assert core.refused_control
    core.on_link_message(ControlGrant(1, 10), 2.0)
    assert core.in_control
    assert not core.refused_control


def test_the_last_browser_leaving_stops_transmissions_so_the_watchdog_stops_the_robot() -> None:
    core = station()
    core.attach()
    core.attach()
    press(core, {"type": "axes", "mode": "tank", "forward": 1})
    core.detach()
    assert core.session.transmitting
    core.detach()
    assert not core.session.transmitting
    assert core.drive_command is None
    assert core.session.poll(10.0) == []


def test_transmission_settings_are_bounded() -> None:
    core = station()
    sent = press(core, {"type": "transmission", "side": "robot", "spacing_ms": 0.001})
    assert sent == [SetTransmissionSpacing(0.005)]
    press(core, {"type": "transmission", "side": "operator", "spacing_ms": 1e9})
    assert core.session.spacing == 2.0


def test_an_ellipse_upload_starts_at_the_robot() -> None:
    core = station()
    (upload,) = press(core, {"type": "trajectory", "action": "start", "preset": "ellipse"})
    assert isinstance(upload, TrajectoryStart)
    assert len(upload.t) == 101
    assert (upload.x[0], upload.y[0]) == pytest.approx((0.0, 0.0), abs=1e-9)


@pytest.mark.parametrize(
    "message",
    [
        {"type": "axes", "mode": "tank", "forward": math.nan},
        {"type": "axes", "mode": "tank", "forward": math.inf},
        {"type": "axes", "mode": "tank", "forward": True},
        {"type": "axes", "mode": "tank", "forward": "1"},
    ],
)
def test_non_numbers_and_non_finite_axes_drive_nothing(message: dict[str, Any]) -> None:
    core = station()
    (command,) = press(core, message)
    assert command == TankCommand(0.0, 0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    "message",
    [
        None,
        [],
        "axes",
        {"type": "launch"},
        {"type": "key", "key": "f1"},
        {"type": "mode", "mode": "autopilot"},
        {"type": "linear", "action": "start", "x0": math.nan, "x1": 1},
        {"type": "trajectory", "action": "start", "preset": "waypoints", "waypoints": [[1]]},
        {
            "type": "trajectory",
            "action": "start",
            "preset": "waypoints",
            "waypoints": [[0, 0]] * 101,
        },
        {"type": "transmission", "side": "everyone", "enabled": False},
        {"type": "painted", "stamp": math.inf},
    ],
)
def test_unknown_or_malformed_browser_messages_are_refused(message: object) -> None:
    assert parse_browser_message(message, SCALES) is None


_FIELDS = st.sampled_from(["type", "mode", "forward", "left", "turn", "pan", "key", "side"])
_VALUES = st.one_of(
    st.sampled_from(["axes", "tank", "free_look", "key", "mode", "up", "keyboard"]),
    st.none(),
    st.booleans(),
    st.floats(),
    st.integers(),
)
_STATION = station()


@settings(suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.dictionaries(_FIELDS, _VALUES, max_size=6))
def test_any_browser_message_is_refused_or_yields_finite_bounded_commands(
    message: dict[str, Any],
) -> None:
    request = parse_browser_message(message, SCALES)
    if request is None:
        return
    for command in _STATION.handle(request, 0.0, 0.0):
        numbers = [v for v in dataclasses.astuple(command) if isinstance(v, float)]
        assert all(math.isfinite(v) for v in numbers)
        if isinstance(command, FreeLookCommand | TankCommand | VelocityCommand):
            assert all(abs(v) <= 10.0 for v in numbers)


def test_from_the_key_to_the_wheels_within_one_control_cycle() -> None:
    """The whole sans-I/O path: page input → station core → bytes → robot session → robot."""
    core = station()
    robot = SimulatedRobot(
        CONFIG, load_world("square"), seed=3, pose=(7.0, 7.0, 0.0), use_localization=False
    )
    robot_end = LinkSession(NativeCodec(KEY, sender=100), spacing=CONFIG.link.robot_tx_spacing)

    def deliver(messages: list[object]) -> None:
        for message in messages:
            for packet in core.session.send(message, robot.now()):  # type: ignore[arg-type]
                for event in robot_end.receive(packet, robot.now()):
                    assert isinstance(event, Accepted)
                    robot.send(event.message, event.decoded.sender)

    deliver(core.start())
    deliver(press(core, {"type": "mode", "mode": "free_look"}))
    for _ in range(20):  # a second of the station's transmissions, nothing pressed
        robot.run_for(0.047)
        core.on_link_message(robot.core.telemetry(robot.now()), robot.now())  # it sees
        deliver(core.periodic(robot.now()))
    out = robot.core.control.last_output
    assert out.v_left == out.v_right == 0.0
    pressed = robot.now()
    deliver(press(core, {"type": "axes", "mode": "free_look", "forward": 0.6}, pressed))
    while abs(robot.core.control.last_output.v_left) < 1e-3:
        robot.run_for(0.005)
        assert robot.now() - pressed <= CONFIG.link.control_period + 1e-9


def test_a_linear_drive_between_equal_points_is_refused_with_the_reason() -> None:
    with pytest.raises(RefusedInputError, match=r"two different points \(both at x = 1\.5 m\)"):
        parse_browser_message({"type": "linear", "action": "start", "x0": 1.5, "x1": 1.5}, SCALES)


def test_a_held_input_the_page_stops_repeating_becomes_a_stop() -> None:
    """A page that stalls (slow renderer, hung tab) stops the robot: it repeats a held key
    every 50 ms, and a held input not repeated for HELD_INPUT_TIMEOUT is a stop of its kind."""
    from freelook.operator._core import HELD_INPUT_TIMEOUT

    core = station()
    drive = {"type": "axes", "mode": "free_look", "forward": 1}
    t = 0.0
    press(core, drive, t)
    while t < 2.0:  # repeated while held: the command stays in force
        t += 0.05
        press(core, drive, t)
        assert core.periodic(t)[0] == FreeLookCommand(CONFIG.limits.max_speed, 0.0, 0.0)
    stalled = t
    for k in range(1, int(HELD_INPUT_TIMEOUT / 0.02)):  # the page stalls; the key still held
        assert core.periodic(stalled + k * 0.02)[0] != FreeLookCommand(0.0, 0.0, 0.0)
    t = stalled + HELD_INPUT_TIMEOUT + 0.02
    assert core.periodic(t)[0] == FreeLookCommand(0.0, 0.0, 0.0)
    assert core.periodic(t + 1.0)[0] == FreeLookCommand(0.0, 0.0, 0.0)
    assert core.held_inputs_expired == 1
    # a released key (zero axes) is no held input: nothing expires; a Tank stick the same way
    press(core, {"type": "axes", "mode": "tank", "forward": 0.5}, 10.0)
    assert core.periodic(10.5)[0] == TankCommand(0.0, 0.0)
    press(core, {"type": "axes", "mode": "tank"}, 11.0)
    core.periodic(12.0)
    assert core.held_inputs_expired == 2
    # the thesis keyboard mode's set speed is a latched setting, not a held input
    press(core, {"type": "key", "key": "up"}, 20.0)
    assert core.periodic(25.0)[0] == VelocityCommand(pytest.approx(0.02), 0.0)


def test_after_the_session_re_opens_nothing_from_before_drives_until_the_operator_lets_go() -> None:
    """A robot that restarted drove 0.28 m on the station's held command; now the held command
    is dropped and a held key counts only after the operator lets go of it."""
    core = station()
    press(core, {"type": "mode", "mode": "free_look"})
    held = {"type": "axes", "mode": "free_look", "forward": 0.6}
    press(core, held, 0.1)
    assert isinstance(core.periodic(0.15)[0], FreeLookCommand)
    core.session_reopened(1.0)
    assert core.needs_release
    assert core.drive_command is None
    # the page keeps repeating the held key: nothing moving goes out
    for k in range(10):
        assert press(core, held, 1.05 + 0.05 * k) == []
    assert not any(isinstance(m, FreeLookCommand) and m.v1 != 0.0 for m in core.periodic(1.6))
    assert core.inputs_held_back == 10
    # let go: the rest is sent, and the next press drives
    assert press(core, {"type": "axes", "mode": "free_look"}, 1.7) == [
        FreeLookCommand(0.0, 0.0, 0.0, 0.0)
    ]
    assert not core.needs_release
    (moving,) = press(core, held, 1.8)
    assert isinstance(moving, FreeLookCommand)
    assert moving.v1 > 0.0


def test_a_key_press_after_a_re_open_is_a_new_act_and_the_keyboard_starts_from_rest() -> None:
    core = station()
    press(core, {"type": "mode", "mode": "keyboard"})
    for _ in range(5):
        press(core, {"type": "key", "key": "up"})
    core.session_reopened(1.0)
    (command,) = press(core, {"type": "key", "key": "up"}, 1.1)
    assert command == VelocityCommand(CONFIG.limits.keyboard_speed_step, 0.0)
