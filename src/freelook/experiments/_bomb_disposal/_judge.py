"""What a bomb-disposal trial is judged on, which the robot never reads: the base's footprint
against the box, the arm's collision boxes against the objects, and the object sightings
against the box's true place."""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmModel, box_poses
from freelook.autonomy import Sighting
from freelook.config import FootprintConfig
from freelook.geometry import Pose
from freelook.maps import World
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
        """Whether, the arm at ``q`` on the base at ``base``, a moving arm box's centre or
        corner lies inside a fixed object, or one of the arm's boxes but its fingers inside the
        box the gripper does not hold."""
        model, boxes = self.model, self.arm_boxes
        centres, rotations = box_poses(model, q)
        corners = _CORNERS[None] * model.half_extents[boxes][:, None, :]
        pts = centres[boxes][:, None, :] + np.einsum("bij,bkj->bki", rotations[boxes], corners)
        pts = pts.reshape(-1, 3)
        c, s = math.cos(base.theta), math.sin(base.theta)
        wx = base.x + c * pts[:, 0] - s * pts[:, 1]
        wy = base.y + s * pts[:, 0] + c * pts[:, 1]
        wz = pts[:, 2]
        for obj in self.world.objects:
            if obj.movable:
                continue
            if np.any(obj.contains(wx, wy) & (wz < obj.height)):
                return True
        if box.held:
            return False
        keep = np.repeat(np.isin(boxes, self.arm_boxes_free), len(_CORNERS))
        wx, wy, wz = wx[keep], wy[keep], wz[keep]
        dx, dy = wx - box.centre[0], wy - box.centre[1]
        cy, sy = math.cos(box.yaw), math.sin(box.yaw)
        u, w = cy * dx + sy * dy, -sy * dx + cy * dy
        inside = (np.abs(u) < box.size[0] / 2) & (np.abs(w) < box.size[1] / 2) & (wz < box.size[2])
        return bool(np.any(inside))

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
