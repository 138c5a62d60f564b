"""The compiled safety geometry gives the numpy statements' answers.

Each compiled loop is held against a numpy statement of the same rule (``safety.reference``,
or written out here) on random and on adversarial inputs: points on a beam's rounding edge,
on a cone's side, at a sweep's ends, at the sensor's origin, not finite. Within a few ulps of
an edge the two may place a point differently (their arctangents differ by that much), and
numbers agree within rounding.
"""

from __future__ import annotations

import math
from collections import deque

import numpy as np
import numpy.typing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from freelook.config import load_robot
from freelook.geometry import Pose
from freelook.safety import ObstacleMemory, SafetyFilter, in_sonar_cones, seen_through
from freelook.safety._footprint import approach_hit, nearest_squared
from freelook.safety._rule_approach import ApproachRule
from safety import reference

ROBOT = load_robot("pioneer3dx")
_Array = npt.NDArray[np.float64]

coordinate = st.floats(-6.0, 6.0, allow_nan=False)
point_lists = st.lists(st.tuples(coordinate, coordinate), min_size=1, max_size=40)
odd = st.sampled_from([math.nan, math.inf, -math.inf, 0.0, -0.0, 1e-300])


def _agree(
    got: npt.NDArray[np.bool_], want: npt.NDArray[np.bool_], near: npt.NDArray[np.bool_]
) -> None:
    """The same answers, but where a point lies within a few ulps of an edge."""
    assert got.shape == want.shape
    differ = (got != want) & ~near
    assert not differ.any(), np.flatnonzero(differ)


def _edge_points(origin: tuple[float, float], angles: _Array, radius: _Array) -> _Array:
    """Points at exactly these bearings (as near as floating point gets) from ``origin``."""
    return np.column_stack(
        (origin[0] + radius * np.cos(angles), origin[1] + radius * np.sin(angles))
    )


def _sweep(rng: np.random.Generator) -> tuple[_Array, _Array, tuple[float, float]]:
    beams = int(rng.integers(2, 200))
    half = float(rng.uniform(0.1, math.pi))
    bearings = np.linspace(-half, half, beams)
    ranges = rng.uniform(0.0, 6.0, beams)
    ranges[rng.random(beams) < 0.2] = 30.0
    origin = (float(rng.normal(0, 0.2)), float(rng.normal(0, 0.2)))
    return bearings, ranges, origin


def test_seen_through_matches_numpy_on_random_and_edge_points() -> None:
    rng = np.random.default_rng(1)
    for _ in range(300):
        bearings, ranges, origin = _sweep(rng)
        step = bearings[1] - bearings[0]
        # on the rounding edges between beams, at the sweep's ends, and anywhere
        edges = bearings[0] + (rng.integers(-2, len(bearings) + 2, 60) + 0.5) * step
        ends = np.concatenate((bearings[[0, -1]], bearings[[0, -1]] + [-step / 2, step / 2]))
        angles = np.concatenate((edges, ends, rng.uniform(-4, 4, 60)))
        points = _edge_points(origin, angles, rng.uniform(0.0, 8.0, len(angles)))
        points = np.vstack((points, [origin], rng.normal(0, 3, (20, 2))))
        got = seen_through(points, bearings, ranges, origin)
        want = reference.seen_through(points, bearings, ranges, origin, 0.1)
        _agree(got, want, reference.near_beam_edge(points, bearings, origin))


def test_in_sonar_cones_matches_numpy_on_random_and_edge_points() -> None:
    rng = np.random.default_rng(2)
    config = ROBOT.sonar
    assert config is not None
    for _ in range(300):
        n = int(rng.integers(1, 17))
        ox, oy = rng.normal(0, 0.2, n), rng.normal(0, 0.2, n)
        bearing = rng.uniform(-math.pi, math.pi, n)
        reach = rng.uniform(0.0, 5.0, n)
        half = float(rng.choice([math.radians(config.cone_deg) / 2, rng.uniform(0, math.pi)]))
        j = rng.integers(0, n, 80)
        # on a cone's sides (and a hair either side), on its axis, at its apex, anywhere
        # (a hair: within the bounds the arctangent decides; 5e-7 and 2e-6 rad: within and
        # beyond the band the cosine decides)
        side = bearing[j] + rng.choice([-1.0, 1.0], 80) * (
            half + rng.choice([0, 1e-12, -1e-12, 5e-7, -5e-7, 2e-6, -2e-6], 80)
        )
        radius = rng.uniform(0.0, 6.0, 80)
        # a third at the reach less the tolerance (and a hair either side), some on the axis
        edge = rng.random(80) < 0.3
        # (and at the relative 1e-9 within which squares leave the reach to the square root)
        hair = rng.choice([0, 1e-12, -1e-12, 1e-15, 1e-9, -1e-9, -3e-9], edge.sum())
        radius[edge] = (reach[j][edge] - 0.1) * (1.0 + hair)
        axis = rng.random(80) < 0.2
        side[axis] = bearing[j][axis]
        points = np.column_stack((ox[j] + radius * np.cos(side), oy[j] + radius * np.sin(side)))
        points = np.vstack((points, np.column_stack((ox, oy)), rng.normal(0, 3, (30, 2))))
        sonar = (ox, oy, bearing, reach)
        got = in_sonar_cones(points, sonar, half)
        want = reference.in_sonar_cones(points, sonar, half, 0.1)
        _agree(got, want, reference.near_cone_side(points, sonar, half))


def test_far_points_tested_only_against_their_sector_s_cones_get_the_numpy_answers() -> None:
    """The robot's own ring, and the same transducers facing up to 80° off the line from the
    centre (as on a box-shaped body's corners): points on every cone's sides as seen from its
    transducer and round the whole circle, from inside the ring to well beyond the distance at
    which a point's sector picks the cones it is tested against."""
    config = ROBOT.sonar
    assert config is not None
    rng = np.random.default_rng(5)
    mounted = np.radians(np.array(config.front_deg + config.rear_deg, dtype=np.float64))
    ox, oy = config.ring_radius * np.cos(mounted), config.ring_radius * np.sin(mounted)
    half = math.radians(config.cone_deg) / 2
    far = 3.0 * config.ring_radius
    for turned in (0.0, math.radians(80.0)):
        bearing = mounted + rng.uniform(-turned, turned, len(mounted))
        for reach in (0.5, 5.0):
            sonar = (ox, oy, bearing, np.full(len(ox), reach))
            j = rng.integers(0, len(ox), 3000)
            side = bearing[j] + rng.choice([-1.0, 1.0], 3000) * (half + rng.normal(0, 1e-3, 3000))
            radius = rng.uniform(0.3 * far, reach + 0.2, 3000)
            around = rng.uniform(-math.pi, math.pi, 3000)
            points = np.vstack(
                (
                    np.column_stack((ox[j] + radius * np.cos(side), oy[j] + radius * np.sin(side))),
                    np.column_stack((radius * np.cos(around), radius * np.sin(around))),
                )
            )
            got = in_sonar_cones(points, sonar, half)
            assert got.any()
            assert not got.all()
            want = reference.in_sonar_cones(points, sonar, half, 0.1)
            _agree(got, want, reference.near_cone_side(points, sonar, half))


# numpy warns of the non-finite values
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=200, deadline=None)
@given(points=point_lists, strange=st.lists(st.tuples(odd, coordinate), max_size=4))
def test_hostile_points_get_the_numpy_answers(
    points: list[tuple[float, float]], strange: list[tuple[float, float]]
) -> None:
    cloud = np.array(points + strange + [(y, x) for x, y in strange], dtype=float)
    bearings = np.linspace(-math.pi / 2, math.pi / 2, 181)
    ranges = np.linspace(0.5, 5.0, 181)
    origin = (0.1, 0.0)
    _agree(
        seen_through(cloud, bearings, ranges, origin),
        reference.seen_through(cloud, bearings, ranges, origin, 0.1),
        reference.near_beam_edge(cloud, bearings, origin),
    )
    angles = np.linspace(-math.pi, math.pi, 16, endpoint=False)
    sonar = (0.2 * np.cos(angles), 0.2 * np.sin(angles), angles, np.linspace(0.2, 5.0, 16))
    half = math.radians(15.0)
    _agree(
        in_sonar_cones(cloud, sonar, half),
        reference.in_sonar_cones(cloud, sonar, half, 0.1),
        reference.near_cone_side(cloud, sonar, half),
    )


class _NumpyApproach:
    """The approach check as it was written in numpy (the compiled loop's reference)."""

    def __init__(self, f: ApproachRule) -> None:
        self.f = f
        self.recent = (deque[float](maxlen=15), deque[float](maxlen=15))

    def depth(self, px: _Array, py: _Array) -> _Array:
        f = self.f
        return np.minimum(f._half_l - np.abs(px - f._cx), f._half_w - np.abs(py))

    def arc(self, v: float, omega: float) -> tuple[_Array, _Array, _Array, _Array]:
        t = self.f._t
        theta = omega * t
        if abs(omega) < 1e-9:
            x, y = v * t, np.zeros_like(t)
        else:
            x = v / omega * np.sin(theta)
            y = v / omega * (1.0 - np.cos(theta))
        return x, y, np.cos(theta), np.sin(theta)

    def first_hit(self, v: float, omega: float, points: _Array, group: int) -> int | None:
        x, y, c, s = self.arc(v, omega)
        dx = points[None, :, 0] - x[:, None]
        dy = points[None, :, 1] - y[:, None]
        px = c[:, None] * dx + s[:, None] * dy
        py = -s[:, None] * dx + c[:, None] * dy
        depth = self.depth(px, py)
        now_depth = self.depth(points[:, 0], points[:, 1])
        recent = self.recent[group]
        recent.append(float(now_depth.max()))
        base = min(max(min(recent), 0.0), self.f.config.approach_margin / 2)
        allowed = np.maximum(base, now_depth) + 1e-4
        hit = (depth > allowed[None, :]).any(axis=1)
        return int(np.argmax(hit)) if hit.any() else None


def test_the_approach_check_stops_at_the_numpy_form_s_sample() -> None:
    rng = np.random.default_rng(3)
    approach = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive).approach
    assert approach is not None
    reference = _NumpyApproach(approach)
    hits = 0
    for _ in range(400):
        # a wall or a scatter of points near the footprint, sometimes inside its margin
        points = rng.normal(0, 0.6, (int(rng.integers(1, 150)), 2))
        v = float(rng.choice([0.0, rng.uniform(-0.8, 0.8)]))
        omega = float(rng.choice([0.0, 1e-10, rng.uniform(-1.5, 1.5)]))
        if v == 0.0 and omega == 0.0:
            continue
        group = int(rng.integers(0, 2))
        expected = reference.first_hit(v, omega, points, group)
        live, prior = (points, None) if group == 0 else (None, points)
        scale = approach._scales(v, omega, live, prior)[group]
        assert list(approach._recent_depth[group]) == list(reference.recent[group])
        if expected is None:
            assert scale == 1.0
        else:
            hits += 1
            t_hit = float(approach._t[expected - 1]) if expected > 0 else 0.0
            speed, accel = (
                (abs(v), ROBOT.drive.max_deceleration)
                if abs(v) > 1e-6
                else (abs(omega), 2.0 * ROBOT.drive.max_deceleration / ROBOT.drive.track_width)
            )
            room = max(0.0, speed * t_hit - speed * approach.latency)
            assert scale == max(0.0, min(1.0, math.sqrt(2.0 * accel * room) / speed))
    assert hits > 50  # the check was tested where it acts, not only where it lets go


def test_the_memory_s_points_outside_the_laser_s_view_match_numpy() -> None:
    rng = np.random.default_rng(4)
    for _ in range(300):
        memory = ObstacleMemory(seconds=100.0, reach=50.0)
        odometry = Pose(*rng.normal(0, 1, 2), float(rng.uniform(-4, 4)))
        origin = (0.2, 0.0)
        # the Pioneer's half-plane, and sweeps narrower, wider than π, and past ±π
        first = float(rng.choice([-math.pi / 2, rng.uniform(-3.5, 0.5)]))
        last = first + float(rng.choice([math.pi, rng.uniform(0.0, 2 * math.pi + 0.5)]))
        # robot-frame points at the sweep's ends exactly, a hair off them (within and beyond
        # the band that leaves a point to its arctangent), and anywhere
        ends = rng.choice([first, last], 60) + rng.choice([0, 1e-12, -1e-12, 5e-7, -2e-6], 60)
        angles = np.concatenate((ends, rng.uniform(-4, 4, 40)))
        local = _edge_points(origin, angles, rng.uniform(0.0, 4.0, len(angles)))
        memory.observe(np.zeros((0, 2)), local, odometry, 0.0)
        seen = (origin, first, last)
        mirror = reference.NumpyMemory(100.0, 50.0)
        mirror.xy = memory._xy
        local = mirror.to_robot(odometry)
        want = reference.outside_sweep(local, origin, first, last)
        near = reference.near_sweep_end(local, origin, first, last)
        got = memory.points(odometry, 1.0, seen)
        # each point the compiled view keeps is one of the robot-frame points, in order
        kept = np.zeros(len(local), dtype=bool)
        kept[_rows_of(got, local)] = True
        _agree(kept, want, near)


def _approach_hit_numpy(
    points: _Array,
    arc: tuple[_Array, _Array, _Array, _Array],
    base: float,
    half_l: float,
    half_w: float,
    cx: float,
) -> int:
    """:func:`approach_hit` in numpy: every sample against every point."""
    x, y, c, s = arc

    def depth(px: _Array, py: _Array) -> _Array:
        return np.minimum(half_l - np.abs(px - cx), half_w - np.abs(py))

    dx = points[None, :, 0] - x[:, None]
    dy = points[None, :, 1] - y[:, None]
    px = c[:, None] * dx + s[:, None] * dy
    py = -s[:, None] * dx + c[:, None] * dy
    allowed = np.maximum(base, depth(points[:, 0], points[:, 1])) + 1e-4
    hit = (depth(px, py) > allowed[None, :]).any(axis=1)
    return int(np.argmax(hit)) if hit.any() else -1


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_approach_loop_leaves_out_no_point_it_could_hit() -> None:
    rng = np.random.default_rng(5)
    f = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive).approach
    assert f is not None
    half_l, half_w, cx = f._half_l, f._half_w, f._cx
    corner = math.hypot(abs(cx) + half_l, half_w)
    hits = 0
    for trial in range(300):
        v = float(rng.choice([0.0, rng.uniform(-1.5, 1.5), 1e300, math.nan]))
        omega = float(rng.choice([0.0, -0.0, rng.uniform(-2.0, 2.0), math.inf]))
        arc = f._arc(v, omega)
        x, y, c, s = arc
        base = float(rng.choice([0.0, 0.025, rng.uniform(0.0, 0.03), -0.01, math.nan]))
        # points just deeper than allowed (or just not) in the posed footprint's corners and
        # along its edges, at any sample and at the furthest ones: the points a cut-off too
        # near would wrongly leave out ...
        # (all at one sample in most trials: else the earliest would decide every trial)
        k = np.full(60, rng.choice([len(x) - 1, rng.integers(0, len(x))]))
        if trial % 4 == 0:
            k = rng.integers(0, len(x), 60)
        allowed = (base if base == base else 0.0) + 1e-4
        depth = allowed + rng.choice([0.0, 1e-12, -1e-12, 1e-6, 1e-3], 60)
        lx = cx + rng.choice([-1.0, 1.0], 60) * (half_l - depth)
        ly = rng.choice([-1.0, 1.0], 60) * (half_w - depth)
        edge = rng.random(60) < 0.3
        ly[edge] *= rng.uniform(0.0, 1.0, int(edge.sum()))
        posed = np.column_stack((x[k] + c[k] * lx - s[k] * ly, y[k] + s[k] * lx + c[k] * ly))
        # ... points about the loop's cut-off distance, and anywhere
        reach = float(np.max(np.hypot(x, y)))
        radius = (reach + corner) * (1.0 + rng.choice([0.0, 1e-7, 1e-6, 2e-6], 30))
        angle = rng.uniform(-math.pi, math.pi, 30)
        ring = np.column_stack((radius * np.cos(angle), radius * np.sin(angle)))
        points = np.vstack((posed, ring, rng.normal(0, 1.5, (30, 2))))
        if trial % 10 == 0:
            points[rng.integers(0, len(points), 3)] = [
                [math.nan, 0.0],
                [math.inf, 1.0],
                [0.0, -math.inf],
            ]
        points = points[rng.permutation(len(points))[: int(rng.integers(1, len(points) + 1))]]
        expected = _approach_hit_numpy(points, arc, base, half_l, half_w, cx)
        got = approach_hit(np.ascontiguousarray(points), *arc, base, half_l, half_w, cx)
        assert got == expected
        hits += got >= 0
    assert hits > 50  # the loop was tested where points hit, not only where none does


def _nearest_numpy(points: _Array, prior: _Array, side: int, rear: float, front: float) -> float:
    """The zone rule's nearest squared distance as numpy had it: stack, select, einsum, min."""
    every = np.vstack((points, prior))
    if side:
        every = every[every[:, 0] >= rear] if side > 0 else every[every[:, 0] <= front]
    if not len(every):
        return math.inf
    return float(np.min(np.einsum("ij,ij->i", every, every)))


def _rows_of(points: _Array, among: _Array) -> npt.NDArray[np.int64]:
    """Where each of ``points`` lies in ``among`` (within rounding), in order."""
    rows, start = [], 0
    for point in points:
        close = np.flatnonzero(np.all(np.isclose(among[start:], point, rtol=1e-12), axis=1))
        assert len(close), point
        rows.append(start + int(close[0]))
        start = rows[-1] + 1
    return np.array(rows, dtype=np.int64)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@settings(max_examples=300, deadline=None)
@given(
    points=st.lists(st.tuples(coordinate, coordinate), max_size=30),
    prior=st.lists(st.tuples(coordinate, coordinate), max_size=30),
    strange=st.lists(st.tuples(odd, coordinate), max_size=3),
    side=st.sampled_from([-1, 0, 1]),
    scale=st.sampled_from([1.0, 1e-160, 1e150, 1.0 + 2**-30]),
)
def test_the_nearest_point_is_numpy_s(
    points: list[tuple[float, float]],
    prior: list[tuple[float, float]],
    strange: list[tuple[float, float]],
    side: int,
    scale: float,
) -> None:
    live = np.array(points + strange, dtype=float).reshape(-1, 2) * scale
    remembered = np.array(prior + [(y, x) for x, y in strange], dtype=float).reshape(-1, 2)
    expected = _nearest_numpy(live, remembered, side, -0.2, 0.3)
    got = nearest_squared(live, remembered, side, -0.2, 0.3)
    assert math.isclose(got, expected, rel_tol=1e-12) or (math.isnan(got) and math.isnan(expected))


def test_a_remembered_arc_is_the_one_computed_afresh() -> None:
    f = SafetyFilter(ROBOT.safety, ROBOT.footprint, ROBOT.drive).approach
    assert f is not None
    fresh = _NumpyApproach(f)
    commands = [(v, w) for v in (0.5, 0.0, -0.0, -0.3) for w in (0.0, -0.0, 1e-10, 0.7, -0.7)]
    for v, omega in commands * 3:  # -0.0 and 0.0 are equal keys, but not the same arc
        got = f._arc(v, omega)
        expected = fresh.arc(v, omega)
        for a, b in zip(got, expected, strict=True):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-15)


def _same_memory(memory: ObstacleMemory, mirror: reference.NumpyMemory) -> None:
    """The same points, in the same order, within rounding; the same stamps and sources."""
    np.testing.assert_allclose(memory._xy, mirror.xy, rtol=1e-12, atol=1e-12)
    np.testing.assert_array_equal(memory._stamp, mirror.stamp)
    np.testing.assert_array_equal(memory._laser, mirror.laser)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_the_memory_s_update_is_numpy_s() -> None:
    rng = np.random.default_rng(6)
    for trial in range(60):
        cell = float(rng.choice([0.05, 0.1, 0.03]))
        compiled = ObstacleMemory(seconds=1.0, reach=float(rng.uniform(0.5, 4.0)), cell=cell)
        mirror = reference.NumpyMemory(compiled.seconds, compiled.reach, cell)
        odometry = Pose(*rng.normal(0, 2, 2), float(rng.uniform(-4, 4)))
        for step in range(25):
            now = 0.1 * step + float(rng.choice([0.0, 1e-12]))
            # a wall seen again and again (the same cells), scattered echoes, and readings on
            # cell edges and at the reach
            laser = rng.normal(0, 1.5, (int(rng.integers(0, 60)), 2))
            laser[: len(laser) // 2] = np.round(laser[: len(laser) // 2] / cell) * cell
            sonar = rng.normal(0, 2.0, (int(rng.integers(0, 17)), 2))
            if len(sonar) and trial % 3 == 0:
                angle = rng.uniform(-math.pi, math.pi, len(sonar))
                sonar = compiled.reach * np.column_stack((np.cos(angle), np.sin(angle)))
            if trial % 7 == 0 and len(laser) > 3:
                laser[:3] = [[math.nan, 0.0], [math.inf, 1.0], [1e300, 0.0]]
            odometry = Pose(
                odometry.x + float(rng.normal(0, 0.05)),
                odometry.y + float(rng.normal(0, 0.05)),
                odometry.theta + float(rng.normal(0, 0.1)),
            )
            compiled.observe(laser, sonar, odometry, now)
            mirror.observe(np.vstack((laser, sonar)), len(laser), odometry, now)
            _same_memory(compiled, mirror)


def _one_per_cell(memory: ObstacleMemory) -> None:
    """No two remembered points of one source share a cell."""
    cells = np.floor(memory._xy / memory.cell)
    keys = {(float(a), float(b), bool(c)) for (a, b), c in zip(cells, memory._laser, strict=True)}
    assert len(keys) == len(memory)


def test_far_from_the_origin_the_memory_keeps_one_point_per_cell() -> None:
    """Cell indices near 2**64 (a code of them would overflow): cells are coded from the
    robot's own, so a far robot's memory is kept as a near one's."""
    far = Pose(1e15, -1e15, 0.3)
    laser = np.random.default_rng(7).normal(0, 1, (40, 2))
    walls = np.repeat(laser[:10], 3, axis=0)  # the same points again: the same cells
    compiled = ObstacleMemory(10.0, 5.0)
    compiled.observe(np.vstack((laser, walls)), np.zeros((0, 2)), far, 0.0)
    assert 0 < len(compiled) <= 40
    _one_per_cell(compiled)
    sweep = (np.linspace(-1.5, 1.5, 181), np.full(181, 2.0), (0.1, 0.0))
    cycled = ObstacleMemory(10.0, 5.0)
    for now in (0.0, 0.05, 0.1, 0.2):
        cycled.update(far, now, np.vstack((laser, walls)), np.zeros((0, 2)), sweep, None, 0.2)
        assert len(cycled) > 0
        _one_per_cell(cycled)


def test_a_reach_of_more_cells_than_the_codes_hold_is_refused() -> None:
    with pytest.raises(ValueError, match="reach"):
        ObstacleMemory(10.0, 1e9, cell=0.05)
    with pytest.raises(ValueError, match="cell"):
        ObstacleMemory(10.0, 5.0, cell=0.0)


def _cycle_inputs(
    rng: np.random.Generator, memory: ObstacleMemory, odometry: Pose, step: int
) -> tuple[
    _Array,
    _Array,
    tuple[_Array, _Array, tuple[float, float]] | None,
    tuple[_Array, _Array, _Array, _Array] | None,
]:
    """A cycle's readings: points, a sweep and cones, some of them through remembered points
    on a beam's rounding edge, at the sweep's ends or on a cone's side."""
    beams = int(rng.integers(2, 182))
    span = float(rng.uniform(0.5, 2 * math.pi - 0.1))
    origin = (float(rng.normal(0.1, 0.05)), float(rng.normal(0, 0.05)))
    first = float(rng.uniform(-math.pi, math.pi - span))
    cones_n = int(rng.integers(0, 17))
    cone_x, cone_y = rng.normal(0, 0.2, cones_n), rng.normal(0, 0.2, cones_n)
    cone_bearing = rng.uniform(-math.pi, math.pi, cones_n)
    cone_reach = rng.uniform(0.0, 5.0, cones_n)
    if len(memory) and step % 2:
        c, s = math.cos(odometry.theta), math.sin(odometry.theta)
        dx, dy = memory._xy[:, 0] - odometry.x, memory._xy[:, 1] - odometry.y
        local = np.column_stack((c * dx + s * dy, -s * dx + c * dy))
        k = int(rng.integers(len(local)))
        bearing = math.atan2(local[k, 1] - origin[1], local[k, 0] - origin[0])
        edge = step % 3
        if edge == 0:  # on the rounding edge between two beams
            first = bearing - (int(rng.integers(0, beams - 1)) + 0.5) * span / (beams - 1)
        elif edge == 1:  # at the sweep's first or last bearing
            first = bearing if rng.random() < 0.5 else bearing - span
        if cones_n:
            k = int(rng.integers(len(local)))
            j = int(rng.integers(cones_n))
            side = math.atan2(local[k, 1] - cone_y[j], local[k, 0] - cone_x[j])
            cone_bearing[j] = side + rng.choice([-1.0, 1.0]) * math.radians(15.0)
            cone_reach[j] = 6.0
    bearings = np.linspace(first, first + span, beams)
    ranges = rng.uniform(0.0, 6.0, beams)
    ranges[rng.random(beams) < 0.2] = 30.0
    hits = ranges < 30.0
    laser = np.column_stack(
        (
            origin[0] + ranges[hits] * np.cos(bearings[hits]),
            origin[1] + ranges[hits] * np.sin(bearings[hits]),
        )
    )
    sonar = cone_reach[:, None] * np.column_stack((np.cos(cone_bearing), np.sin(cone_bearing)))
    sweep = (bearings, ranges, origin) if step % 5 != 4 else None
    cones = (cone_x, cone_y, cone_bearing, cone_reach) if step % 7 != 6 else None
    return laser, sonar, sweep, cones


def _near_an_edge(
    points: _Array,
    sweep: tuple[_Array, _Array, tuple[float, float]] | None,
    cones: tuple[_Array, _Array, _Array, _Array] | None,
    half_cone: float,
    view: bool,
) -> bool:
    """Whether one of the points (robot frame) lies within a few ulps of one of a cycle's
    edges: the clearing's (a beam's rounding edge, a cone's side) or the ``view``'s (the
    sweep's ends)."""
    near = np.zeros(len(points), dtype=bool)
    if sweep is not None:
        bearings, _, origin = sweep
        if view:
            near |= reference.near_sweep_end(points, origin, bearings[0], bearings[-1])
        else:
            near |= reference.near_beam_edge(points, bearings, origin)
    if cones is not None and len(cones[0]) and not view:
        near |= reference.near_cone_side(points, cones, half_cone)
    return bool(near.any())


def test_the_memory_s_cycle_is_its_steps() -> None:
    """One compiled call leaves the memory and returns the points its steps in numpy do (the
    laser's clearing, the cones', taking in, ageing, the sweep's view), with either sensor or
    none. A cycle with a point within a few ulps of an edge may place it either way (the
    numpy steps then go on from the compiled memory)."""
    rng = np.random.default_rng(11)
    compared = on_edge = 0
    half_cone = math.radians(15.0)
    for trial in range(40):
        # half of them on a binary time line, where a point's age reaches the limit exactly
        exact = trial % 2 == 0
        seconds = 0.28125 if exact else float(rng.uniform(0.2, 1.0))
        compiled = ObstacleMemory(seconds, reach=3.0)
        mirror = reference.NumpyMemory(compiled.seconds, compiled.reach)
        odometry = Pose(*rng.normal(0, 2, 2), float(rng.uniform(-4, 4)))
        for step in range(40):
            now = 0.03125 * step if exact else 0.02 * step + 0.001 * trial
            if step % 9 != 8:  # the robot stands still now and then
                odometry = Pose(
                    odometry.x + float(rng.normal(0, 0.03)),
                    odometry.y + float(rng.normal(0, 0.03)),
                    odometry.theta + float(rng.normal(0, 0.05)),
                )
            laser, sonar, sweep, cones = _cycle_inputs(rng, compiled, odometry, step)
            # the clearing's edges among the points remembered, the view's among those kept
            edge = _near_an_edge(mirror.to_robot(odometry), sweep, cones, half_cone, False)
            got = compiled.update(odometry, now, laser, sonar, sweep, cones, half_cone)
            want = mirror.update(odometry, now, laser, sonar, sweep, cones, half_cone, 0.1)
            edge = edge or _near_an_edge(mirror.to_robot(odometry), sweep, None, half_cone, True)
            if edge:
                on_edge += 1
                mirror.xy = compiled._xy.copy()
                mirror.stamp = compiled._stamp.copy()
                mirror.laser = compiled._laser.copy()
                continue
            compared += 1
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12, err_msg=f"{trial} {step}")
            _same_memory(compiled, mirror)
    assert compared > 600
    assert on_edge > 300  # the edges were met


def test_the_memory_s_cycle_with_sensors_of_unusual_shape_is_its_steps() -> None:
    """A sweep of one beam, or with a range more or less than its bearings (a bearing without
    a range is no beam), a sonar missing a reading: the steps' memory and points."""
    rng = np.random.default_rng(9)
    compiled, mirror = ObstacleMemory(10.0, 3.0), reference.NumpyMemory(10.0, 3.0)
    laser = rng.normal(0, 1, (30, 2))
    odometry = Pose(1.0, 2.0, 0.5)
    sweeps = [
        (np.linspace(-1.5, 1.5, 181), rng.uniform(0, 4, 182), (0.1, 0.0)),
        (np.linspace(-1.5, 1.5, 181), rng.uniform(0, 4, 90), (0.1, 0.0)),
        (np.zeros(1), np.full(1, 3.0), (0.1, 0.0)),
        (np.linspace(-1.5, 1.5, 181).astype(np.float32), rng.uniform(0, 4, 181), (0.1, 0.0)),
    ]
    cones = (np.zeros(3), np.zeros(3), np.array((0.0, 1.0, 2.0)), np.ones(3))
    short = (np.zeros(3), np.zeros(3), np.array((0.0, 1.0, 2.0)), np.ones(2))
    for k, sweep in enumerate(sweeps):
        for c in (cones, short, None):
            now = 0.1 * k
            # laser points arrive before the memory looks at them again: some to clear
            got = compiled.update(odometry, now, laser, laser[:3], sweep, c, 0.2)
            want = mirror.update(odometry, now, laser, laser[:3], sweep, c, 0.2, 0.1)
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
            _same_memory(compiled, mirror)


def _zone_numpy(f: SafetyFilter, v: float, points: _Array) -> tuple[int, float]:
    """The zone rule as numpy had it, on the stacked points."""
    if len(points) == 0:
        return -1, math.inf
    considered = points
    if f.config.zone_rule == "direction" and abs(v) > 1e-3:
        rear = f.footprint.center_forward - f.footprint.length / 2
        front = f.footprint.center_forward + f.footprint.length / 2
        considered = points[points[:, 0] >= rear if v > 0 else points[:, 0] <= front]
        if len(considered) == 0:
            return -1, math.inf
    clearance = float(np.sqrt(np.min(np.einsum("ij,ij->i", considered, considered))))
    for index, zone in enumerate(f.config.zones):
        if clearance < zone.boundary:
            return index, clearance
    return -1, clearance


@pytest.mark.parametrize("rule", ["nearest", "direction"])
def test_the_zone_of_live_and_prior_points_is_that_of_their_stack(rule: str) -> None:
    rng = np.random.default_rng(8)
    safety = ROBOT.safety.model_copy(update={"zone_rule": rule})
    f = SafetyFilter(safety, ROBOT.footprint, ROBOT.drive)
    zones = f.zones
    assert zones is not None
    for _ in range(500):
        live = rng.normal(0, 1.2, (int(rng.integers(0, 40)), 2))
        prior = rng.normal(0, 1.2, (int(rng.integers(0, 40)), 2))
        v = float(rng.choice([0.0, 1e-3, -1e-3, rng.uniform(-1, 1)]))
        expected = _zone_numpy(f, v, np.vstack((live, prior)))
        assert zones.classify(v, live, prior if len(prior) or rng.random() < 0.5 else None) == (
            expected
        )
