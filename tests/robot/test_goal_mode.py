"""Click-to-go on the robot: the whole robot program against the simulator (lock-step), given a
goal as the link delivers it. It drives there straight when the way is clear, around a box its
laser sees when not, never into what it sees, and ends when reached; the e-stop refuses a goal
and takes over from one; a drive command takes over at once; no way at all: it gives up."""

from __future__ import annotations

import math

import numpy as np

from freelook.config import RobotConfig, load_robot
from freelook.hardware.sim import SimulatedRobot
from freelook.link import EStop, GoalStart, GoalStop, Heartbeat, VelocityCommand
from freelook.maps import World
from freelook.types import Mode, SafetyFlags

CONFIG = load_robot("pioneer3dx")
STEP = 0.05  # s between the station's messages (a heartbeat feeds the watchdog)


def floor(*, box: bool = False, wall: bool = False) -> World:
    """A 12 × 12 m walled floor; ``box``: 0.6 × 1.0 m centred at (2, 0); ``wall``: a wall
    across the whole floor at x = 2."""
    res, size = 0.05, 12.0
    n = round(size / res)
    grid = np.zeros((n, n), dtype=bool)
    grid[0, :] = grid[-1, :] = grid[:, 0] = grid[:, -1] = True
    centres = np.arange(n) * res - size / 2 + res / 2
    x, y = np.meshgrid(centres, centres)
    if box:
        grid |= (np.abs(x - 2.0) < 0.3) & (np.abs(y) < 0.5)
    if wall:
        grid |= np.abs(x - 2.0) < 0.1
    return World("floor", grid, res, (-size / 2, -size / 2))


def robot(world: World, config: RobotConfig = CONFIG) -> SimulatedRobot:
    return SimulatedRobot(config, world, seed=3, pose=(0.0, 0.0, 0.0), use_localization=False)


def drive(
    r: SimulatedRobot, seconds: float, flags: set[SafetyFlags] | None = None
) -> list[tuple[float, float]]:
    """Heartbeats for ``seconds`` while the robot is in GOAL mode; its true path (and into
    ``flags`` what safety did on the way)."""
    path = []
    for _ in range(round(seconds / STEP)):
        r.send(Heartbeat())
        r.run_for(STEP)
        truth = r.sim.ground_truth
        path.append((truth.x, truth.y))
        if flags is not None:
            flags.update(f for f in SafetyFlags if f and f in r.core.control.last_output.flags)
        if r.core.modes.mode != Mode.GOAL:
            break
    return path


def test_a_clear_goal_is_driven_to_straight_and_reached_within_tolerance() -> None:
    r = robot(floor())
    r.send(GoalStart(3.0, 1.0))
    assert r.core.modes.mode == Mode.GOAL
    path = drive(r, 40.0)
    goal = r.core.modes.goal
    assert goal.outcome == "reached"
    assert r.core.modes.mode == Mode.IDLE  # it ends on its own
    x, y, _ = r.core.estimator.pose
    assert math.hypot(x - 3.0, y - 1.0) <= CONFIG.goal.tolerance
    end = path[-1]
    assert math.hypot(end[0] - 3.0, end[1] - 1.0) < CONFIG.goal.tolerance + 0.05  # the truth
    # straight: every point within 10 cm of the line from the start to the goal
    off = [abs(px * 1.0 - py * 3.0) / math.hypot(3.0, 1.0) for px, py in path]
    assert max(off) < 0.1
    speeds = np.hypot(*np.diff(np.array(path).T)) / STEP
    assert speeds.max() <= CONFIG.limits.linear_max_speed + 0.02  # the linear drive's limit
    assert goal.drive is None
    assert r.sim.vehicle.contacts == 0
    assert "click-to-go: goal reached" in r.core.log.notices


def test_a_box_in_the_way_is_driven_round_as_the_laser_sees_it() -> None:
    r = robot(floor(box=True))
    r.send(GoalStart(4.0, 0.0))  # straight through the box
    going = r.core.modes.goal.drive
    assert going is not None
    acted: set[SafetyFlags] = set()
    path = np.array(drive(r, 90.0, acted))
    goal = r.core.modes.goal
    assert goal.outcome == "reached", r.core.estimator.pose
    assert math.hypot(path[-1, 0] - 4.0, path[-1, 1]) < CONFIG.goal.tolerance + 0.05
    beside = path[np.abs(path[:, 0] - 2.0) < 0.3]  # passing the box
    assert len(beside)
    assert np.abs(beside[:, 1]).min() > 0.5 + CONFIG.footprint.width / 2
    assert r.sim.vehicle.contacts == 0
    assert going.detours >= 1  # it turned off the way to the goal, not through the box
    assert SafetyFlags.ZONE in acted  # its own safety slowed it past the box, as any mode's


def test_the_estop_refuses_a_goal_and_takes_over_from_one() -> None:
    r = robot(floor())
    r.send(EStop(True))
    r.send(GoalStart(3.0, 0.0))
    assert r.core.modes.mode == Mode.IDLE
    assert any("e-stop" in why for why in r.core.log.rejections)
    drive(r, 1.0)
    assert r.sim.ground_truth.x < 0.01  # never moved
    r.send(EStop(False))
    r.send(GoalStart(3.0, 0.0))
    drive(r, 3.0)
    assert r.core.modes.mode == Mode.GOAL
    moving = r.sim.ground_truth.x
    assert moving > 0.3
    r.send(EStop(True))
    drive(r, 2.0)
    assert r.core.modes.mode == Mode.IDLE
    assert r.core.modes.goal.drive is None
    r.send(EStop(False))
    drive(r, 2.0)  # released: the goal does not come back
    assert r.sim.ground_truth.x - moving < 0.3  # braked within what 0.4 m/s leaves


def test_a_drive_command_or_a_stop_takes_over_and_a_new_goal_replaces_the_old() -> None:
    r = robot(floor())
    r.send(GoalStart(4.0, 0.0))
    drive(r, 3.0)
    r.send(GoalStart(0.0, 3.0))  # replaces it: the robot turns to the new one
    drive(r, 4.0)
    assert r.core.modes.mode == Mode.GOAL
    assert (r.core.modes.goal.drive.x, r.core.modes.goal.drive.y) == (0.0, 3.0)
    heading = r.core.estimator.pose[2]
    assert heading > math.radians(60)  # faces back toward (0, 3)
    r.send(VelocityCommand(0.0, 0.0))
    assert r.core.modes.mode == Mode.VELOCITY
    assert r.core.modes.goal.drive is None
    r.send(GoalStart(3.0, 3.0))
    r.send(GoalStop())
    assert r.core.modes.mode == Mode.IDLE


def test_no_way_to_the_goal_stops_short_of_what_it_sees_and_gives_up() -> None:
    config = CONFIG.model_copy(update={"goal": CONFIG.goal.model_copy(update={"give_up": 8.0})})
    r = robot(floor(wall=True), config)
    r.send(GoalStart(4.0, 0.0))
    path = np.array(drive(r, 60.0))
    assert r.core.modes.goal.outcome == "given up"
    assert "click-to-go: goal given up" in r.core.log.notices
    assert r.core.modes.mode == Mode.IDLE
    front = CONFIG.footprint.center_forward + CONFIG.footprint.length / 2
    assert path[:, 0].max() + front < 1.9  # never touched the wall (its face at x = 1.9)
    assert r.sim.vehicle.contacts == 0


def test_a_goal_too_far_is_refused_with_its_distance() -> None:
    r = robot(floor())
    r.send(GoalStart(40.0, 0.0))
    assert r.core.modes.mode == Mode.IDLE
    assert any("40.0 m away" in why for why in r.core.log.rejections)
