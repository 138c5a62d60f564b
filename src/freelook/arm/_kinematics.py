"""Forward kinematics of every link and box, compiled and batched over poses.

``q`` is one pose (J,) or a batch (B, J); results carry the same leading batch axis. A link's
frame is its parent's frame times the joint origin times the joint motion (a rotation about
the axis for a revolute joint, a shift along it for a prismatic one); a box's frame is its
link's frame times the collision origin. Rotations are 3×3 with the box's axes as columns.
"""

from __future__ import annotations

import math

import numba
import numpy as np
import numpy.typing as npt

from freelook.arm._model import PRISMATIC, REVOLUTE, ArmModel

__all__ = ["box_poses", "link_transforms", "tool_pose"]

F64 = npt.NDArray[np.float64]


@numba.njit(cache=True, nogil=True, inline="always")
def _mul(a: F64, b: F64, out: F64) -> None:
    """out = a @ b for 4×4 rigid transforms (last row 0 0 0 1)."""
    for r in range(3):
        for c in range(4):
            out[r, c] = a[r, 0] * b[0, c] + a[r, 1] * b[1, c] + a[r, 2] * b[2, c]
        out[r, 3] += a[r, 3]
    out[3, 0] = 0.0
    out[3, 1] = 0.0
    out[3, 2] = 0.0
    out[3, 3] = 1.0


@numba.njit(cache=True, nogil=True)
def fk_kernel(
    q: F64,
    parent: npt.NDArray[np.int64],
    origin: F64,
    axis: F64,
    kind: npt.NDArray[np.int64],
    link_q: npt.NDArray[np.int64],
    scale: F64,
    offset: F64,
    links: F64,
) -> None:
    """Fill ``links`` (B, L, 4, 4) with every link's frame for each pose of ``q`` (B, J)."""
    motion = np.eye(4)
    local = np.eye(4)
    for b in range(q.shape[0]):
        for i in range(parent.shape[0]):
            if kind[i] == REVOLUTE or kind[i] == PRISMATIC:
                v = scale[i] * q[b, link_q[i]] + offset[i]
                x, y, z = axis[i, 0], axis[i, 1], axis[i, 2]
                for r in range(3):
                    for c in range(4):
                        motion[r, c] = 1.0 if r == c else 0.0
                if kind[i] == REVOLUTE:
                    c_, s_ = math.cos(v), math.sin(v)
                    t = 1.0 - c_
                    motion[0, 0] = c_ + x * x * t
                    motion[0, 1] = x * y * t - z * s_
                    motion[0, 2] = x * z * t + y * s_
                    motion[1, 0] = y * x * t + z * s_
                    motion[1, 1] = c_ + y * y * t
                    motion[1, 2] = y * z * t - x * s_
                    motion[2, 0] = z * x * t - y * s_
                    motion[2, 1] = z * y * t + x * s_
                    motion[2, 2] = c_ + z * z * t
                else:
                    motion[0, 3] = x * v
                    motion[1, 3] = y * v
                    motion[2, 3] = z * v
                _mul(origin[i], motion, local)
            else:
                local[:, :] = origin[i]
            if parent[i] >= 0:
                _mul(links[b, parent[i]], local, links[b, i])
            else:
                links[b, i, :, :] = local


@numba.njit(cache=True, nogil=True)
def boxes_kernel(
    links: F64, box_link: npt.NDArray[np.int64], box_origin: F64, centres: F64, rotations: F64
) -> None:
    """Fill ``centres`` (B, N, 3) and ``rotations`` (B, N, 3, 3) from the link frames."""
    frame = np.eye(4)
    for b in range(links.shape[0]):
        for k in range(box_link.shape[0]):
            _mul(links[b, box_link[k]], box_origin[k], frame)
            for r in range(3):
                centres[b, k, r] = frame[r, 3]
                for c in range(3):
                    rotations[b, k, r, c] = frame[r, c]


def _batch(model: ArmModel, q: F64) -> tuple[F64, bool]:
    arr = np.ascontiguousarray(q, dtype=np.float64)
    single = arr.ndim == 1
    arr = arr.reshape(-1, model.n_joints)
    return arr, single


def _links(model: ArmModel, q: F64) -> F64:
    links = np.empty((q.shape[0], len(model.link_names), 4, 4))
    fk_kernel(
        q, model.link_parent, model.link_origin, model.link_axis, model.link_kind,
        model.link_q, model.link_scale, model.link_offset, links,
    )  # fmt: skip
    return links


def link_transforms(model: ArmModel, q: F64) -> F64:
    """Every link's frame in the root frame: (L, 4, 4) for one pose, (B, L, 4, 4) for a batch."""
    arr, single = _batch(model, q)
    links = _links(model, arr)
    return links[0] if single else links


def box_poses(model: ArmModel, q: F64) -> tuple[F64, F64]:
    """Box centres (…, N, 3) and rotations (…, N, 3, 3) in the root frame."""
    arr, single = _batch(model, q)
    links = _links(model, arr)
    centres = np.empty((arr.shape[0], model.n_boxes, 3))
    rotations = np.empty((arr.shape[0], model.n_boxes, 3, 3))
    boxes_kernel(links, model.box_link, model.box_origin, centres, rotations)
    if single:
        return centres[0], rotations[0]
    return centres, rotations


def tool_pose(model: ArmModel, q: F64) -> F64:
    """The end effector's frame (4, 4) or frames (B, 4, 4) in the root frame."""
    arr, single = _batch(model, q)
    frames = _links(model, arr)[:, model.tool_link]
    return frames[0] if single else frames
