"""The station's motion predictor (operator/_prediction.py): the robot's pose now and over the
next seconds from its last report and the commands in flight, on the robot's own description.
Properties over poses, delays and commands (hypothesis, derandomized under the ci profile)."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import RobotConfig, load_robot
from freelook.link import EStop, FreeLookCommand, Message, Telemetry, VelocityCommand
from freelook.operator import MotionPredictor
from freelook.operator._prediction import DelayStats, camera_footprint

PIONEER = load_robot("pioneer3dx")
FOI = load_robot("foi-ugv")  # a slip-ring pan: Free Look turns the camera without a limit
OFFSET = 1000.0  # the robot's clock ahead of the station's (s)

coordinate = st.floats(-50, 50)
heading = st.floats(-math.pi, math.pi)
delay = st.floats(0.0, 1.5)
ahead = st.floats(0.0, 3.0)


def report(pose: tuple[float, float, float], at: float, v: float = 0.0, **more: float) -> Telemetry:
    """A report stamped ``at`` on the station's clock (the robot's reads OFFSET more)."""
    return Telemetry(
        stamp=at + OFFSET,
        odom=pose,
        pose=pose,
        v=v,
        omega=0.0,
        cmd_v=v,
        cmd_omega=0.0,
        pan=0.0,
        tilt=0.0,
        **more,  # type: ignore[arg-type]
    )


def repeat(p: MotionPredictor, command: Message, since: float, until: float) -> None:
    """The station sending ``command`` every 47 ms (its spacing) from ``since`` to ``until``."""
    k = 0
    while since + 0.047 * k <= until:
        p.sent(command, since + 0.047 * k)
        k += 1


def predictor(
    config: RobotConfig, pose: tuple[float, float, float], lag: float, **kw: float
) -> MotionPredictor:
    """A predictor that heard one report stamped at 10 s, arrived ``lag`` s later."""
    p = MotionPredictor(config)
    p.observe(report(pose, 10.0, **kw), 10.0 + lag, OFFSET)
    return p


@settings(max_examples=60)
@given(coordinate, coordinate, heading, delay, ahead)
def test_no_commands_leave_a_robot_at_rest_where_it_is(
    x: float, y: float, theta: float, lag: float, later: float
) -> None:
    p = predictor(PIONEER, (x, y, theta), lag)
    got = p.predict(10.0 + lag + later)
    assert got is not None
    assert got.delay == pytest.approx(lag)
    for point in (got.now, got.arrival, *got.path):
        assert (point.x, point.y) == pytest.approx((x, y), abs=1e-12)
        assert math.cos(point.theta - theta) == pytest.approx(1.0, abs=1e-12)
    assert got.now.t == pytest.approx(10.0 + lag + later)
    assert got.arrival.t == pytest.approx(got.now.t + lag + 0.5 * PIONEER.link.control_period)


@settings(max_examples=60)
@given(coordinate, coordinate, heading, delay, ahead, st.floats(-3.0, 3.0))
def test_a_straight_command_moves_the_robot_v_t_within_its_limits(
    x: float, y: float, theta: float, lag: float, later: float, v: float
) -> None:
    """Held since well before the report, with the robot at that speed (the tracks' limit when
    asked for more): the pose now is v·t along the heading, t since the report."""
    top = min(abs(v), PIONEER.drive.max_wheel_speed)
    speed = math.copysign(top, v)
    p = predictor(PIONEER, (x, y, theta), lag, v=speed)
    now = 10.0 + lag + later
    repeat(p, VelocityCommand(v, 0.0), 8.0, now)  # from 2 s before the report on
    got = p.predict(now)
    assert got is not None
    travel = speed * (now - 10.0)
    assert got.now.x == pytest.approx(x + travel * math.cos(theta), abs=1e-9)
    assert got.now.y == pytest.approx(y + travel * math.sin(theta), abs=1e-9)
    assert got.now.v == pytest.approx(speed, abs=1e-12)
    ends = got.path[-1]
    assert math.hypot(ends.x - x, ends.y - y) == pytest.approx(top * (ends.t - 10.0), abs=1e-9)


@settings(max_examples=40)
@given(delay, st.floats(0.05, 1.2))
def test_from_rest_the_tracks_speed_up_within_their_acceleration(lag: float, v: float) -> None:
    """A command sent as the report left lands a delay later: until then the robot stands,
    after it it gains speed no faster than max_acceleration, never past v."""
    p = predictor(PIONEER, (0.0, 0.0, 0.0), lag)
    repeat(p, VelocityCommand(v, 0.0), 10.0, 10.0 + lag)
    got = p.predict(10.0 + lag)
    assert got is not None
    lands = 10.0 + lag + 0.5 * PIONEER.link.control_period
    for point in got.path:
        moving = max(0.0, point.t - lands)
        assert point.x <= v * moving + 1e-9
        assert point.x <= 0.5 * PIONEER.drive.max_acceleration * moving**2 + 1e-9
        assert abs(point.y) < 1e-12
        assert point.v <= v + 1e-12


def camera(
    config: RobotConfig, x: float, y: float, theta: float, pan: float
) -> tuple[float, float, float]:
    pt = config.pan_tilt
    assert pt is not None
    c, s = math.cos(theta), math.sin(theta)
    return (
        x + c * pt.mount_forward - s * pt.mount_left,
        y + s * pt.mount_forward + c * pt.mount_left,
        theta + pan,
    )


@settings(max_examples=40)
@given(coordinate, coordinate, heading, delay, st.floats(-1.0, 1.0).filter(lambda w: abs(w) > 0.01))
def test_a_free_look_turn_keeps_the_camera_where_it_is_while_its_heading_turns(
    x: float, y: float, theta: float, lag: float, omega: float
) -> None:
    """The camera-centred law: a turn of the mouse alone turns the camera's heading at ω from
    when it lands and leaves the camera's position where it was."""
    p = predictor(FOI, (x, y, theta), lag)
    repeat(p, FreeLookCommand(0.0, 0.0, omega), 10.0, 10.0 + lag)
    got = p.predict(10.0 + lag)
    assert got is not None
    start = camera(FOI, x, y, theta, 0.0)
    lands = 10.0 + lag + 0.5 * FOI.link.control_period
    top = FOI.pan_tilt.max_pan_rate if FOI.pan_tilt is not None else math.inf
    rate = math.copysign(min(abs(omega), top, math.radians(FOI.limits.max_turn_rate_deg)), omega)
    for point in got.path:
        cx, cy, psi = camera(FOI, point.x, point.y, point.theta, point.pan)
        assert (cx, cy) == pytest.approx(start[:2], abs=1e-9)
        turned = rate * max(0.0, point.t - lands)
        assert math.cos(psi - theta - turned) == pytest.approx(1.0, abs=1e-9)


@settings(max_examples=30)
@given(delay, st.floats(0.1, 1.0))
def test_a_command_no_longer_sent_stops_the_robot_after_the_watchdog_s_timeout(
    lag: float, v: float
) -> None:
    """Sent for 0.5 s and then not again (the page went away): the robot's watchdog stops it
    its timeout after the last one landed, braking at max_deceleration; an e-stop, at once."""
    timeout = PIONEER.safety.watchdog_timeout
    p = predictor(PIONEER, (0.0, 0.0, 0.0), lag, v=v)
    repeat(p, VelocityCommand(v, 0.0), 8.0, 10.0)
    got = p.predict(10.0 + lag + 3.0)
    assert got is not None
    lapses = 10.0 + lag + 0.5 * PIONEER.link.control_period + timeout
    braked = lapses + v / PIONEER.drive.max_deceleration + 0.3  # the motor's lag too
    for point in got.path:
        if point.t <= lapses:
            assert point.v == pytest.approx(v, abs=1e-9)
        elif point.t > braked:
            assert abs(point.v) < 1e-3
    stopped = predictor(PIONEER, (0.0, 0.0, 0.0), lag, v=v)
    repeat(stopped, VelocityCommand(v, 0.0), 8.0, 9.99)
    stopped.sent(EStop(True), 10.0)  # the station sends nothing that moves after it
    halted = stopped.predict(10.0 + lag)
    assert halted is not None
    assert abs(halted.path[-1].v) < 1e-3
    assert halted.path[-1].x < v * (lag + 0.01) + v * v / PIONEER.drive.max_deceleration


def test_the_envelope_grows_with_the_delay_s_spread() -> None:
    """Reports whose delays spread 0.1 s: the path's envelope is wider than the base by speed
    times spread, and wider still where the path turned."""
    p = MotionPredictor(PIONEER)
    for k, lag in enumerate((0.5, 0.6, 0.55, 0.52)):
        p.observe(
            report((0.0, 0.0, 0.0), 10.0 + 0.03 * k, v=0.3),
            10.0 + 0.03 * k + lag,
            OFFSET,
        )
    repeat(p, VelocityCommand(0.3, 0.3), 8.0, 11.0)
    got = p.predict(11.0)
    assert got is not None
    assert got.spread == pytest.approx(0.1)
    assert got.delay == pytest.approx(0.535)
    assert got.radii[0] == pytest.approx(0.05 + 0.1 * (0.3 + 0.3 * 0.0), abs=2e-3)
    assert all(b > a for a, b in zip(got.radii[1:], got.radii[2:], strict=False))
    assert got.radii[-1] > got.radii[0]


def test_a_report_older_than_the_one_held_is_not_taken_and_no_clock_no_prediction() -> None:
    """Nor from a report more than max_lead (5 s) old: the robot may have done anything. One
    from further back than that is a robot whose clock started again, and is taken."""
    p = MotionPredictor(PIONEER)
    p.observe(report((1.0, 0.0, 0.0), 10.0), 10.5, None)
    assert p.predict(11.0) is None
    p.observe(report((1.0, 0.0, 0.0), 10.0), 10.5, OFFSET)
    p.observe(report((5.0, 0.0, 0.0), 9.0), 10.6, OFFSET)
    got = p.predict(11.0)
    assert got is not None
    assert got.now.x == pytest.approx(1.0)
    assert p.predict(15.0) is not None
    assert p.predict(15.01) is None
    # a robot whose clock started again (restarted): its reports from far back are taken
    p.observe(report((7.0, 0.0, 0.0), 3.0), 10.7, OFFSET)
    again = p.predict(3.5)
    assert again is not None
    assert again.now.x == pytest.approx(7.0)


def test_settings_out_of_range_are_refused_by_name() -> None:
    with pytest.raises(ValueError, match=r"step 0\.0 s must be finite and positive"):
        MotionPredictor(PIONEER, step=0.0)
    with pytest.raises(ValueError, match=r"horizon -1\.0 s must be finite and not negative"):
        MotionPredictor(PIONEER, horizon=-1.0)
    with pytest.raises(ValueError, match=r"path_step nan s must be finite and positive"):
        MotionPredictor(PIONEER, path_step=math.nan)


def test_delay_stats_keep_the_window_s_median_and_spread() -> None:
    stats = DelayStats(window=1.0)
    for at, d in ((0.0, 2.0), (1.5, 0.5), (1.6, 0.7), (1.7, 0.6)):
        stats.add(at, d)
    assert stats.median == pytest.approx(0.6)
    assert stats.spread == pytest.approx(0.2)


def test_the_camera_footprint_lies_ahead_of_the_camera_between_its_rows() -> None:
    """Level, the Pioneer's camera (0.35 m up, 60° across 640×480) sees the ground from
    0.35/tan(atan(240/f)) ahead to the footprint's reach, as wide as its field there."""
    p = predictor(PIONEER, (0.0, 0.0, 0.0), 0.5)
    got = p.predict(10.5)
    assert got is not None
    corners = camera_footprint(PIONEER, got.now, 0.0)
    focal = 320 / math.tan(math.radians(30))
    near = 0.35 / (240 / focal)
    assert corners[0] == pytest.approx((0.15 + near, near * math.tan(math.radians(30))))
    assert corners[1][0] == pytest.approx(0.15 + 4.0)
    assert corners[3] == pytest.approx((0.15 + near, -near * math.tan(math.radians(30))))
    assert camera_footprint(PIONEER, got.now, math.radians(-40))[1][0] < 0.15 + 4.0  # looks down
