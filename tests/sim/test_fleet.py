"""The fleet: N robots stepped together move and scan exactly as N single-robot simulators."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.config import RobotConfig, load_robot, physical_robot
from freelook.experiments._added_laser import with_added_laser
from freelook.maps import load_world
from freelook.sim import Fleet, Simulator

POSES = [(3.0, 3.0, 0.0), (8.0, 8.0, 1.0), (12.0, 4.0, -2.0), (5.0, 10.0, 2.5)]


def _laser_only(name: str) -> RobotConfig:
    # the FOI UGV with the laser freelook adds to it (its paper's robot had none)
    return with_added_laser(load_robot(name)).model_copy(update={"sonar": None, "gyro": None})


@pytest.mark.parametrize(
    ("name", "error_model"),
    [("pioneer3dx", False), ("foi-ugv", False), ("pioneer3dx", True), ("foi-ugv", True)],
)
def test_each_robot_of_a_fleet_matches_its_own_simulator(name: str, error_model: bool) -> None:
    """With an error model each robot is its own draw (wheels, slip, the laser's true mount and
    its bad returns), in the fleet as in its own simulator."""
    robot, lab = _laser_only(name), load_world("lab")
    seeds = [11, 12, 13, 14]
    truths = [physical_robot(robot, s) if error_model else None for s in seeds]
    fleet = Fleet(robot, lab, POSES, seeds=seeds, truths=truths)
    sims = [
        Simulator(robot, lab, seed=s, pose=p, truth=t)
        for s, p, t in zip(seeds, POSES, truths, strict=True)
    ]
    rng = np.random.default_rng(5)
    vmax = robot.drive.max_wheel_speed
    for _ in range(25):  # 10 s in 0.4 s blocks; the blocks do not align with laser periods
        left, right = rng.uniform(-0.2, 1.0, (2, len(sims))) * vmax
        fleet.set_wheel_speeds(left, right)
        for sim, vl, vr in zip(sims, left, right, strict=True):
            sim.set_wheel_speeds(vl, vr)
            sim.run_for(0.4)
        fleet.run_for(0.4)
        assert fleet.now() == pytest.approx(sims[0].now)
        for i, sim in enumerate(sims):
            truth = sim.ground_truth
            np.testing.assert_allclose(
                fleet.poses[i], (truth.x, truth.y, truth.theta), rtol=0, atol=1e-9
            )
            assert sim.latest_laser is not None
            assert fleet.scan_stamp == sim.latest_laser.stamp
            np.testing.assert_allclose(fleet.ranges[i], sim.latest_laser.ranges, rtol=0, atol=1e-9)
            assert fleet.contacts[i] == sim.vehicle.contacts
    assert fleet.contacts.sum() > 0  # walls were met: the stall path was compared too
    assert fleet.scans == 750  # 75 Hz for 10 s
    if error_model:  # the draws differ from robot to robot, and from the description
        assert len({t.left_wheel for t in truths if t is not None}) == len(seeds)
        described = Fleet(robot, lab, POSES, seeds=seeds)
        described.set_wheel_speeds(0.5, 0.4)
        fleet.set_wheel_speeds(0.5, 0.4)
        described.run_for(2.0)
        fleet.run_for(2.0)
        assert not np.allclose(described.poses, fleet.poses, atol=1e-3)


def test_steps_of_any_length_keep_each_robot_on_its_own_noise() -> None:
    """Short and long steps mixed: the normals drawn ahead for a short step are the first ones
    a longer step reads (the fleet draws in blocks, a single simulator as it goes)."""
    robot, lab = _laser_only("pioneer3dx"), load_world("lab")
    fleet = Fleet(robot, lab, POSES[:2], seeds=[3, 4])
    sims = [Simulator(robot, lab, seed=s, pose=p) for s, p in zip([3, 4], POSES[:2], strict=True)]
    for seconds in (0.02, 0.3, 2.5, 0.01, 4.0, 0.5):
        fleet.set_wheel_speeds(0.4, 0.3)
        fleet.run_for(seconds)
        for i, sim in enumerate(sims):
            sim.set_wheel_speeds(0.4, 0.3)
            sim.run_for(seconds)
            assert sim.latest_laser is not None
            np.testing.assert_allclose(fleet.ranges[i], sim.latest_laser.ranges, rtol=0, atol=1e-9)
            truth = sim.ground_truth
            np.testing.assert_allclose(
                fleet.poses[i], (truth.x, truth.y, truth.theta), rtol=0, atol=1e-9
            )


def test_fleet_rejects_mismatched_inputs() -> None:
    robot, lab = _laser_only("pioneer3dx"), load_world("lab")
    with pytest.raises(ValueError, match="at least one robot"):
        Fleet(robot, lab, [])
    with pytest.raises(ValueError, match="2 poses but 1 seeds"):
        Fleet(robot, lab, POSES[:2], seeds=[1])
    with pytest.raises(ValueError, match="physics period"):
        Fleet(robot, lab, POSES[:1], physics_period=0.01)
    with pytest.raises(ValueError, match="overlaps an obstacle"):
        Fleet(robot, lab, [(0.0, 0.0, 0.0)])


def test_wheel_commands_are_clamped_and_broadcast() -> None:
    robot, lab = _laser_only("pioneer3dx"), load_world("lab")
    fleet = Fleet(robot, lab, POSES)
    fleet.set_wheel_speeds(10.0, -10.0)
    fleet.run_for(1.0)
    distances = fleet.wheel_distances
    vmax = robot.drive.max_wheel_speed
    assert np.all(distances[:, 0] > 0)
    assert np.all(distances[:, 1] < 0)
    assert np.all(np.abs(distances) <= vmax * 1.0 + 1e-9)
    assert len(fleet) == len(POSES)


def test_ray_casting_workers_change_nothing_but_the_speed() -> None:
    robot, lab = _laser_only("pioneer3dx"), load_world("lab")
    runs = []
    for workers in (1, 3):
        with Fleet(robot, lab, POSES, seeds=[1, 2, 3, 4], workers=workers) as fleet:
            fleet.set_wheel_speeds(0.5, 0.6)
            fleet.run_for(1.0)
            runs.append((fleet.poses, fleet.ranges.copy()))
    np.testing.assert_array_equal(runs[0][0], runs[1][0])
    np.testing.assert_array_equal(runs[0][1], runs[1][1])
