"""The disposal task's arm (sans-I/O, on the M2P2's description): a phase left mid-move stills
the arm, and the grasp keeps the palm over a tall object's top while the fingers still hold it
(seed 510 on the M2P2: a 0.174 m object, the palm 5.3 cm into its top at the grasp's close)."""

from __future__ import annotations

import numpy as np
import pytest

from freelook.arm import ReachGoal, box_poses, load_arm
from freelook.autonomy import DisposalTask, TaskInputs, Track
from freelook.config import load_robot
from freelook.geometry import Pose
from freelook.robot._autonomy import task_settings
from freelook.types import TaskPhase

CONFIG = load_robot("m2p2")
assert CONFIG.arm is not None
ARM = load_arm(CONFIG.arm.urdf, CONFIG.arm.srdf)


def _task() -> DisposalTask:
    return DisposalTask(task_settings(CONFIG, ARM), ARM)


def _inputs(q: np.ndarray, seen: Track | None = None) -> TaskInputs:
    return TaskInputs(Pose(0.0, 0.0, 0.0), -0.2, 0.0, q, False, seen, None, 0.2, 0.5)


def _lowest(q: np.ndarray, boxes: np.ndarray) -> float:
    centres, rotations = box_poses(ARM, q)
    down = np.abs(rotations[boxes, 2, :]) * ARM.half_extents[boxes]
    return float(np.min(centres[boxes, 2] - down.sum(axis=1)))


def test_the_object_seen_while_the_arm_stows_stills_the_arm() -> None:
    """The arm keeps the last velocities it was given; the search's stow cut short by a
    sighting left the M2P2's shoulder running through the approach into its stop (2.618 rad),
    and the open-loop count, unwinding 2.2 rad to the grasp, put the tool 5.7 cm under it."""
    task = _task()
    task.start(0.0)
    q = ARM.ready.copy()
    moving = task.step(0.0, _inputs(q))
    assert moving.arm is not None
    assert np.any(moving.arm)  # stowing
    seen = Track(3.0, 0.0, 0.09, 0.17, 0.01, 3, 0.17)
    command = task.step(0.01, _inputs(q, seen))
    assert task.phase == TaskPhase.APPROACH_OBJECT
    assert command.arm == pytest.approx((0.0,) * len(ARM.arm_joints))


@pytest.mark.parametrize("height", [0.15, 0.174, 0.18])
def test_the_grasp_keeps_the_palm_over_the_object_and_the_fingers_on_it(height: float) -> None:
    """The grasp's goal rises until the palm is 3 cm over the object's top; the fingers still
    reach 3 cm down its sides. Capped at 5 cm over the object's middle (as it was), the palm
    stood 0.173 m over seed 510's 0.174 m object at the planned pose."""
    task = _task()
    s = task.settings
    over = task.planner.plan(ARM.ready, ReachGoal((0.98, 0.0, height + s.pregrasp_height)))
    goal = task._grasp_height(over.poses[-1], (0.98, 0.0, height / 2), height)
    end = task.planner.plan(over.poses[-1], ReachGoal(goal)).poses[-1]
    jaws = np.array([k for k, link in enumerate(ARM.box_links) if link.startswith("jaw")])
    assert _lowest(end, task._palm) >= height + 0.03 - 2e-3
    assert height - _lowest(end, jaws) >= 0.03
    assert goal[2] > height / 2 + 0.05  # above where the old cap held it
