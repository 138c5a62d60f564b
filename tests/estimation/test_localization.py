"""Monte Carlo localization against the simulator's laser, the robot standing still."""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt
import pytest

from freelook.config import load_robot
from freelook.estimation import MonteCarloLocalization, SearchPhase
from freelook.estimation._search import SCREEN_KEEP, SEARCH_CANDIDATES, SEARCH_STILL_UPDATES
from freelook.geometry import wrap_angle
from freelook.maps import World, load_world
from freelook.sim import Simulator


def _setup(
    world_name: str, pose: tuple[float, float, float], seed: int = 0
) -> tuple[MonteCarloLocalization, npt.NDArray[np.float64]]:
    config = load_robot("pioneer3dx")
    world = load_world(world_name)
    sim = Simulator(config, world, seed=seed, pose=pose)
    sim.sample_laser(0.0)
    assert sim.latest_laser is not None
    return MonteCarloLocalization.for_robot(world, config, seed=seed), sim.latest_laser.ranges


def _error(mcl: MonteCarloLocalization, pose: tuple[float, float, float]) -> tuple[float, float]:
    e = mcl.estimate()
    return math.hypot(e.x - pose[0], e.y - pose[1]), abs(
        math.degrees(wrap_angle(e.theta - pose[2]))
    )


def test_the_estimate_sits_on_the_true_pose_not_beside_it() -> None:
    # the likelihood field is signed: it peaks on wall faces, so a scan that sees walls on
    # one side only does not pull the estimate toward them
    pose = (3.0, 3.0, 0.0)
    mcl, ranges = _setup("lab", pose)
    mcl.initialize(pose[0] + 0.04, pose[1] - 0.03, pose[2] + 0.03, std_xy=0.03, std_theta=0.02)
    for _ in range(60):
        mcl.update(ranges, force=True)
    distance, heading = _error(mcl, pose)
    assert distance < 0.01
    assert heading < 0.3


def test_global_search_finds_the_robot_and_ends() -> None:
    pose = (3.0, 3.0, 0.3)
    mcl, ranges = _setup("lab", pose, seed=1)
    mcl.global_init()
    assert mcl.searching
    assert mcl.estimate().std_xy > 2.0
    for _ in range(60):
        mcl.update(ranges, force=True)
        if not mcl.searching:
            break
    assert not mcl.searching
    assert len(mcl.particles) == mcl.config.mcl_particles
    for _ in range(20):  # tracking goes on refining
        mcl.update(ranges, force=True)
    distance, heading = _error(mcl, pose)
    assert distance < 0.05
    assert heading < 2.0
    assert mcl.fit > -0.5  # the scan fits the map where it settled


def test_a_global_search_passes_through_its_phases_in_order_and_ends_tracking() -> None:
    pose = (3.0, 3.0, 0.3)
    mcl, ranges = _setup("lab", pose, seed=1)
    assert mcl.phase is SearchPhase.TRACKING
    assert not mcl.searching
    mcl.global_init()
    phases = [mcl.phase]
    sizes = {}  # particles at the first update of each stage
    for _ in range(60):
        mcl.update(ranges, force=True)
        assert mcl.searching == (mcl.phase is not SearchPhase.TRACKING)
        sizes.setdefault(mcl.phase, len(mcl.particles))
        if mcl.phase is not phases[-1]:
            phases.append(mcl.phase)
        if not mcl.searching:
            break
    assert phases == [
        SearchPhase.SCREENING,
        SearchPhase.COARSE,
        SearchPhase.SHARP,
        SearchPhase.TRACKING,
    ]
    # the blurred stage searches with ten times the particles; once gathered in a few places
    # the sharp stage holds as many as tracking
    n = mcl.config.mcl_particles
    assert sizes == {SearchPhase.COARSE: 10 * n, SearchPhase.SHARP: n, SearchPhase.TRACKING: n}


def _twin_rooms() -> World:
    """Two identical closed rooms 5 m apart: every view in one is seen in the other too."""
    grid = np.zeros((80, 200), dtype=bool)
    for x0 in (0, 100):
        room = grid[:, x0 : x0 + 90]
        room[[0, -1], :] = True
        room[:, [0, -1]] = True
        room[20:30, 50:70] = True  # a box
        room[50:75, 20:22] = True  # a partition
    return World("twins", grid, 0.05, (0.0, 0.0))


def test_a_search_gathered_on_one_of_two_identical_places_does_not_end() -> None:
    # a long search standing still can drift onto one twin and drop the other; before ending,
    # the search looks for other places that explain the scan as well, finds the other twin
    # and goes on (without that check it ended on the twin, 5 m from the robot)
    world = _twin_rooms()
    config = load_robot("pioneer3dx")
    pose = (1.5, 2.0, 0.3)
    sim = Simulator(config, world, seed=2, pose=pose)
    mcl = MonteCarloLocalization.for_robot(world, config, seed=2)
    mcl.global_init()
    rng = np.random.default_rng(2)
    for k in range(60):
        sim.sample_laser(0.1 * k)
        assert sim.latest_laser is not None
        mcl.update(sim.latest_laser.ranges, force=True)
        if k == 0:  # the cloud gathers on the wrong twin
            n = len(mcl.particles)
            mcl.particles[:] = np.array([pose[0] + 5.0, pose[1], pose[2]])
            mcl.particles[:, :2] += rng.normal(0.0, 0.02, (n, 2))
            mcl.weights[:] = 1.0 / n
    assert mcl.searching
    assert mcl.challenges >= 1


def test_odometry_moves_the_particles_once_per_update_by_the_composed_steps() -> None:
    # AMCL's motion update: the steps between two updates are composed, and the motion model
    # is sampled once, with their sum, when the next scan is weighed
    pose = (3.0, 3.0, 0.3)
    mcl, ranges = _setup("lab", pose)
    mcl.alphas = (0.0, 0.0, 0.0, 0.0)  # no motion noise: the particles move by the odometry
    mcl.initialize(*pose, std_xy=0.0, std_theta=0.0)
    before = mcl.particles.copy()
    state = mcl.rng.bit_generator.state
    steps = [(0.05, 0.0, 0.1)] * 10 + [(-0.02, 0.01, -0.05)] * 4
    for step in steps:
        mcl.predict(*step)
    assert np.array_equal(mcl.particles, before)  # nothing moves between updates
    assert mcl.rng.bit_generator.state == state  # and nothing is drawn
    x, y, theta = pose
    for dx, dy, dtheta in steps:
        c, s = math.cos(theta), math.sin(theta)
        x, y = x + c * dx - s * dy, y + s * dx + c * dy
        theta += dtheta
    assert mcl.update(ranges)  # moved far enough to update
    moved = mcl.particles
    assert np.allclose(moved[:, 0], x, atol=1e-12)
    assert np.allclose(moved[:, 1], y, atol=1e-12)
    assert np.allclose(np.vectorize(wrap_angle)(moved[:, 2] - theta), 0.0, atol=1e-12)


def test_a_search_scores_in_full_only_the_candidates_a_few_beams_find_plausible() -> None:
    # 200,000 uniform candidates are scored on SCREEN_BEAMS beams first and only the best
    # SCREEN_KEEP of them on the whole scan; the dropped ones must be the ones that fit badly
    pose = (3.0, 3.0, 0.3)
    mcl, ranges = _setup("lab", pose, seed=3)
    mcl.global_init()
    valid = np.flatnonzero((ranges < mcl.range_max * 0.999) & (ranges > 0.02))
    pick = valid[np.linspace(0, len(valid) - 1, mcl.config.mcl_beams).astype(int)]
    bx = mcl.mount[0] + ranges[pick] * np.cos(mcl.beam_angles[pick])
    by = mcl.mount[1] + ranges[pick] * np.sin(mcl.beam_angles[pick])
    candidates = mcl._uniform_poses(SEARCH_CANDIDATES * len(mcl.particles))
    candidates[:5] = np.array(pose) + np.array([[0.02 * k, -0.01 * k, 0.005 * k] for k in range(5)])
    kept, scores = mcl._screened(candidates, bx, by)
    assert len(kept) == int(SCREEN_KEEP * len(candidates))
    assert np.all(np.diff(kept) > 0)  # in the order they were drawn, each once
    full = mcl.field.score(candidates, bx, by, mcl.field.coarse)
    assert np.allclose(scores, full[kept], rtol=1e-12, atol=1e-9)  # kept ones on all beams
    assert set(range(5)) <= set(kept.tolist())  # the poses at the robot
    dropped = np.setdiff1d(np.arange(len(candidates)), kept)
    # each dropped one fits worse than the robot's own pose by over a log-unit a beam
    assert full[dropped].max() < full[:5].min() - len(bx)


def test_a_search_standing_still_waits_for_motion_after_a_bounded_number_of_updates() -> None:
    # in one of two identical rooms no view tells where the robot is: standing still, the
    # search updates SEARCH_STILL_UPDATES times on the same view, then only when it moves
    world = _twin_rooms()
    config = load_robot("pioneer3dx")
    pose = (1.5, 2.0, 0.3)
    sim = Simulator(config, world, seed=2, pose=pose)
    sim.sample_laser(0.0)
    assert sim.latest_laser is not None
    ranges = sim.latest_laser.ranges
    mcl = MonteCarloLocalization.for_robot(world, config, seed=2)
    mcl.global_init()
    updated = [mcl.update(ranges, force=True) for _ in range(SEARCH_STILL_UPDATES + 20)]
    assert mcl.searching
    # the first scan of a search screens its candidates; then the bounded updates on one view
    assert updated == [True] * (SEARCH_STILL_UPDATES + 1) + [False] * 19
    particles = mcl.particles.copy()
    assert not mcl.update(ranges, force=True)
    assert np.array_equal(mcl.particles, particles)  # a refused update touches nothing
    mcl.predict(mcl.config.mcl_update_min_d, 0.0, 0.0)
    assert mcl.update(ranges)  # moved: the search goes on
    assert mcl.update(ranges, force=True)  # and may again update on the new view


def test_a_skid_steers_turn_blurs_the_particles_sideways_not_along() -> None:
    # turning on the spot, a tracked body slides sideways by centimetres: the cloud spreads
    # across the heading by mcl_lateral_noise per radian turned, and with 0 not at all
    pose = (3.0, 3.0, 0.0)
    spreads = {}
    for lateral in (0.0, 0.15):
        mcl, _ = _setup("lab", pose)
        mcl.config = mcl.config.model_copy(update={"mcl_lateral_noise": lateral})
        mcl.alphas = (0.0, 0.0, 0.0, 0.0)  # the odometry model's own noise off
        mcl.initialize(*pose, std_xy=0.0, std_theta=0.0)
        mcl.predict(0.0, 0.0, 0.5)  # half a radian on the spot, facing +x to +0.5 rad
        mcl._apply_motion()
        mid = 0.25  # the heading halfway through the turn: sideways is (-sin, cos) of it
        across = -(mcl.particles[:, 0] - pose[0]) * math.sin(mid) + (
            mcl.particles[:, 1] - pose[1]
        ) * math.cos(mid)
        along = (mcl.particles[:, 0] - pose[0]) * math.cos(mid) + (
            mcl.particles[:, 1] - pose[1]
        ) * math.sin(mid)
        spreads[lateral] = (float(np.std(across)), float(np.max(np.abs(along))))
    assert spreads[0.0] == (0.0, 0.0)
    across, along = spreads[0.15]
    assert across == pytest.approx(0.15 * 0.5, rel=0.1)
    assert along < 1e-12
