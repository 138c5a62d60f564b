"""The arm-fuzz experiment's judge of contact: the URDF's visual geometry, placed by its own
forward kinematics and tested with python-fcl, apart from the check it judges.

The anti-collision check works on :func:`freelook.arm.load_arm`'s boxes (the URDF's collision
geometry, padded) and the SRDF's pairs. The judge reads the URDF again with yourdfpy, takes
every link's *visual* geometry (boxes, cylinders, spheres, meshes), places it with a forward
kinematics of its own (the joints' origins, axes and mimics as the URDF gives them), and asks
fcl whether two links' shapes meet. It judges every pair of links that can move against each
other, not only the pairs the check is given: a pair the SRDF leaves out (``Never``) is
judged too, and counted apart. Left out are only pairs that cannot meet by motion: links in
one rigid group, a link and its parent, and pairs already touching in the resting pose (as a
setup assistant would mark them ``Default``). Shapes are in contact when they reach into each
other by more than a millimetre: faces that only touch are not.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from freelook.arm import ArmModel

__all__ = ["ContactJudge", "Contacts"]

F64 = npt.NDArray[np.float64]

DEPTH = 0.001  # m two shapes must reach into each other to be in contact


@dataclass(frozen=True)
class Contacts:
    """The link pairs in contact at one pose: those the check is given, and the others."""

    checked: tuple[tuple[str, str], ...]
    unchecked: tuple[tuple[str, str], ...]


def _fcl() -> Any:
    try:
        import fcl
    except ImportError:  # a dev dependency: say what to install
        raise RuntimeError(
            "the arm-fuzz contact judge needs python-fcl: pip install -e '.[dev]'"
        ) from None
    return fcl


_EYE = np.eye(4)


def _unit(axis: Any) -> F64:
    v = np.asarray(axis, dtype=np.float64)
    return np.asarray(v / np.linalg.norm(v))


def _axis_motion(kind: str, axis: F64, value: float) -> F64:
    """A joint's motion by ``value`` along or about its unit ``axis``."""
    t = _EYE.copy()
    if kind in ("revolute", "continuous"):
        x, y, z = axis
        c, s = math.cos(value), math.sin(value)
        k = np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])
        t[:3, :3] += s * k + (1 - c) * (k @ k)
    elif kind == "prismatic":
        t[:3, 3] = axis * value
    return t


class ContactJudge:
    """Contacts of an arm's links at joint vectors ``q`` (the model's joint order)."""

    def __init__(self, urdf: Path, model: ArmModel) -> None:
        import yourdfpy

        fcl = _fcl()
        self._fcl = fcl
        robot = yourdfpy.URDF.load(str(urdf), load_meshes=True, build_scene_graph=False)
        self._joints = list(robot.robot.joints)
        children = {j.child for j in self._joints}
        roots = [link.name for link in robot.robot.links if link.name not in children]
        self._root = roots[0]
        self._order = self._topological()
        self._kinematics = [
            (
                joint,
                joint.origin if joint.origin is not None else _EYE,
                _unit(joint.axis if joint.axis is not None else (1.0, 0.0, 0.0)),
            )
            for joint in self._order
        ]
        self._q_index = {name: k for k, name in enumerate(model.joint_names)}
        self._shapes: list[tuple[str, F64, Any]] = []  # (link, origin in link, fcl object)
        boxes = []  # each shape's bounding box in its own frame: centre, half sizes
        for link in robot.robot.links:
            for visual in link.visuals:
                shape = self._geometry(visual.geometry, urdf.parent)
                if shape is not None:
                    origin = visual.origin if visual.origin is not None else np.eye(4)
                    self._shapes.append((link.name, origin, fcl.CollisionObject(shape[0])))
                    boxes.append(shape[1])
        links = sorted({name for name, _, _ in self._shapes})
        group = self._rigid_groups()
        parent = {j.child: j.parent for j in self._joints}
        checked = {tuple(sorted(p)) for p in model.pair_names}
        rest = self._touching(model.ready, [(a, b) for a, b in itertools.combinations(links, 2)])
        judged = [
            (a, b)
            for a, b in itertools.combinations(links, 2)
            if group[a] != group[b]
            and parent.get(a) != b
            and parent.get(b) != a
            and (a, b) not in rest
        ]
        self.checked_pairs = tuple(p for p in judged if p in checked)
        self.unchecked_pairs = tuple(p for p in judged if p not in checked)
        self._judged = set(judged)
        self._checked = set(self.checked_pairs)
        # the broad phase: each shape's bounding box in its own frame (centre, half sizes);
        # only judged shape pairs whose world boxes overlap go to fcl
        self._local = np.array(boxes).reshape(-1, 6)
        index = [(i, j) for i, j in itertools.combinations(range(len(self._shapes)), 2)]
        keep = [
            (i, j)
            for i, j in index
            if tuple(sorted((self._shapes[i][0], self._shapes[j][0]))) in self._judged
        ]
        self._pa = np.array([i for i, _ in keep], dtype=np.int64)
        self._pb = np.array([j for _, j in keep], dtype=np.int64)

    # -- the model ---------------------------------------------------------------------------

    def _topological(self) -> list[Any]:
        order, frontier = [], [self._root]
        while frontier:
            link = frontier.pop()
            for joint in self._joints:
                if joint.parent == link:
                    order.append(joint)
                    frontier.append(joint.child)
        return order

    def _rigid_groups(self) -> dict[str, int]:
        """Links joined by fixed joints share a number."""
        group = {self._root: 0}
        count = 1
        for joint in self._order:
            if joint.type == "fixed":
                group[joint.child] = group[joint.parent]
            else:
                group[joint.child] = count
                count += 1
        return group

    def _geometry(self, geometry: Any, base: Path) -> tuple[Any, F64] | None:
        """An fcl shape for a URDF geometry, and its bounding box in its own frame (centre,
        half sizes); None for a geometry without a shape."""
        fcl = self._fcl
        if geometry.box is not None:
            size = np.asarray(geometry.box.size, dtype=float)
            return fcl.Box(*size), np.concatenate([np.zeros(3), size / 2])
        if geometry.cylinder is not None:
            r, length = float(geometry.cylinder.radius), float(geometry.cylinder.length)
            return fcl.Cylinder(r, length), np.array([0, 0, 0, r, r, length / 2])
        if geometry.sphere is not None:
            r = float(geometry.sphere.radius)
            return fcl.Sphere(r), np.array([0, 0, 0, r, r, r])
        if geometry.mesh is not None:
            import trimesh
            import yourdfpy

            name = yourdfpy.filename_handler_magic(geometry.mesh.filename, dir=str(base))
            mesh: Any = trimesh.load(name, force="mesh")
            scale = geometry.mesh.scale
            vertices: F64 = np.asarray(mesh.vertices, dtype=np.float64)
            if scale is not None:
                vertices = vertices * np.asarray(scale, dtype=np.float64)
            faces = np.asarray(mesh.faces, dtype=np.int64)
            low, high = vertices.min(axis=0), vertices.max(axis=0)
            model = fcl.BVHModel()
            model.beginModel(len(vertices), len(faces))
            model.addSubModel(vertices, faces)
            model.endModel()
            return model, np.concatenate([(low + high) / 2, (high - low) / 2])
        return None

    def _frames(self, q: F64) -> dict[str, F64]:
        """Every link's frame in the root's, at ``q``."""
        frames = {self._root: _EYE}
        for joint, origin, axis in self._kinematics:
            placed = frames[joint.parent] @ origin
            if joint.type != "fixed":
                source = joint.mimic.joint if joint.mimic is not None else joint.name
                value = float(q[self._q_index[source]])
                if joint.mimic is not None:
                    value = value * float(joint.mimic.multiplier or 1.0) + float(
                        joint.mimic.offset or 0.0
                    )
                placed = placed @ _axis_motion(joint.type, axis, value)
            frames[joint.child] = placed
        return frames

    def _place(self, q: F64) -> F64:
        """Every shape placed at ``q``; their poses (N×4×4)."""
        frames = self._frames(q)
        poses = np.empty((len(self._shapes), 4, 4))
        for k, (link, origin, obj) in enumerate(self._shapes):
            pose = frames[link] @ origin
            obj.setTransform(self._fcl.Transform(pose[:3, :3], pose[:3, 3]))
            poses[k] = pose
        return poses

    def _touching(self, q: F64, pairs: list[tuple[str, str]]) -> set[tuple[str, str]]:
        self._place(q)
        fcl = self._fcl
        by_link: dict[str, list[Any]] = {}
        for link, _, obj in self._shapes:
            by_link.setdefault(link, []).append(obj)
        out = set()
        request = fcl.CollisionRequest()
        for a, b in pairs:
            for oa in by_link[a]:
                if any(fcl.collide(oa, ob, request, fcl.CollisionResult()) for ob in by_link[b]):
                    out.add((a, b))
                    break
        return out

    @staticmethod
    def _deep(result: Any) -> bool:
        """Whether the shapes reach into each other more than :data:`DEPTH` (faces that only
        touch, a turret's underside sliding on the lid below it, are no contact)."""
        return any(c.penetration_depth > DEPTH for c in result.contacts)

    # -- judging -----------------------------------------------------------------------------

    def contacts(self, q: F64) -> Contacts:
        """The judged pairs whose visual shapes meet at ``q``."""
        fcl = self._fcl
        poses = self._place(q)
        rotations, origins = poses[:, :3, :3], poses[:, :3, 3]
        centres = origins + np.einsum("nij,nj->ni", rotations, self._local[:, :3])
        reach = np.einsum("nij,nj->ni", np.abs(rotations), self._local[:, 3:])
        low, high = centres - reach, centres + reach
        a, b = self._pa, self._pb
        near = np.all((low[a] <= high[b]) & (low[b] <= high[a]), axis=1)
        touching: set[tuple[str, str]] = set()
        request = fcl.CollisionRequest(num_max_contacts=8, enable_contact=True)
        for i, j in zip(a[near].tolist(), b[near].tolist(), strict=True):
            pair = tuple(sorted((self._shapes[i][0], self._shapes[j][0])))
            if pair in touching:
                continue
            oa, ob = self._shapes[i][2], self._shapes[j][2]
            result = fcl.CollisionResult()
            if fcl.collide(oa, ob, request, result) and self._deep(result):
                touching.add((pair[0], pair[1]))
        return Contacts(
            tuple(sorted(p for p in touching if p in self._checked)),
            tuple(sorted(p for p in touching if p not in self._checked)),
        )
