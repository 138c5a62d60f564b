"""A reading's points are worked out once, and never handed back for a different reading."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.hal import RangeScan
from freelook.safety._scan_points import ScanPoints, _cone_points_numpy


def _scan(ranges: np.ndarray, bearings: np.ndarray, origin: np.ndarray) -> RangeScan:
    return RangeScan(1.0, ranges, bearings, origin, origin, 5.0)


def test_a_reading_wrapped_anew_gives_the_same_points_without_working_them_out_again() -> None:
    bearings, origin = np.linspace(-1.0, 1.0, 9), np.zeros(9)
    ranges = np.linspace(1.0, 5.0, 9)  # the last beam saw nothing
    cache = ScanPoints()
    first = cache.laser(_scan(ranges, bearings, origin))
    again = cache.laser(_scan(ranges.copy(), bearings, origin))
    assert again is first
    assert np.array_equal(first, _scan(ranges, bearings, origin).points())
    points, axes = cache.sonar(_scan(ranges, bearings, origin), 0.2)
    assert cache.sonar(_scan(ranges.copy(), bearings, origin), 0.2)[0] is points
    assert len(points) == 5 * 8
    assert len(axes) == 8
    assert not points.flags.writeable


def test_a_buffer_refilled_in_place_is_a_new_reading() -> None:
    bearings, origin = np.linspace(-1.0, 1.0, 9), np.zeros(9)
    buffer = np.full(9, 2.0)
    cache = ScanPoints()
    before = cache.laser(_scan(buffer, bearings, origin)).copy()
    buffer[:] = 3.0  # a driver reusing its buffer for the next sweep
    after = cache.laser(_scan(buffer, bearings, origin))
    assert np.allclose(np.hypot(after[:, 0], after[:, 1]), 3.0)
    assert not np.array_equal(before, after)
    # other bearings (another sensor, or a changed mount) are another reading too
    moved = cache.laser(_scan(buffer, bearings + 0.1, origin))
    assert not np.array_equal(moved, after)
    assert (
        cache.sonar(_scan(buffer, bearings, origin), 0.1)[0]
        is not (cache.sonar(_scan(buffer, bearings, origin), 0.2)[0])
    )


@settings(max_examples=300, deadline=None)
@given(
    ranges=st.lists(
        st.one_of(st.floats(0.0, 40.0), st.sampled_from([math.nan, math.inf, 30.0])),
        min_size=1,
        max_size=200,
    ),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_compiled_laser_points_are_numpy_s_to_the_bit(ranges: list[float], seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = len(ranges)
    scan = RangeScan(
        0.0,
        np.array(ranges),
        np.sort(rng.uniform(-math.pi, math.pi, n)),
        rng.normal(0.0, 0.3, n),
        rng.normal(0.0, 0.3, n),
        30.0,
    )
    assert np.array_equal(ScanPoints().laser(scan), scan.points())


@settings(max_examples=300, deadline=None)
@given(
    ranges=st.lists(
        st.one_of(st.floats(0.0, 6.0), st.sampled_from([math.nan, math.inf, 5.0])),
        min_size=1,
        max_size=32,
    ),
    half=st.floats(0.0, 0.5),
    seed=st.integers(0, 2**32 - 1),
)
def test_the_compiled_sonar_cone_points_are_numpy_s_to_the_bit(
    ranges: list[float], half: float, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    n = len(ranges)
    scan = RangeScan(
        0.0,
        np.array(ranges),
        rng.uniform(-math.pi, math.pi, n),
        rng.normal(0.0, 0.3, n),
        rng.normal(0.0, 0.3, n),
        5.0,
    )
    points, axes = ScanPoints().sonar(scan, half)
    expected = _cone_points_numpy(scan, half)
    assert np.array_equal(points, expected)
    echoes = int(np.count_nonzero(scan.ranges < 5.0))
    assert np.array_equal(axes, expected[2 * echoes : 3 * echoes])
    assert np.array_equal(axes, scan.points())  # the cones' axes are the echoes themselves


def test_one_cache_follows_readings_whose_columns_change_type_length_and_arrays() -> None:
    """The fixed columns are checked once per set of arrays: readings in float32, a sensor
    whose bearings are replaced by shorter or float32 ones, and a return to the first layout
    are each worked out as numpy would, through the same cache."""
    bearings, origin = np.linspace(-1.0, 1.0, 9), np.full(9, 0.1)
    short, short_origin = bearings[:8].copy(), origin[:8].copy()
    readings = [
        (np.linspace(1.0, 5.0, 9), bearings, origin),
        (np.linspace(1.0, 4.0, 9).astype(np.float32), bearings, origin),
        (np.linspace(1.0, 4.0, 8), short, short_origin),
        (np.full(9, 2.0), bearings.astype(np.float32), origin),
        (np.full(9, 2.5), bearings + 0.3, origin),
        (np.full(9, 3.0), bearings, origin),
    ]
    cache = ScanPoints()
    for stamp, (ranges, beams, xy) in enumerate(readings):
        scan = RangeScan(float(stamp), ranges, beams, xy, xy, 5.0)
        assert np.array_equal(cache.laser(scan), scan.points()), stamp
        assert np.array_equal(cache.sonar(scan, 0.2)[0], _cone_points_numpy(scan, 0.2)), stamp
