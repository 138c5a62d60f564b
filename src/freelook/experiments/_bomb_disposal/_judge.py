"""What a bomb-disposal trial is judged on, which the robot never reads: the base's footprint
against the box, the arm's collision boxes against the objects, and the object sightings
against the box's true place."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmModel, box_poses, obb_overlap
from freelook.autonomy import Sighting
from freelook.config import FootprintConfig
from freelook.geometry import Pose
from freelook.maps import World, WorldObject
from freelook.sim.arm import ArmObject

__all__ = ["TruthJudge"]

#: a rectangle: x, y, yaw, half length, half width
Rectangle = tuple[float, float, float, float, float]
#: a box's eight corners and its centre, as signs of its half extents
_CORNERS = np.array(
    [[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)] + [[0, 0, 0]]
)


def _rect_overlap(a: Rectangle, b: Rectangle) -> bool:
    """Whether two rectangles overlap (separating axes)."""

    def corners(r: Rectangle) -> npt.NDArray[np.float64]:
        x, y, t, hl, hw = r
        c, s = math.cos(t), math.sin(t)
        local = np.array([[hl, hw], [hl, -hw], [-hl, -hw], [-hl, hw]])
        return np.asarray(local @ np.array([[c, s], [-s, c]]) + (x, y))

    ca, cb = corners(a), corners(b)
    for t in (a[2], a[2] + math.pi / 2, b[2], b[2] + math.pi / 2):
        axis = np.array([math.cos(t), math.sin(t)])
        pa, pb = ca @ axis, cb @ axis
        if pa.max() < pb.min() or pb.max() < pa.min():
            return False
    return True


def _yaw(theta: float) -> npt.NDArray[np.float64]:
    """The rotation about the vertical by ``theta``."""
    c, s = math.cos(theta), math.sin(theta)
    return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])


def _any_overlap(
    centres: npt.NDArray[np.float64],
    rotations: npt.NDArray[np.float64],
    half: npt.NDArray[np.float64],
    centre: npt.NDArray[np.float64],
    yaw: float,
    extents: npt.NDArray[np.float64],
) -> bool:
    """Whether any of the boxes (centres, rotations, half extents) intersects the upright box
    at ``centre`` turned by ``yaw`` with half ``extents`` (separating axes)."""
    n = len(centres)
    if n == 0:
        return False
    other = np.broadcast_to(np.asarray(centre, dtype=np.float64), (n, 3))
    turn = np.broadcast_to(_yaw(yaw), (n, 3, 3))
    size = np.broadcast_to(np.asarray(extents, dtype=np.float64), (n, 3))
    return bool(np.any(obb_overlap(centres, rotations, half, other, turn, size)))


def _moving_boxes(
    model: ArmModel, joints: npt.NDArray[np.int64] | None = None
) -> npt.NDArray[np.intp]:
    """Indices of the arm's collision boxes that move with ``joints`` (default: the arm's)."""
    q = model.ready.copy()
    a, _ = box_poses(model, q)
    q2 = q.copy()
    q2[model.arm_joints if joints is None else joints] += 0.02
    b, _ = box_poses(model, q2)
    return np.flatnonzero(np.linalg.norm(a - b, axis=1) > 1e-9)


class TruthJudge:
    """Judges one robot in one scene on the simulator's truth."""

    def __init__(self, model: ArmModel, footprint: FootprintConfig, world: World) -> None:
        self.model = model
        self.footprint = footprint
        self.world = world
        self.arm_boxes = _moving_boxes(model)
        # the fingers touch the box they close on: only the rest of the arm counts against it
        fingers = set(_moving_boxes(model, model.gripper_joints).tolist())
        self.arm_boxes_free = np.array([b for b in self.arm_boxes.tolist() if b not in fingers])

    def base_on_box(self, base: Pose, box: ArmObject) -> bool:
        """Whether the footprint of the base at ``base`` overlaps the box (one the gripper
        holds never does)."""
        fp = self.footprint
        return not box.held and _rect_overlap(
            (base.x, base.y, base.theta, fp.length / 2, fp.width / 2),
            (box.centre[0], box.centre[1], box.yaw, box.size[0] / 2, box.size[1] / 2),
        )

    def arm_hits(self, q: npt.NDArray[np.float64], base: Pose, box: ArmObject) -> bool:
        """Whether, the arm at ``q`` on the base at ``base``, a moving arm box intersects a fixed
        object, or one of the arm's boxes but its fingers the box the gripper does not hold.

        Box against box by the separating axes (a palm part-way into an object counts, not
        only a corner inside it); a cylinder by its two inscribed square prisms, or a box's
        corner or centre inside it: a touch either finds is a true one."""
        model, boxes = self.model, self.arm_boxes
        centres, rotations = box_poses(model, q)
        turn = _yaw(base.theta)
        world_centres = centres[boxes] @ turn.T + (base.x, base.y, 0.0)
        world_rotations = np.einsum("ij,bjk->bik", turn, rotations[boxes])
        half = model.half_extents[boxes]
        for obj in self.world.objects:
            if obj.movable:
                continue
            if self._hits_object(obj, world_centres, world_rotations, half):
                return True
        if box.held:
            return False
        free = np.isin(boxes, self.arm_boxes_free)
        target = (box.centre, box.yaw, np.array(box.size) / 2)
        return _any_overlap(world_centres[free], world_rotations[free], half[free], *target)

    @staticmethod
    def _hits_object(
        obj: WorldObject,
        centres: npt.NDArray[np.float64],
        rotations: npt.NDArray[np.float64],
        half: npt.NDArray[np.float64],
    ) -> bool:
        middle = np.array([obj.x, obj.y, obj.height / 2])
        if obj.shape == "box":
            extents = np.array([obj.size_x, obj.size_y, obj.height]) / 2
            return _any_overlap(centres, rotations, half, middle, obj.yaw, extents)
        side = obj.radius / math.sqrt(2.0)  # a square inscribed in the circle, half its side
        extents = np.array([side, side, obj.height / 2])
        for turned in (0.0, math.pi / 4):
            if _any_overlap(centres, rotations, half, middle, turned, extents):
                return True
        pts = centres[:, None, :] + np.einsum(
            "bij,bkj->bki", rotations, _CORNERS[None] * half[:, None, :]
        )
        pts = pts.reshape(-1, 3)
        return bool(np.any(obj.contains(pts[:, 0], pts[:, 1]) & (pts[:, 2] < obj.height)))

    @staticmethod
    def false_sighting(sightings: Iterable[Sighting], base: Pose, box: ArmObject) -> bool:
        """Whether object sightings (in the frame of the base at ``base``) include one more
        than 0.5 m from the true box."""
        for k in sightings:
            c, s = math.cos(base.theta), math.sin(base.theta)
            wx, wy = base.x + c * k.x - s * k.y, base.y + s * k.x + c * k.y
            if math.dist((wx, wy), box.centre[:2]) > 0.5:
                return True
        return False
