"""A ROS scan's geometry as ROS means it: any start, either sign of step, full circles, a laser
turned on the robot or on its head; and the description's pins, checked only when pinned."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from freelook.config import LaserConfig, LaserMountConfig
from freelook.hal import RangeScan
from freelook.hardware.ros2 import (
    ScanLayout,
    check_scan_layout,
    layout_note,
    scan_problem,
    scan_sweep,
)

DEG = math.pi / 180


def _off(a: np.ndarray | float, b: np.ndarray | float) -> np.ndarray:
    """How far apart two bearings are, round the circle (rad)."""
    return np.abs(np.remainder(np.asarray(a) - np.asarray(b) + math.pi, math.tau) - math.pi)


@st.composite
def layouts(draw: st.DrawFn) -> tuple[ScanLayout, float, bool]:
    """A scan's layout (any start, either sign, up to a full circle) and a laser's mount."""
    beams = draw(st.integers(2, 1500))
    # a lidar all round (beams one step apart over 360°), or any fan up to a full turn
    full = draw(st.booleans())
    step = math.tau / beams if full else draw(st.floats(1e-3, math.tau / (beams - 1)))
    sign = draw(st.sampled_from([1.0, -1.0]))
    start = draw(st.floats(-2 * math.tau, 2 * math.tau))
    yaw = draw(st.floats(-math.tau, math.tau))
    upside_down = draw(st.booleans())
    return ScanLayout("laser", start, sign * step, beams), yaw, upside_down


@given(layouts())
def test_every_beam_lands_on_its_bearing_yaw_plus_or_minus_its_angle(
    case: tuple[ScanLayout, float, bool],
) -> None:
    layout, yaw, upside_down = case
    sweep = scan_sweep(layout, yaw, upside_down)
    n = layout.beams
    # the sweep: n beams, counter-clockwise, from a first bearing in [−π, π)
    assert sweep.beams == n
    assert sweep.step == pytest.approx(abs(layout.angle_increment), rel=1e-12)
    assert sweep.step > 0.0
    assert -math.pi - 1e-3 * sweep.step <= sweep.first < math.pi
    # each message beam, where arrange puts it, is at yaw ± its angle
    index = sweep.arrange(np.arange(n, dtype=np.float64)).astype(int)
    assert sorted(index.tolist()) == list(range(n))  # every beam once
    angle = layout.angle_min + index * layout.angle_increment
    want = yaw + (-angle if upside_down else angle)
    tolerance = 1e-9 * (1.0 + n) + 2e-3 * sweep.step  # a full circle closes within FULL_CIRCLE
    assert np.all(_off(sweep.bearings(), want) <= tolerance)


@given(layouts())
def test_a_full_circle_starts_within_a_step_after_minus_pi_and_stays_below_pi(
    case: tuple[ScanLayout, float, bool],
) -> None:
    layout, yaw, upside_down = case
    sweep = scan_sweep(layout, yaw, upside_down)
    if abs(layout.beams * sweep.step - math.tau) > 1e-3 * sweep.step:
        return
    bearings = sweep.bearings()
    assert -math.pi - 1e-9 <= bearings[0] < -math.pi + sweep.step + 1e-9
    assert bearings[-1] < math.pi + 1e-9


@given(layouts(), st.floats(-0.5, 0.5), st.floats(-0.5, 0.5), st.data())
def test_the_points_of_a_scan_are_where_its_laser_saw_them(
    case: tuple[ScanLayout, float, bool], forward: float, left: float, data: st.DataObject
) -> None:
    """A range r along message beam i is the point mount + r·(cos, sin)(yaw ± angle_i) on the
    robot, whatever the layout: the scan's points as :class:`RangeScan` makes them."""
    layout, yaw, upside_down = case
    n = layout.beams
    ranges = np.asarray(data.draw(st.lists(st.floats(0.05, 20.0), min_size=n, max_size=n)))
    sweep = scan_sweep(layout, yaw, upside_down)
    scan = RangeScan(
        0.0,
        sweep.arrange(ranges),
        sweep.bearings(),
        np.full(n, forward),
        np.full(n, left),
        30.0,
    )
    angle = layout.angle_min + np.arange(n) * layout.angle_increment
    bearing = yaw + (-angle if upside_down else angle)
    want = np.column_stack((forward + ranges * np.cos(bearing), left + ranges * np.sin(bearing)))
    got = scan.points()
    # the same points (in the sweep's order): match each to its nearest
    gap = np.hypot(got[:, None, 0] - want[None, :, 0], got[:, None, 1] - want[None, :, 1])
    assert np.all(gap.min(axis=1) < 1e-6 + 20.0 * 2e-3 * sweep.step)
    assert np.all(gap.min(axis=0) < 1e-6 + 20.0 * 2e-3 * sweep.step)


@pytest.mark.parametrize(
    ("start", "step", "yaw", "upside_down", "first", "ahead"),
    [
        # the Husky's: 360 beams from −π every 1°; straight ahead is beam 180
        (-math.pi, DEG, 0.0, False, -180.0, 180),
        # 0 … 2π: beam 0 ahead, beam 180 behind (the sweep starts there, at −180°)
        (0.0, DEG, 0.0, False, -180.0, 0),
        # a reversed increment from +π: beam 180 is ahead again
        (math.pi, -DEG, 0.0, False, -180.0, 180),
        # on its head, turned to face backwards: its beam 0 (angle −π) is ahead
        (-math.pi, DEG, math.pi, True, -180.0, 0),
    ],
)
def test_a_360_lidar_s_beam_ahead_is_found_whatever_its_layout(
    start: float, step: float, yaw: float, upside_down: bool, first: float, ahead: int
) -> None:
    layout = ScanLayout("laser", start, step, 360)
    sweep = scan_sweep(layout, yaw, upside_down)
    assert math.degrees(sweep.first) == pytest.approx(first)
    index = sweep.arrange(np.arange(360, dtype=np.float64)).astype(int)
    bearings = sweep.bearings()
    straight = int(np.argmin(_off(bearings, 0.0)))
    assert _off(bearings[straight], 0.0) < 1e-9
    assert index[straight] == ahead


def test_an_upside_down_laser_turns_its_angles_clockwise_about_its_yaw() -> None:
    # a 180° laser on its head, its x axis to the left (yaw 90°): angle +90° is straight ahead
    layout = ScanLayout("laser", -math.pi / 2, DEG, 181)
    sweep = scan_sweep(layout, math.pi / 2, upside_down=True)
    assert sweep.reversed
    index = sweep.arrange(np.arange(181, dtype=np.float64)).astype(int)
    bearings = sweep.bearings()
    assert math.degrees(bearings[0]) == pytest.approx(0.0, abs=1e-9)
    assert index[0] == 180  # the message's last beam, at +90° in the laser: ahead
    assert math.degrees(bearings[-1]) == pytest.approx(180.0, abs=1e-9)
    assert index[-1] == 0  # its first, at −90°: behind


def test_an_unpinned_laser_takes_any_layout_and_the_log_says_how_it_differs() -> None:
    laser = LaserConfig(mount_forward=0.12, pinned=())
    assert laser.pinned == ()
    for layout in (
        ScanLayout("laser", -math.pi, DEG, 360),
        ScanLayout("laser", 0.0, DEG, 360),
        ScanLayout("laser", math.pi, -DEG, 360),
        ScanLayout("base_scan", -2.356, 0.00436, 1081),
    ):
        assert check_scan_layout(layout, laser, "") is None
        note = layout_note(layout, laser)
        assert note is not None
        assert "taken as the scan says" in note
        assert "\n" not in note
    same = ScanLayout("laser", -math.pi / 2, DEG, 181)
    assert layout_note(same, laser) is None


def test_a_pinned_mismatch_is_one_line_naming_the_field() -> None:
    husky = ScanLayout("laser", -math.pi, DEG, 360)
    beams = check_scan_layout(husky, LaserConfig(beams=541, fov_deg=270.0), "")
    assert beams is not None
    assert "pins beams = 541" in beams
    assert "\n" not in beams
    fov = check_scan_layout(husky, LaserConfig(beams=360, fov_deg=360.0), "")
    assert fov is not None
    assert "pins fov_deg = 360" in fov
    assert "over 359°" in fov
    # the Husky's own pins: 360 beams over 359° (first to last), wherever they start
    for start, step in ((-math.pi, DEG), (0.0, DEG), (math.pi, -DEG)):
        layout = ScanLayout("laser", start, step, 360)
        assert check_scan_layout(layout, LaserConfig(beams=360, fov_deg=359.0), "") is None
    # a further laser's pins, named by its section
    rear = LaserMountConfig(topic="scan_rear", beams=541)
    said = check_scan_layout(husky, rear, "", "[[laser.extra]] 'scan_rear'")
    assert said is not None
    assert "[[laser.extra]] 'scan_rear' pins beams = 541" in said
    assert check_scan_layout(husky, LaserMountConfig(topic="scan_rear"), "") is None


@pytest.mark.parametrize(
    ("layout", "said"),
    [
        (ScanLayout("laser", math.nan, DEG, 360), "not finite"),
        (ScanLayout("laser", 0.0, math.inf, 360), "not finite"),
        (ScanLayout("laser", 0.0, DEG, 1), "two at least"),
        (ScanLayout("laser", 0.0, 0.0, 360), "angle_increment 0"),
        (ScanLayout("laser", 0.0, DEG, 800), "more than once round"),
    ],
)
def test_a_scan_that_lays_out_no_sweep_is_refused_pinned_or_not(
    layout: ScanLayout, said: str
) -> None:
    assert scan_problem(layout) is not None
    problem = check_scan_layout(layout, LaserConfig(pinned=()), "")
    assert problem is not None
    assert said in problem
