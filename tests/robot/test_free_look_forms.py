"""A W press in Free Look keeps one shape per stage from the page to the wheels
(docs/architecture.md, "A Free Look key press"): the page's message is read straight into the
link's FreeLookCommand, the robot acts on the very command it decoded, and the drive is given
one hal.DriveCommand a cycle, the same one the cycle's output carries.

Sans-I/O on a virtual clock: the station core reads the page's message, the operator's codec
encodes it and the robot's decodes it (the bytes a radio would carry), and a lock-step robot
program drives the simulator.
"""

from __future__ import annotations

from freelook.config import load_robot
from freelook.hal import DriveCommand
from freelook.hardware.sim import SimulatedRobot
from freelook.link import ControlRequest, FreeLookCommand, LinkSession, Message, NativeCodec
from freelook.maps import load_world
from freelook.operator import StationCore, parse_browser_message
from freelook.robot._modes import FreeLooking

KEY = bytes(range(32))
STATION = 1
CONFIG = load_robot("pioneer3dx")


def robot() -> SimulatedRobot:
    return SimulatedRobot(
        CONFIG, load_world("square"), seed=3, pose=(7.0, 7.0, 0.0), use_localization=False
    )


def carried(message: Message, now: float) -> Message:
    """``message`` as the robot's link session hands it on: encoded, then decoded."""
    packet = NativeCodec(KEY, sender=STATION).encode(message, 1.8e9 + now)
    return NativeCodec(KEY, sender=100).decode(packet).message


def test_the_page_message_is_read_straight_into_the_link_command() -> None:
    core = StationCore(CONFIG, None, LinkSession(NativeCodec(KEY, sender=STATION), spacing=0.05))
    page = {"type": "axes", "mode": "free_look", "forward": 0.6, "pan": 0.0, "tilt": 0.0}
    request = parse_browser_message(page, core.scales)
    assert request == FreeLookCommand(0.6 * CONFIG.limits.max_speed, 0.0, 0.0, 0.0)
    (sent,) = core.handle(request, 0.1, 1.8e9)
    assert sent is request  # the station sends the command the page's message was read into


def test_the_robot_acts_on_the_command_it_decoded_and_the_drive_gets_what_the_cycle_says() -> None:
    r = robot()
    given: list[DriveCommand] = []
    drive = r.hardware.drive
    forward = drive.command

    def record(command: DriveCommand) -> None:
        given.append(command)
        forward(command)

    drive.command = record  # type: ignore[method-assign]
    r.send(carried(ControlRequest(STATION, 10), 0.0), STATION)
    w = carried(FreeLookCommand(0.3, 0.0, 0.0), 0.0)
    # a command beyond the robot's speed arrives as it came: only the controller limits it
    fast = carried(FreeLookCommand(15.0, 0.0, 0.0), 0.0)
    for message in (w, fast):
        r.send(message, STATION)
        mode = r.core.modes.current
        assert isinstance(mode, FreeLooking)
        assert mode.latest is message  # no copy of the command between the link and the mode
        for _ in range(10):
            before = len(given)
            r.run_for(CONFIG.link.control_period)
            assert len(given) > before
            out = r.core.control.last_output
            assert out.drive is given[-1]  # one DriveCommand: the drive's and the output's
            assert (out.v, out.v_left, out.v_right) == (
                given[-1].v,
                given[-1].v_left,
                given[-1].v_right,
            )
    out = r.core.control.last_output
    assert 0.0 < out.v <= CONFIG.limits.max_speed + 1e-9
    assert max(abs(out.v_left), abs(out.v_right)) <= CONFIG.drive.max_wheel_speed + 1e-9
