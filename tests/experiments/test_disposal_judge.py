"""The bomb-disposal judge on the simulator's truth: the base on the box, the arm inside an
object, a sighting away from the box."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from freelook.arm import box_poses, load_arm
from freelook.autonomy import Sighting
from freelook.config import load_robot
from freelook.experiments._bomb_disposal import eod_scenario
from freelook.experiments._bomb_disposal._judge import TruthJudge
from freelook.geometry import Pose
from freelook.maps import World, WorldObject
from freelook.sim.arm import ArmObject, objects_from_world


def _judge(world: World | None = None) -> tuple[TruthJudge, World, ArmObject]:
    scenario = eod_scenario(5, "taros")
    world = world or scenario.world
    config = load_robot("taros")
    assert config.arm is not None
    model = load_arm(config.arm.urdf, config.arm.srdf)
    box = next(o for o in objects_from_world(world) if o.name == "suspicious object")
    return TruthJudge(model, config.footprint, world), world, box


def _sighting(x: float, y: float) -> Sighting:
    return Sighting(x, y, math.hypot(x, y), math.atan2(y, x), 0.2, 0.2, 100)


def test_the_base_on_the_box_counts_unless_the_gripper_holds_it() -> None:
    judge, _, box = _judge()
    on = Pose(float(box.centre[0]), float(box.centre[1]), 0.3)
    assert judge.base_on_box(on, box)
    assert not judge.base_on_box(Pose(on.x + 3.0, on.y, 0.0), box)
    box.held = True
    assert not judge.base_on_box(on, box)


def test_a_sighting_counts_as_false_more_than_half_a_metre_from_the_true_box() -> None:
    judge, _, box = _judge()
    base = Pose(float(box.centre[0]) - 2.0, float(box.centre[1]), 0.0)
    assert not judge.false_sighting([_sighting(2.0, 0.0)], base, box)
    assert not judge.false_sighting([_sighting(2.0, 0.4)], base, box)
    assert judge.false_sighting([_sighting(2.0, 0.0), _sighting(2.0, 0.6)], base, box)
    assert not judge.false_sighting([], base, box)
    turned = Pose(float(box.centre[0]), float(box.centre[1]) - 2.0, math.pi / 2)
    assert not judge.false_sighting([_sighting(2.0, 0.0)], turned, box)  # ahead is +y now


def test_the_arm_inside_a_fixed_object_or_the_box_it_does_not_hold_is_a_hit() -> None:
    judge, world, box = _judge()
    q = judge.model.ready.copy()
    clear = Pose(world.objects[0].x + 50.0, world.objects[0].y, 0.0)  # far from everything
    far_box = dataclasses.replace(box, centre=np.array([clear.x + 50.0, clear.y, 0.1]))
    assert not judge.arm_hits(q, clear, far_box)
    wall = WorldObject("wall", "box", clear.x, clear.y, 3.0, (0, 0, 0), size_x=3.0, size_y=3.0)
    walled = dataclasses.replace(world, objects=(*world.objects, wall), _obstacles=None)
    assert TruthJudge(judge.model, judge.footprint, walled).arm_hits(q, clear, far_box)
    around = ArmObject("box", np.array([clear.x, clear.y, 0.0]), (3.0, 3.0, 3.0))
    assert judge.arm_hits(q, clear, around)
    around.held = True  # the box in the gripper is where the arm is: no hit
    assert not judge.arm_hits(q, clear, around)


def test_an_arm_box_part_way_into_an_object_with_no_corner_inside_is_a_hit() -> None:
    # a thin post through an arm box off its centre: none of the box's corners or its centre
    # lies inside it (what the judge once sampled), but the two intersect
    judge, world, box = _judge()
    q = judge.model.ready.copy()
    clear = Pose(world.objects[0].x + 50.0, world.objects[0].y, 0.0)
    far_box = dataclasses.replace(box, centre=np.array([clear.x + 50.0, clear.y, 0.1]))
    centres, _ = box_poses(judge.model, q)
    free = judge.arm_boxes_free
    b = int(free[np.argmax(judge.model.half_extents[free].min(axis=1))])  # the thickest
    x = clear.x + centres[b][0] + 0.3 * judge.model.half_extents[b].min()
    y, top = clear.y + centres[b][1], centres[b][2] + 1.0
    thin = 0.01
    shapes = [
        WorldObject("post", "box", x, y, top, (0, 0, 0), size_x=thin, size_y=thin),
        WorldObject("post", "cylinder", x, y, top, (0, 0, 0), radius=thin),
    ]
    for post in shapes:
        posted = dataclasses.replace(world, objects=(*world.objects, post), _obstacles=None)
        assert TruthJudge(judge.model, judge.footprint, posted).arm_hits(q, clear, far_box)
    # the box the gripper does not hold, the same
    slab = ArmObject("slab", np.array([x, y, top / 2]), (thin, thin, top))
    assert judge.arm_hits(q, clear, slab)


@pytest.mark.parametrize("robot", ["taros", "m2p2"])
def test_the_fingers_are_not_judged_against_the_box(robot: str) -> None:
    config = load_robot(robot)
    assert config.arm is not None
    model = load_arm(config.arm.urdf, config.arm.srdf)
    judge = TruthJudge(model, config.footprint, eod_scenario(1, robot).world)
    free = set(judge.arm_boxes_free.tolist())
    moving = set(judge.arm_boxes.tolist())
    assert free < moving  # the fingers move with the arm, and are left out
