"""A driver whose cockpit cannot see the robot no longer keeps it driving (sans-I/O,
lock-step): the station reports what it receives, and the robot judges it."""

from __future__ import annotations

import math
from collections.abc import Callable

from freelook.config import load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import ControlRequest, Permissions, ReceptionReport, VelocityCommand
from freelook.maps import load_world
from freelook.robot import BLIND_GRACE, VIDEO_BLIND_GRACE
from freelook.robot._sight import FRAME_IN_FLIGHT
from freelook.types import SafetyFlags

CONFIG = load_robot("pioneer3dx")
WORLD = load_world("square")
TIMEOUT = CONFIG.safety.watchdog_timeout + BLIND_GRACE
SEES = ReceptionReport(0.05, 0.05, 0.0)


def driving_robot() -> SimulatedRobot:
    """Station 1 holds control and drives forward at 0.3 m/s, seeing the robot."""
    r = SimulatedRobot(CONFIG, WORLD, seed=3, pose=(7.0, 7.0, 0.0), use_localization=False)
    r.send(ControlRequest(1, 10), 1)
    r.send(SEES, 1)
    for _ in range(40):
        r.send(VelocityCommand(0.3, 0.0), 1)
        r.run_for(0.047)
    assert r.core.control.last_output.v > 0.25
    return r


def drive_on(r: SimulatedRobot, seconds: float, report: ReceptionReport | None) -> float:
    """Station 1 keeps sending its command (and ``report`` every ~0.2 s); returns how far the
    robot went."""
    x0, y0 = r.sim.ground_truth.x, r.sim.ground_truth.y
    start = r.now()
    beat = 0
    while r.now() - start < seconds:
        r.send(VelocityCommand(0.3, 0.0), 1)
        if report is not None and beat % 4 == 0:
            r.send(report, 1)
        beat += 1
        r.run_for(0.047)
    x1, y1 = r.sim.ground_truth.x, r.sim.ground_truth.y
    return math.hypot(x1 - x0, y1 - y0)


def test_a_blind_driver_stops_the_robot_and_a_seeing_one_drives_on() -> None:
    seeing = driving_robot()
    assert drive_on(seeing, 2.0, SEES) > 0.5  # the report alone changes nothing

    blind = driving_robot()
    # the cockpit has had no telemetry for 0.6 s (a flood, a broken downlink) but its commands
    # still reach the robot: without the report the robot would drive on (the other robot)
    drive_on(blind, 0.2, ReceptionReport(TIMEOUT + 0.1, 3.0, 0.0))
    assert blind.core.control.last_output.flags & SafetyFlags.WATCHDOG
    braking = 0.3**2 / (2 * CONFIG.drive.max_deceleration)
    assert drive_on(blind, 2.0, ReceptionReport(TIMEOUT + 0.5, 3.0, 0.0)) < braking + 0.02
    assert blind.core.control.last_output.v == 0.0
    assert any("station 1 cannot see" in line for line in blind.core.log.notices)

    # it sees again: its commands count again
    assert drive_on(blind, 2.0, SEES) > 0.4
    assert any("station 1 sees again" in line for line in blind.core.log.notices)


def test_a_report_whose_age_is_not_a_number_counts_as_blind() -> None:
    r = driving_robot()
    drive_on(r, 2.0, ReceptionReport(math.nan, 0.0, 0.0))
    assert r.core.control.last_output.v == 0.0


def test_another_stations_blindness_does_not_stop_the_driver() -> None:
    r = driving_robot()
    r.send(ReceptionReport(100.0, 100.0, 0.0), 2)  # an observer, blind or lying
    assert drive_on(r, 1.0, SEES) > 0.25
    assert r.core.control.last_output.v > 0.25


def test_refusals_name_the_station_in_the_log_and_a_flood_of_them_cannot_fill_it() -> None:
    r = driving_robot()
    for _ in range(1000):
        r.send(VelocityCommand(0.3, 0.0), 2)  # station 2 does not hold control
    assert not r.core.log.notices  # not holding control is counted, not logged line by line
    observer = Permissions(observer=True)
    for _ in range(1000):
        r.core.handle(VelocityCommand(0.3, 0.0), r.now(), 3, observer)
    lines = list(r.core.log.notices)
    assert lines[0].startswith("refused station 3: an observer may not send VelocityCommand")
    assert [line.rsplit("(", 1)[-1] for line in lines[1:]] == [
        "10 times)",
        "100 times)",
        "1000 times)",
    ]


def test_a_station_that_has_not_heard_the_robot_yet_does_not_drive_it_and_is_no_news() -> None:
    r = SimulatedRobot(CONFIG, WORLD, seed=3, pose=(7.0, 7.0, 0.0), use_localization=False)
    r.send(ControlRequest(1, 10), 1)
    r.send(ReceptionReport(3600.0, 3600.0, 0.0), 1)  # its first report: nothing heard yet
    assert drive_on(r, 1.0, None) < 0.01
    r.send(SEES, 1)
    assert drive_on(r, 2.0, SEES) > 0.4
    assert not r.core.log.notices  # the start of every session is not worth a log line


def drive_with_video(
    r: SimulatedRobot, seconds: float, video_age: Callable[[float], float], fps: float = 15.0
) -> float:
    """Station 1 drives on while the robot sends its camera at ``fps`` (0: sends none) and
    the station reports its newest picture arrived ``video_age(t)`` ago (telemetry on time);
    how far the robot went."""
    x0, y0 = r.sim.ground_truth.x, r.sim.ground_truth.y
    start, beat = r.now(), 0
    next_frame = start if fps > 0 else math.inf
    while r.now() - start < seconds:
        while next_frame <= r.now():
            r.core.sight.frame_sent(next_frame)  # as the server does for each frame sent
            next_frame += 1.0 / fps
        r.send(VelocityCommand(0.3, 0.0), 1)
        if beat % 4 == 0:
            r.send(ReceptionReport(0.05, video_age(r.now() - start), 0.0), 1)
        beat += 1
        r.run_for(0.047)
    return math.hypot(r.sim.ground_truth.x - x0, r.sim.ground_truth.y - y0)


def test_a_driver_whose_picture_froze_while_frames_are_sent_is_blind() -> None:
    # telemetry on time, but the camera's frames stop reaching the station (forged datagrams
    # crowding them out): from then on its picture only ages
    r = driving_robot()
    assert drive_with_video(r, 1.0, lambda t: 0.07) > 0.25  # seeing: drives on
    frozen_at = r.now()
    went = drive_with_video(r, 4.0, lambda t: 0.07 + t)
    bound = CONFIG.safety.watchdog_timeout + VIDEO_BLIND_GRACE
    assert went < 0.3 * (bound + FRAME_IN_FLIGHT) + 0.3  # stopped within its bound, and braking
    assert r.core.control.last_output.v == 0.0
    assert r.core.control.last_output.flags & SafetyFlags.WATCHDOG
    assert any("camera picture is" in line for line in r.core.log.notices)
    assert r.now() - frozen_at > 3.9
    assert drive_with_video(r, 2.0, lambda t: 0.07) > 0.3  # the picture back: drives again


def test_an_old_picture_is_no_blindness_while_no_frame_is_being_sent() -> None:
    # a camera that stopped, or a radio with no room for it: the station's last picture came
    # with the last frame sent and only ages, but nothing sent went missing; the watchdog and
    # the telemetry judge as before
    r = driving_robot()
    drive_with_video(r, 1.0, lambda t: 0.0)
    assert drive_with_video(r, 2.0, lambda t: t, fps=0.0) > 0.5
    assert r.core.control.last_output.v > 0.25


def test_a_slow_camera_whose_frames_arrive_is_not_blindness() -> None:
    # 2 frames a second, each arriving: the picture is up to half a second old
    r = driving_robot()
    assert drive_with_video(r, 3.0, lambda t: 0.05 + t % 0.5, fps=2.0) > 0.8


def test_a_station_the_link_forgets_leaves_nothing_behind_in_the_program() -> None:
    r = driving_robot()
    core = r.core
    r.send(ReceptionReport(TIMEOUT + 0.1, 3.0, 0.0), 2)  # an observer, blind
    r.send(VelocityCommand(0.3, 0.0), 2)  # not the holder: dropped and counted
    assert not core.sight.sees(2)
    assert core.arbiter.dropped[2] == 1
    assert core.holds_control(1, r.now())
    assert not core.holds_control(2, r.now())
    core.forget_station(2)
    assert core.sight.sees(2)  # nothing reported: a new session reports afresh
    assert 2 not in core.sight._saw
    assert 2 not in core.arbiter.dropped
    assert drive_on(r, 1.0, SEES) > 0.2  # the driver drives on
